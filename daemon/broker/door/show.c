/* show.c: what sharectl tree and graph show, rendered by the engine.
 *
 * The text has a line per mount, and a host has thousands: more than a
 * reply's LS_REPLY_MAX.  So it goes into a file of memory (reply.c), and
 * the reply carries a descriptor of it (SCM_RIGHTS).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker.h"
#include "door/door.h"
#include "hold/hold.h"
#include "ns/ns.h"
#include "resolve/resolve.h"
#include "tab/tab.h"

/* The reply's text, rendered into memory first. */
struct text {
	FILE *f;
	char *buf;
	size_t len;
};

static int text_open(struct text *t)
{
	t->buf = NULL;
	t->f = open_memstream(&t->buf, &t->len);
	return t->f ? 0 : -ENOMEM;
}

/* The text is written (wrote: the renderer's 0 or -errno); *pass gets a
 * read-only descriptor of it, of memory that is not the state
 * directory's and counts against an unprivileged caller (reply.c). */
static uid_t counted(struct request *r)
{
	return r->caller.cap_admin ? REPLY_UNCOUNTED : peer_uid(&r->caller);
}

static int text_done(struct request *r, struct text *t, int *pass, int wrote)
{
	int err = fclose(t->f) == 0 ? wrote : -ENOMEM;
	if (!err)
		err = reply_text(counted(r), t->buf, t->len, pass);
	free(t->buf);
	return err;
}

/* The tree as a process whose root is dir sees it, dir looked up like any
 * of the caller's paths (inside its root: a jail sees no more than its
 * own); without dir, as the caller itself sees it. */
int show_tree(struct request *r, const char *pid, const char *dir, int *pass)
{
	struct broker *b = r->b;
	struct named n = { .fd = -1 };
	struct loc root;
	char *buf = NULL;
	struct text t;
	int err = pid && dir ? -EINVAL : dir ? resolve(r, dir, RES_FOLLOW, &n) :
		  pid ? pid_view(r, pid, &root, &buf) :
		  fd_loc(b, r->caller.root, &root, &buf);
	if (dir && !err)
		root = n.at;
	if (!err && root.file)
		err = -ENOTDIR;
	if (!err && !(err = text_open(&t)))
		err = text_done(r, &t, pass, render_tree(root.m->ns, root, false,
							 t.f));
	named_free(&n);
	free(buf);
	return err;
}

/* The propagation graph, with every jail the broker has seen: its root
 * found again from its path (NULL when the directory is gone). */
int show_graph(struct request *r, int *pass)
{
	struct broker *b = r->b;
	unsigned n = HASH_COUNT(b->jails), i = 0;
	struct view *v = calloc(n + 1, sizeof *v);
	char **bufs = calloc(n + 1, sizeof *bufs);
	struct text t;
	int err = v && bufs ? 0 : -ENOMEM;
	for (struct jail *j = b->jails; !err && j; j = j->hh.next, i++) {
		int fd = open(j->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		v[i].name = j->path;
		if (fd < 0 || fd_loc(b, fd, &v[i].root, &bufs[i]) < 0) {
			v[i].root.m = NULL;
			bufs[i] = NULL;
		}
		if (fd >= 0)
			close(fd);
	}
	if (!err && !(err = text_open(&t)))
		err = text_done(r, &t, pass, render_graph(&b->g, b->ns, v, i,
							  t.f));
	for (unsigned k = 0; bufs && k < n; k++)
		free(bufs[k]);
	free(bufs);
	free(v);
	return err;
}

/* The caller's own mount table (semantics.md 1.5): mountinfo or the
 * /proc/mounts format, for its root as it is now, so that a mount that
 * just returned is listed.  A file of the broker's FUSE filesystem, which
 * renders again at every read from offset 0 and signals changes; without
 * FUSE a snapshot. */
int show_table(struct request *r, const char *which, const char *pid,
	       int *pass)
{
	struct broker *b = r->b;
	bool info = which && strcmp(which, "mountinfo") == 0;
	struct loc root;
	char *buf = NULL;
	struct text t;
	if (!info && (!which || strcmp(which, "mounts") != 0))
		return -EINVAL;
	int err = pid ? pid_view(r, pid, &root, &buf) :
			fd_loc(b, r->caller.root, &root, &buf);
	if (!err && b->tab)        /* live: read fresh, polled (fusetab.c) */
		err = fusetab_open(b, root, info, counted(r), pass);
	else if (!err && !(err = text_open(&t)))
		err = text_done(r, &t, pass, (info ? render_mountinfo :
			render_mounts)(&b->g, root.m->ns, root, t.f));
	free(buf);
	return err;
}
