/* nsshow.c: the mount namespaces as the administrator and other
 * processes see them (issue 11 item 4): sharectl ns lists them with their
 * roots and processes; sharectl tree --ns PID and a read of
 * /proc/PID/mountinfo show PID's namespace from PID's root, as Linux
 * shows another process's table.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "hold/hold.h"
#include "ns/ns.h"
#include "ns/nsrec.h"

enum { PIDS_SHOWN = 32 };      /* per namespace; the rest are counted */

/* The root of process pid (decimal, as the caller wrote it) as a place of
 * the graph, if the caller may see that process: its root is at or under
 * the caller's, as a jail's own /proc would show it only its processes.
 * Others, and pids that are not there, are -ESRCH. */
int pid_view(struct request *r, const char *pid, struct loc *out, char **buf)
{
	char path[64], *end;
	long v = strtol(pid, &end, 10);
	if (!*pid || *end || *pid == '0' || v <= 0 || v > INT_MAX)
		return -EINVAL;
	snprintf(path, sizeof path, "/proc/%ld/root", v);
	int fd = open(path, O_PATH | O_CLOEXEC), err;
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = fd_within(fd, r->caller.root) ? fd_loc(r->b, fd, out, buf) :
					      -ESRCH;
	close(fd);
	return err;
}

struct members {               /* the processes of one namespace */
	const struct ns *ns;
	unsigned n;
	pid_t pid[PIDS_SHOWN];
};

struct census {                /* every namespace's members */
	struct members *v;
	size_t nv;
};

/* One process, under the namespace its root is in (ns_each_process()). */
static void count_member(void *ctx, pid_t pid, const struct ns *ns)
{
	struct census *c = ctx;
	for (size_t i = 0; i < c->nv; i++)
		if (c->v[i].ns == ns && c->v[i].n++ < PIDS_SHOWN)
			c->v[i].pid[c->v[i].n - 1] = pid;
}

static void put(char *text, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text + *len, LS_TEXT_MAX - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < LS_TEXT_MAX ? *len + (size_t)n :
			LS_TEXT_MAX - 1;
}

static void put_ns(struct broker *b, const struct members *m, char *text,
		   size_t *len)
{
	const struct nsrec *n = ns_recs;
	struct stat st;
	while (n && n->ns != m->ns)
		n = n->next;
	char *root = m->ns == b->ns ? strdup("/") :
		     n && n->root >= 0 ? fd_path(n->root) : NULL;
	if (m->ns == b->ns && stat("/proc/self/ns/mnt", &st) == 0)
		put(text, len, "mnt:[%llu]", (unsigned long long)st.st_ino);
	else if (n)
		put(text, len, "mnt:[%llu]", n->num);
	else
		put(text, len, "ns %u", m->ns->id);
	put(text, len, " %s%s, %u mounts, %u processes", root ? root : "?",
	    m->ns == b->ns ? " (the broker's own)" : "", m->ns->count, m->n);
	for (unsigned i = 0; m->ns != b->ns && i < m->n && i < PIDS_SHOWN; i++)
		put(text, len, "%s%d", i ? " " : ": ", (int)m->pid[i]);
	put(text, len, "%s\n", m->ns != b->ns && m->n > PIDS_SHOWN ? " ..." :
	    "");
	free(root);
}

/* sharectl ns: a line per namespace, the broker's own first: its number,
 * its root (the host's path of the directory its processes have as /),
 * its mounts and processes, and the processes' pids (of the copies). */
int show_namespaces(struct request *r, char **text, int *ntext)
{
	struct broker *b = r->b;
	size_t nv = 0, len = 0;
	for (struct list *l = b->g.nss.next; l != &b->g.nss; l = l->next)
		nv++;
	struct members *v = calloc(nv ? nv : 1, sizeof *v);
	if (!v || !(*text = malloc(LS_TEXT_MAX))) {
		free(v);
		return -ENOMEM;
	}
	nv = 0;
	v[nv++].ns = b->ns;
	for (struct list *l = b->g.nss.next; l != &b->g.nss; l = l->next) {
		struct ns *ns = list_entry(l, struct ns, link);
		if (ns != b->ns)
			v[nv++].ns = ns;
	}
	ns_each_process(b, count_member, &(struct census){ v, nv });
	(*text)[0] = '\0';
	for (size_t i = 0; i < nv; i++)
		put_ns(b, &v[i], *text, &len);
	*ntext = (int)len;
	free(v);
	return 0;
}
