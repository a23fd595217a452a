/* nslife.c: where the broker's mount namespaces live and how they end
 * (ns.c explains the design).
 *
 * The broker keeps the other end of every token it handed out: when every
 * copy of a token is closed, its end hangs up.  The ends wait in one
 * epoll set whose descriptor the server polls (ns_wake_fd()): the last
 * close wakes the broker at once, and ns_tick() runs then, as before each
 * request.  A namespace without tokens is confirmed dead by reading every
 * process's root (a program may close descriptors it does not know,
 * closefrom()), then freed as the kernel frees one: its mounts go without
 * propagating (op_free_ns(), detached: a root or an open file in them does
 * not hold them), then its directory and the jails that were roots in it.
 *
 * When (issue 29 item 4).  The kernel frees a namespace in do_exit() of
 * its last process (exit_task_namespaces()), before exit_notify() lets a
 * wait() return: a directory only it had mounted on can be removed as
 * soon as the parent has reaped it.  Here the last close of a token comes
 * from exit_files(), earlier in do_exit(): the root is read while the
 * process is still exiting, so a process that is exiting (PF_EXITING) is
 * in no namespace.  The broker's teardown then races the parent's wait();
 * the shim closes the race where it can run at the end (exit(3): ns_end()
 * asked by the last member before it goes, shim/ns.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/base.h"
#include "base/log.h"
#include "exec/exec.h"
#include "hold/hold.h"
#include "ns/ns.h"
#include "ns/nsrec.h"
#include "persist/persist.h"
#include "tab/tab.h"

struct nsrec *ns_recs;
unsigned ns_ntokens, ns_nrecs;
static int wake = -1;          /* epoll: every token's end, for its hangup */

/* The roots in a freed namespace are no jails any more (sharectl jails,
 * graph). */
static void forget_jails(struct broker *b, const char *dir)
{
	struct jail *j, *tmp;
	size_t n = strlen(dir);
	HASH_ITER(hh, b->jails, j, tmp)
		if (strncmp(j->path, dir, n) == 0 &&
		    (j->path[n] == '/' || !j->path[n])) {
			HASH_DEL(b->jails, j);
			free(j->path);
			free(j);
		}
}

/* The kernel frees ns: its mounts go (op_free_ns()), its directory
 * after them: where its root is, which an earlier broker may have named
 * (STATE/ns/PID.ID, another PID). */
int ns_teardown(struct broker *b, struct ns *ns)
{
	struct request r = { .b = b, .staged = -1,
			     .caller = { .root = -1, .cwd = -1, .proc = -1 } };
	struct handle *h = ns->root ? handle_of(b, ns->root) : NULL;
	char *dir = h ? fd_path(h->fd) : NULL, top[PATH_MAX];
	plan_begin(&b->g);
	int err = apply_plan(&r, op_free_ns(&b->g, ns));
	if (err)
		log_msg(LOG_WARNING, "%s: the namespace stays: %s",
			dir ? dir : "?", strerror(-err));
	else if (dir && rmdir(dir) < 0)
		log_msg(LOG_WARNING, "%s: %s", dir, strerror(errno));
	if (!err && dir)
		forget_jails(b, dir);
	free(dir);
	ns_dir(b, NULL, top, sizeof top);
	rmdir(top);                /* the last one: nothing left behind */
	if (table_changed(b))      /* the broker's own change */
		fusetab_changed(b);
	return err;
}

/* Watches end, a token's: its hangup makes ns_wake_fd() readable (an end
 * dropped leaves the set with its close).  Without epoll, the ticks
 * between requests and the server's second still find it. */
void ns_watch(int end)
{
	struct epoll_event ev = { .events = 0 };    /* hangup and error */
	if (wake < 0)
		wake = epoll_create1(EPOLL_CLOEXEC);
	if (wake >= 0 && epoll_ctl(wake, EPOLL_CTL_ADD, end, &ev) < 0)
		log_msg(LOG_WARNING, "token %d not watched: %s", end,
			strerror(errno));
}

int ns_wake_fd(void)
{
	return wake;
}

void ns_token_drop(struct nsrec *n, size_t i)
{
	close(n->tok[i].end);
	close(n->tok[i].place);
	n->tok[i] = n->tok[--n->ntok];
	ns_ntokens--;
}

/* fn(ctx, pid, ns) for every process, ns the namespace its root is in
 * (the mount its root is on, as the engine's caller has it); processes
 * whose root is on no mount the broker knows are left out. */
void ns_each_process(struct broker *b,
		     void (*fn)(void *ctx, pid_t pid, const struct ns *ns),
		     void *ctx)
{
	DIR *d = opendir("/proc");
	for (struct dirent *e; d && (e = readdir(d)); ) {
		char path[300];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/root", e->d_name);
		int fd = open(path, O_PATH | O_CLOEXEC);
		struct mount *m = fd >= 0 ? mount_of_kid(b, fd_mnt_id(fd)) :
				  NULL;
		if (fd >= 0)
			close(fd);
		if (m)
			fn(ctx, (pid_t)atoi(e->d_name), m->ns);
	}
	if (d)
		closedir(d);
}

/* Whether process pid is exiting (PF_EXITING, in /proc/PID/stat's
 * flags): do_exit() has begun, and what it holds goes before its parent
 * can reap it. */
static bool exiting(pid_t pid)
{
	char path[40], buf[512];
	unsigned flags = 0;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (len <= 0)
		return true;           /* gone already */
	buf[len] = '\0';
	const char *p = strrchr(buf, ')');  /* the name may hold anything */
	return p && sscanf(p, ") %*c %*d %*d %*d %*d %*d %u", &flags) == 1 &&
	       (flags & 0x4);         /* PF_EXITING */
}

/* ctx: the pid of a process that is leaving (ns_end()), or 0. */
static void mark_alive(void *ctx, pid_t pid, const struct ns *ns)
{
	for (struct nsrec *n = ns_recs; n; n = n->next)
		if (n->ns == ns && n->dying && pid != *(pid_t *)ctx &&
		    !exiting(pid))
			n->dying = false;
}

/* Which namespaces some process is in now (its root's), marked alive;
 * the one leaving and those exiting are in none. */
static void scan_roots(struct broker *b, pid_t leaving)
{
	ns_each_process(b, mark_alive, &leaving);
}

static int ino_cmp(const void *a, const void *b)
{
	ino_t x = *(const ino_t *)a, y = *(const ino_t *)b;
	return x < y ? -1 : x > y;
}

/* Which of the sockets v[0..n) (sorted) some process holds: held[i]. */
static void find_held(const ino_t *v, bool *held, size_t n)
{
	DIR *d = opendir("/proc"), *fds;
	char path[300], link[64];
	unsigned long ino;
	for (struct dirent *e; d && (e = readdir(d)); ) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/fd", e->d_name);
		if (!(fds = opendir(path)))
			continue;
		for (struct dirent *f; (f = readdir(fds)); ) {
			ssize_t len = readlinkat(dirfd(fds), f->d_name, link,
						 sizeof link - 1);
			if (len <= 0)
				continue;
			link[len] = '\0';
			if (sscanf(link, "socket:[%lu]", &ino) != 1)
				continue;
			ino_t key = ino;
			const ino_t *at = bsearch(&key, v, n, sizeof *v, ino_cmp);
			if (at)
				held[at - v] = true;
		}
		closedir(fds);
	}
	if (d)
		closedir(d);
}

/* An earlier broker's tokens (nsstate.c) have no end here to hang up:
 * they are found closed by looking for the callers' ends among every
 * process's descriptors.  Those of the dying records (all: of every
 * record) that nobody holds go; a record that keeps one lives. */
void ns_orphans_drop(bool all)
{
	ino_t *v = calloc(ns_ntokens + 1, sizeof *v);
	bool *held = calloc(ns_ntokens + 1, sizeof *held);
	size_t n = 0;
	for (struct nsrec *r = ns_recs; v && held && r; r = r->next)
		for (size_t i = 0; (all || r->dying) && i < r->ntok; i++)
			if (r->tok[i].end < 0 && n < ns_ntokens)
				v[n++] = r->tok[i].ino;
	if (n) {
		qsort(v, n, sizeof *v, ino_cmp);
		find_held(v, held, n);
	}
	for (struct nsrec *r = ns_recs; n && r; r = r->next) {
		for (size_t i = r->ntok; (all || r->dying) && i-- > 0; ) {
			const ino_t *at = r->tok[i].end >= 0 ? NULL :
				bsearch(&r->tok[i].ino, v, n, sizeof *v, ino_cmp);
			if (at && !held[at - v])
				ns_token_drop(r, i);
			else if (at)
				r->held = time(NULL);
		}
		if (r->ntok && r->dying)
			r->dying = false;
	}
	free(v);
	free(held);
}

/* Whether some token of n is one this broker made; an earlier broker's
 * that was found held less than a second ago counts too (looking again
 * at every process's descriptors at each request would cost them all). */
static bool alive_by_token(const struct nsrec *n)
{
	bool orphans = false;
	for (size_t i = 0; i < n->ntok; i++) {
		if (n->tok[i].end >= 0)
			return true;
		orphans = true;
	}
	return orphans && time(NULL) - n->held < 1;
}

/* Tokens whose every copy is closed go; a namespace left without tokens
 * and without a process whose root is in it (leaving: one that is about
 * to exit, 0: none) is freed. */
void ns_end(struct broker *b, pid_t leaving)
{
	bool scan = false;
	for (struct nsrec *n = ns_recs; n; n = n->next) {
		for (size_t i = n->ntok; i-- > 0; ) {
			struct pollfd p = { .fd = n->tok[i].end };
			if (n->tok[i].end >= 0 && poll(&p, 1, 0) > 0 &&
			    (p.revents & (POLLHUP | POLLERR)))
				ns_token_drop(n, i);
		}
		if (!alive_by_token(n) && n->ns != b->ns)
			scan = n->dying = true;
	}
	if (!scan)
		return;
	scan_roots(b, leaving);
	ns_orphans_drop(false);
	for (struct nsrec **pp = &ns_recs, *n; (n = *pp); ) {
		if (!n->dying || n->ntok || ns_teardown(b, n->ns)) {
			pp = &n->next;
			continue;
		}
		*pp = n->next;
		close(n->root);
		free(n->tok);
		free(n);
		ns_nrecs--;
	}
}

/* Between requests and before each, and when a token hangs up. */
void ns_tick(struct broker *b)
{
	ns_end(b, 0);
}
