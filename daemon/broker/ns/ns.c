/* ns.c: mount namespaces on a kernel without them (issue 11).
 *
 * A namespace is a copy of the caller's tree (op_copy_view(): the
 * kernel's copy_mnt_ns() as far as the caller can tell) made by the
 * executor with plain binds; its root mount waits at the broker's
 * STATE/ns/PID.ID, outside every jail.  The caller
 * is given a token, one end of a socket pair, and re-roots itself with
 * LS_OP_SETNS: the broker hands it a directory descriptor of the copy of
 * its own root (never the copy of the host's root: a jailed caller gains
 * nothing), and the shim does fchdir, chroot(".").  Which namespace a
 * process is in follows from its root: the engine's caller is the
 * namespace of the mount its root is on (request.c).
 *
 * Lifetime (nslife.c): a process that entered a namespace keeps its
 * token open, inherited by its children; ns files (/proc/PID/ns/mnt,
 * LS_OP_NSFILE) are tokens too.  A namespace lives while some token of it
 * is open or some process's root is in it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "exec/exec.h"
#include "hold/hold.h"
#include "ns/ns.h"
#include "ns/nsrec.h"
#include "persist/persist.h"
#include "resolve/resolve.h"

/* Each token costs the broker two descriptors, taken from those its
 * handles could use (fd_room()): a bound for all, and one per user, so
 * that nobody's open ns files starve another's. */
enum { TOKENS_MAX = 512, TOKENS_PER_UID = 128, NS_MAX = 256 };

static unsigned long long host_num;

/* The record of ns; one is made for the broker's own namespace, whose
 * root place is the host's root and whose number the kernel's. */
struct nsrec *ns_rec(struct broker *b, struct ns *ns)
{
	struct nsrec *n;
	for (n = ns_recs; n; n = n->next)
		if (n->ns == ns)
			return n;
	struct handle *h = handle_of(b, b->ns->root);
	if (ns != b->ns || !h || !(n = calloc(1, sizeof *n)))
		return NULL;
	char at[64];
	struct stat st;
	if (!host_num)
		host_num = stat("/proc/self/ns/mnt", &st) == 0 ? st.st_ino :
			   NS_NUM_BASE - 1;
	n->ns = ns;
	n->num = host_num;
	if ((n->root = open(FDPATH(at, h->fd), O_PATH | O_CLOEXEC)) < 0) {
		free(n);
		return NULL;
	}
	n->next = ns_recs;
	ns_recs = n;
	return n;
}

/* How many tokens uid holds. */
static unsigned tokens_of(uid_t uid)
{
	unsigned k = 0;
	for (struct nsrec *n = ns_recs; n; n = n->next)
		for (size_t i = 0; i < n->ntok; i++)
			k += n->tok[i].uid == uid;
	return k;
}

/* Room for one more token in n. */
int ns_token_room(struct nsrec *n)
{
	size_t cap = 2 * n->cap + 4;
	struct token *t;
	if (n->ntok < n->cap)
		return 0;
	if (!(t = reallocarray(n->tok, cap, sizeof *t)))
		return -ENOMEM;
	n->tok = t;
	n->cap = cap;
	/* -fanalyzer's leak of t: it is n->tok now, the record's */
	return 0;
}

/* A new token of n for r's caller that re-roots to place (a descriptor
 * it takes); the caller's end in *pass. */
static int token_new(struct request *r, struct nsrec *n, int place,
		     bool member, int *pass)
{
	int sv[2], err = 0;
	struct stat st;
	uid_t uid = peer_uid(&r->caller);
	/* tokens an earlier broker made count until found closed */
	if (ns_ntokens >= TOKENS_MAX || tokens_of(uid) >= TOKENS_PER_UID)
		ns_orphans_drop(true);
	if (ns_ntokens >= TOKENS_MAX || tokens_of(uid) >= TOKENS_PER_UID)
		err = -ENFILE;
	else if (place < 0)
		err = -errno;
	else if (!(err = ns_token_room(n)) &&
		 socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		err = -errno;
	if (err) {
		if (place >= 0)
			close(place);
		return err;
	}
	/* the holder cannot write to us; its close hangs our end up */
	shutdown(sv[1], SHUT_WR);
	fstat(sv[1], &st);
	n->tok[n->ntok++] = (struct token){ sv[0], st.st_ino, place, member,
					    uid };
	ns_ntokens++;
	ns_watch(sv[0]);
	*pass = sv[1];
	return 0;
}

/* The token just made, saved (nsstate.c: a restart keeps it), or taken
 * back with the save's errno (issue 9: a state that cannot be saved is
 * an error). */
static int token_saved(struct broker *b, struct nsrec *n, int *pass)
{
	int err = state_save(b);
	if (err) {
		ns_token_drop(n, n->ntok - 1);
		close(*pass);
		*pass = -1;
	}
	return err;
}

/* The token at descriptor fd of process pid: -EBADF when pid has no
 * such descriptor, -EINVAL when it is no token. */
static int token_at(pid_t pid, int fd, struct nsrec **rec, struct token **t)
{
	char path[64], link[64];
	unsigned long ino;
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
	ssize_t len = fd < 0 ? -1 : readlink(path, link, sizeof link - 1);
	if (len <= 0)
		return -EBADF;
	link[len] = '\0';
	if (sscanf(link, "socket:[%lu]", &ino) != 1)
		return -EINVAL;
	for (struct nsrec *n = ns_recs; n; n = n->next)
		for (size_t i = 0; i < n->ntok; i++)
			if (n->tok[i].ino == ino) {
				*rec = n;
				*t = &n->tok[i];
				return 0;
			}
	return -EINVAL;
}

/* The highest descriptor of pid but fd holding a member token: the
 * membership the caller leaves as it enters with fd (of whichever
 * namespace: entering one's own again must not leave two). */
static int old_member(pid_t pid, int used)
{
	char path[64];
	int best = -1;
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d)); ) {
		struct nsrec *o;
		struct token *t;
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && token_at(pid, fd, &o, &t) == 0 &&
		    t->member && fd != used && fd > best)
			best = fd;
	}
	if (d)
		closedir(d);
	return best;
}

/* Whether the directory fd is the directory root, or lies under it (a
 * copy of a jail's directory is the same directory). */
static bool reachable(int fd, int root)
{
	struct stat a, b;
	return (fstat(fd, &a) == 0 && fstat(root, &b) == 0 &&
		a.st_dev == b.st_dev && a.st_ino == b.st_ino) ||
	       fd_within(fd, root);
}

/* Mounts the executor cannot copy: out of the broker's reach.  A mount
 * marked to expire is in reach: the plan wakes it (expire.c). */
static bool unreachable(void *ctx, const struct mount *m)
{
	return !handle_known(ctx, m);
}

/* An O_PATH descriptor of at, the copy of the caller's root. */
static int open_copy(struct broker *b, struct request *r, struct loc at)
{
	struct mount *m = at.m;
	struct handle *h = handle_of(b, m);
	struct stat want, got;
	if (!h)
		return -EIO;
	const char *rel = at.dir + strlen(m->root);
	while (*rel == '/')
		rel++;
	int fd = openat(h->fd, *rel ? rel : ".", O_PATH | O_DIRECTORY |
			O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &got) < 0 ||
			fstat(r->caller.root, &want) < 0 ||
			got.st_ino != want.st_ino ||
			got.st_dev != want.st_dev || fd_mnt_id(fd) != h->kid)) {
		close(fd);     /* not the same directory: swapped meanwhile */
		return -EIO;
	}
	return fd < 0 ? -errno : fd;
}

/* unshare(CLONE_NEWNS): the kernel's checks (privilege, the namespace
 * limit), the copy, and a member token of it for the caller. */
int ns_unshare(struct request *r, int *pass)
{
	struct broker *b = r->b;
	struct caller c = { .privileged = r->caller.cap_admin };
	struct loc at;
	struct ns *ns = NULL;
	char *buf = NULL;
	if (!c.privileged)
		return -EPERM;
	if (ns_nrecs >= NS_MAX)
		return -ENOSPC;    /* the kernel's max_mnt_namespaces */
	int err = fd_loc(b, r->caller.root, &c.root, &buf);
	if (!err) {
		c.ns = c.root.m->ns;
		plan_begin(&b->g);
		err = apply_plan(r, op_copy_view(&b->g, &c, unreachable, b, &ns,
						 &at));
	}
	if (err) {                 /* the directory the failed copy took */
		char dir[PATH_MAX];
		ns_dir(b, &(struct ns){ .id = b->g.next_ns }, dir, sizeof dir);
		rmdir(dir);
	}
	struct nsrec *n = err ? NULL : calloc(1, sizeof *n);
	if (!err && !n) {
		ns_teardown(b, ns);
		err = -ENOMEM;
	}
	if (n) {
		n->ns = ns;
		n->num = NS_NUM_BASE + ns->id;
		n->next = ns_recs;
		ns_recs = n;
		ns_nrecs++;
		n->root = open_copy(b, r, at);
		err = n->root < 0 ? n->root :
		      token_new(r, n, dup(n->root), true, pass) ?:
		      token_saved(b, n, pass);
		n->dying = err != 0;   /* no token: it goes at the next tick */
	}
	free(buf);
	return err;
}

/* setns(fd, CLONE_NEWNS) with the caller's descriptor fd: the root to
 * re-root to, and in *old the caller's member token of the namespace it
 * leaves (-1: none). */
int ns_setns(struct request *r, int fd, int *pass, int *old)
{
	struct nsrec *n;
	struct token *t;
	char at[64];
	int err = token_at(r->caller.pid, fd, &n, &t);
	if (err)
		return err;
	if (!r->caller.cap_admin)
		return -EPERM;
	if ((*pass = open(FDPATH(at, t->place), O_RDONLY | O_DIRECTORY |
			  O_CLOEXEC)) < 0)
		return -errno;
	*old = old_member(r->caller.pid, fd);
	if (t->member)
		return 0;
	t->member = true;          /* the shim keeps a copy of it */
	if ((err = state_save(r->b))) {
		t->member = false;
		close(*pass);
		*pass = -1;
	}
	return err;
}

/* Whether process pid runs as uid (the owner of /proc/PID): the
 * kernel's ptrace check, short of capabilities. */
static bool same_owner(pid_t pid, uid_t uid)
{
	char path[32];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	return stat(path, &st) == 0 && st.st_uid == uid;
}

/* Whether the caller's root is the broker's: no jail. */
static bool on_host_root(struct request *r)
{
	const char *path = peer_root(&r->caller);
	return path && strcmp(path, "/") == 0;
}

/* open("/proc/PID/ns/mnt"): PID (0: the caller) must be one the caller
 * sees (its root at or under the caller's: a jail names only its own
 * processes, as a jail with its own /proc would), and may be inspected
 * (the same user, or a privileged caller).  A token of its namespace
 * (none when only the number is asked for), and the number. */
int ns_file(struct request *r, pid_t pid, bool number_only, int *pass,
	    unsigned long long *num)
{
	struct broker *b = r->b;
	char path[64];
	int proot = r->caller.root, err = 0;
	if (pid < 0)
		return -ENOENT;
	if (pid) {
		snprintf(path, sizeof path, "/proc/%d/root", (int)pid);
		proot = open(path, O_PATH | O_CLOEXEC);
		if (proot < 0)         /* a jail has no such process */
			return errno == EACCES && on_host_root(r) ? -EACCES :
			       -ENOENT;
		if (!reachable(proot, r->caller.root))
			err = -ENOENT;
		else if (!r->caller.cap_admin &&
			 !same_owner(pid, peer_uid(&r->caller)))
			err = -EACCES;
	}
	struct mount *m = mount_of_kid(b, fd_mnt_id(proot));
	struct nsrec *n = !err && m ? ns_rec(b, m->ns) : NULL;
	if (!err && !n)
		err = -EIO;
	if (!err) {
		*num = n->num;
		if (!number_only)
			err = token_new(r, n, dup(reachable(n->root,
							    r->caller.root) ?
						  n->root : proot),
					false, pass) ?: token_saved(b, n, pass);
	}
	if (pid)
		close(proot);
	return err;
}

/* setns(pidfd, CLONE_NEWNS): the process the caller's descriptor fd is a
 * pidfd of (its "Pid:" in fdinfo, the kernel's); -EINVAL when fd is no
 * pidfd (the shim then gives it to the kernel as it came), -ESRCH when
 * the process has ended. */
int ns_pidfd(struct request *r, int fd, pid_t *pid)
{
	char path[64], buf[512];
	pid_t caller = r->caller.pid;
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)caller, fd);
	ssize_t len = readlink(path, buf, sizeof buf - 1);
	if (len <= 0)
		return -EBADF;
	buf[len] = '\0';
	if (strcmp(buf, "anon_inode:[pidfd]") && strncmp(buf, "pidfd:", 6))
		return -EINVAL;
	snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", (int)caller, fd);
	int in = open(path, O_RDONLY | O_CLOEXEC);
	len = in < 0 ? -1 : read(in, buf, sizeof buf - 1);
	if (in >= 0)
		close(in);
	buf[len > 0 ? len : 0] = '\0';
	const char *at = strstr(buf, "\nPid:");
	int v;
	if (!at || sscanf(at + 5, "%d", &v) != 1)
		return -EINVAL;
	*pid = v;
	return v > 0 ? 0 : -ESRCH;
}
