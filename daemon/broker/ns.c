/* ns.c: mount namespaces on a kernel without them (issue 11).
 *
 * A namespace is a copy of the caller's whole tree (op_copy_ns(), the
 * kernel's copy_mnt_ns()) made by the executor with plain binds; its root
 * mount waits at the broker's STATE/ns/ID, outside every jail.  The caller
 * is given a token, one end of a socket pair, and re-roots itself with
 * LS_OP_SETNS: the broker hands it a directory descriptor of the copy of
 * its own root (never the copy of the host's root: a jailed caller gains
 * nothing), and the shim does fchdir, chroot(".").  Which namespace a
 * process is in follows from its root: the engine's caller is the
 * namespace of the mount its root is on (request.c).
 *
 * Lifetime.  The broker keeps the other end of every token it handed out.
 * A process that entered a namespace keeps its token open, inherited by
 * its children; ns files (/proc/PID/ns/mnt, LS_OP_NSFILE) are tokens too.
 * When every copy of a token is closed the broker's end hangs up (seen by
 * ns_tick() between requests).  A namespace without tokens is confirmed
 * dead by reading every process's root (a program may close descriptors it
 * does not know, closefrom()), then freed as the kernel frees one
 * (op_free_ns(): no propagation of the teardown).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"

enum { TOKENS_MAX = 1024, NS_MAX = 512 };
/* The numbers of copies, above any the kernel gives out in practice (its
 * own start at 0xF0000000): mnt:[N] differs between namespaces. */
#define NUM_BASE 0xFFF00000ull

struct token {
	int end;               /* the broker's end of the pair */
	ino_t ino;             /* the caller's end, as /proc/PID/fd shows it */
	int place;             /* O_PATH: where setns re-roots to */
	bool member;           /* held by a process in the namespace */
};

struct nsrec {
	struct ns *ns;
	unsigned long long num;
	int root;              /* O_PATH: the namespace's root place */
	struct token *tok;
	size_t ntok, cap;
	bool dying;            /* no token left: the roots are read */
	struct nsrec *next;
};

static struct nsrec *recs;
static unsigned ntokens, nrecs;
static unsigned long long host_num;

#define FDPATH(buf, fd) (snprintf(buf, sizeof buf, "/proc/self/fd/%d", fd), buf)

static int nsdir(const struct broker *b, const struct ns *ns, char *buf,
		 size_t size)
{
	if (ns)
		return snprintf(buf, size, "%s/ns/%u", b->state_dir, ns->id);
	return snprintf(buf, size, "%s/ns", b->state_dir);
}

/* The executor's step for a namespace's root (exec.c): the copy, staged
 * and held, moves to STATE/ns/ID. */
int ns_place(struct broker *b, struct mount *m)
{
	char dir[PATH_MAX], src[64];
	nsdir(b, NULL, dir, sizeof dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	nsdir(b, m->ns, dir, sizeof dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	return mount(FDPATH(src, handle_of(b, m)->fd), dir, NULL, MS_MOVE,
		     NULL) < 0 ? -errno : 0;
}

/* The record of ns; one is made for the broker's own namespace, whose
 * root place is the host's root and whose number the kernel's. */
static struct nsrec *rec_of(struct broker *b, struct ns *ns)
{
	struct nsrec *n;
	for (n = recs; n; n = n->next)
		if (n->ns == ns)
			return n;
	struct handle *h = handle_of(b, b->ns->root);
	if (ns != b->ns || !h || !(n = calloc(1, sizeof *n)))
		return NULL;
	char at[64];
	struct stat st;
	if (!host_num)
		host_num = stat("/proc/self/ns/mnt", &st) == 0 ? st.st_ino :
			   NUM_BASE - 1;
	n->ns = ns;
	n->num = host_num;
	if ((n->root = open(FDPATH(at, h->fd), O_PATH | O_CLOEXEC)) < 0) {
		free(n);
		return NULL;
	}
	n->next = recs;
	recs = n;
	return n;
}

/* A new token of n that re-roots to place (a descriptor it takes); the
 * caller's end in *pass. */
static int token_new(struct nsrec *n, int place, bool member, int *pass)
{
	int sv[2], err = 0;
	struct stat st;
	if (ntokens >= TOKENS_MAX)
		err = -ENFILE;
	else if (place < 0 || (n->ntok == n->cap &&
		 !(n->tok = reallocarray(n->tok, n->cap = 2 * n->cap + 4,
					 sizeof *n->tok))))
		err = -ENOMEM;
	else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		err = -errno;
	if (err) {
		if (place >= 0)
			close(place);
		return err;
	}
	/* the holder cannot write to us; its close hangs our end up */
	shutdown(sv[1], SHUT_WR);
	fstat(sv[1], &st);
	n->tok[n->ntok++] = (struct token){ sv[0], st.st_ino, place, member };
	ntokens++;
	*pass = sv[1];
	return 0;
}

static void token_drop(struct nsrec *n, size_t i)
{
	close(n->tok[i].end);
	close(n->tok[i].place);
	n->tok[i] = n->tok[--n->ntok];
	ntokens--;
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
	for (struct nsrec *n = recs; n; n = n->next)
		for (size_t i = 0; i < n->ntok; i++)
			if (n->tok[i].ino == ino) {
				*rec = n;
				*t = &n->tok[i];
				return 0;
			}
	return -EINVAL;
}

/* The highest descriptor of pid holding a member token of another
 * namespace than n's: the membership the caller leaves. */
static int old_member(pid_t pid, const struct nsrec *n)
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
		    t->member && o != n && fd > best)
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

/* Mounts the executor cannot copy: out of the broker's reach. */
static bool unreachable(void *ctx, const struct mount *m)
{
	const struct handle *h = handle_of(ctx, m);
	return !h || h->fd < 0;
}

/* An O_PATH descriptor of the copy of the caller's root in ns. */
static int open_copy(struct broker *b, struct request *r, struct loc root,
		     struct ns *ns)
{
	struct mount *m = ns->root;    /* the copy of root.m (op_copy_view) */
	struct handle *h = handle_of(b, m);
	struct stat want, got;
	if (!h)
		return -EIO;
	const char *rel = root.dir + strlen(m->root);
	while (*rel == '/')
		rel++;
	int fd = openat(h->fd, *rel ? rel : ".", O_PATH | O_DIRECTORY |
			O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &got) < 0 || fstat(r->caller.root, &want) < 0 ||
			got.st_ino != want.st_ino || got.st_dev != want.st_dev ||
			fd_mnt_id(fd) != h->kid)) {
		close(fd);     /* not the same directory: swapped meanwhile */
		return -EIO;
	}
	return fd < 0 ? -errno : fd;
}

/* Runs the open plan (as request.c's apply()). */
static int ns_apply(struct request *r, int err)
{
	struct broker *b = r->b;
	if (!err)
		err = exec_plan(r);
	if (err) {
		plan_abandon(&b->g);
	} else {
		exec_commit(b);
		state_save(b);
	}
	return err;
}

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
 * after them. */
static int teardown(struct broker *b, struct ns *ns)
{
	struct request r = { .b = b, .staged = -1 };
	char dir[PATH_MAX];
	nsdir(b, ns, dir, sizeof dir);
	plan_begin(&b->g);
	int err = ns_apply(&r, op_free_ns(&b->g, ns));
	if (err)
		log_msg(LOG_WARNING, "%s: the namespace stays: %s", dir,
			strerror(-err));
	else if (rmdir(dir) < 0)
		log_msg(LOG_WARNING, "%s: %s", dir, strerror(errno));
	if (!err)
		forget_jails(b, dir);
	nsdir(b, NULL, dir, sizeof dir);
	rmdir(dir);                /* the last one: nothing left behind */
	if (table_changed(b))      /* the broker's own change */
		fusetab_changed(b);
	return err;
}

/* unshare(CLONE_NEWNS): the kernel's checks (privilege, the namespace
 * limit), the copy, and a member token of it for the caller. */
int ns_unshare(struct request *r, int *pass)
{
	struct broker *b = r->b;
	struct caller c = { .privileged = r->caller.cap_admin };
	struct ns *ns = NULL;
	char *buf = NULL;
	if (!c.privileged)
		return -EPERM;
	if (nrecs >= NS_MAX)
		return -ENOSPC;    /* the kernel's max_mnt_namespaces */
	int err = fd_loc(b, r->caller.root, &c.root, &buf);
	if (!err) {
		c.ns = c.root.m->ns;
		plan_begin(&b->g);
		err = ns_apply(r, op_copy_view(&b->g, &c, unreachable, b, &ns));
	}
	if (err) {                 /* the directory the failed copy took */
		char dir[PATH_MAX];
		nsdir(b, &(struct ns){ .id = b->g.next_ns }, dir, sizeof dir);
		rmdir(dir);
	}
	struct nsrec *n = err ? NULL : calloc(1, sizeof *n);
	if (!err && !n) {
		teardown(b, ns);
		err = -ENOMEM;
	}
	if (n) {
		n->ns = ns;
		n->num = NUM_BASE + ns->id;
		n->next = recs;
		recs = n;
		nrecs++;
		n->root = open_copy(b, r, c.root, ns);
		err = n->root < 0 ? n->root :
		      token_new(n, dup(n->root), true, pass);
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
	t->member = true;          /* the shim keeps a copy of it */
	*old = old_member(r->caller.pid, n);
	return 0;
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
	struct stat st;
	int proot = r->caller.root, err = 0;
	if (pid < 0)
		return -ENOENT;
	if (pid) {
		snprintf(path, sizeof path, "/proc/%d/root", (int)pid);
		proot = open(path, O_PATH | O_CLOEXEC);
		if (proot < 0)
			return errno == EACCES ? -EACCES : -ENOENT;
		if (!reachable(proot, r->caller.root))
			err = -ENOENT;
		else if (!r->caller.cap_admin &&
			 (fstat(proot, &st) < 0 || st.st_uid != r->caller.uid))
			err = -EACCES;
	}
	struct mount *m = mount_of_kid(b, fd_mnt_id(proot));
	struct nsrec *n = !err && m ? rec_of(b, m->ns) : NULL;
	if (!err && !n)
		err = -EIO;
	if (!err) {
		*num = n->num;
		if (!number_only)
			err = token_new(n, dup(reachable(n->root, r->caller.root)
					       ? n->root : proot), false, pass);
	}
	if (pid)
		close(proot);
	return err;
}

/* Which namespaces some process is in now (its root's), marked alive. */
static void scan_roots(struct broker *b)
{
	DIR *d = opendir("/proc");
	for (struct dirent *e; d && (e = readdir(d)); ) {
		char path[300];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/root", e->d_name);
		int fd = open(path, O_PATH | O_CLOEXEC);
		struct mount *m = fd >= 0 ? mount_of_kid(b, fd_mnt_id(fd)) : NULL;
		if (fd >= 0)
			close(fd);
		for (struct nsrec *n = recs; m && n; n = n->next)
			if (n->ns == m->ns)
				n->dying = false;
	}
	if (d)
		closedir(d);
}

/* Between requests: tokens whose every copy is closed go; a namespace
 * left without tokens and without a process whose root is in it is
 * freed. */
void ns_tick(struct broker *b)
{
	bool scan = false;
	for (struct nsrec *n = recs; n; n = n->next) {
		for (size_t i = n->ntok; i-- > 0; ) {
			struct pollfd p = { .fd = n->tok[i].end };
			if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
				token_drop(n, i);
		}
		if (!n->ntok && n->ns != b->ns)
			scan = n->dying = true;
	}
	if (!scan)
		return;
	scan_roots(b);
	for (struct nsrec **pp = &recs, *n; (n = *pp); ) {
		if (!n->dying || n->ntok || teardown(b, n->ns)) {
			pp = &n->next;
			continue;
		}
		*pp = n->next;
		close(n->root);
		free(n->tok);
		free(n);
		nrecs--;
	}
}
