/* policy.c: who may ask what.  One row per operation, deny by default: an
 * op that is not in the table, a field it does not take, or a caller it
 * does not serve is refused before anything else happens.
 *
 *   ANYONE    every caller; what it learns is confined to its own root
 *             (paths are looked up there, tables are rendered for it),
 *             and the system calls apply the kernel's own privilege rule
 *             in the kernel's order (ENOENT before EPERM)
 *   ON_HOST   a caller whose root is the host's: the answer names host
 *             paths (every jail's), which a jail must not learn
 *   ADMIN     a privileged caller on the host's root: it changes the
 *             broker itself
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker.h"
#include "door/door.h"
#include "hold/hold.h"
#include "hold/holder.h"
#include "ns/ns.h"
#include "resolve/resolve.h"
#include "tab/tab.h"

enum who { ANYONE, ON_HOST, ADMIN };

/* Field bits: 1 << i for field i of the request. */
enum { F0 = 1, F1 = 2, F2 = 4, F3 = 8 };

struct row {
	uint16_t op;
	unsigned allowed, required;
	enum who who;
	int (*serve)(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		     struct answer *a);
};

static void count_jails(struct broker *b);
static int say(struct answer *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int say(struct answer *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	a->ntext = vasprintf(&a->text, fmt, ap);
	va_end(ap);
	if (a->ntext < 0) {
		a->text = NULL;
		a->ntext = 0;
		return -ENOMEM;
	}
	return 0;
}

static int serve_mount(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		    struct answer *a)
{
	(void)a;
	return call_mount(r, f[0], f[1], f[2], f[3], arg);
}

static int serve_umount(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		     struct answer *a)
{
	(void)a;
	return call_umount(r, f[1], (int)arg);
}

static int serve_pivot(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		    struct answer *a)
{
	bool cwd_too = false;
	(void)arg;
	int err = call_pivot_root(r, f[0], f[1], &a->pass, &cwd_too);
	return !err && cwd_too ? say(a, "cwd") : err;
}

static int serve_chroot(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		     struct answer *a)
{
	(void)r, (void)arg, (void)f, (void)a;
	return 0;              /* the root is remembered already */
}

static int serve_status(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		     struct answer *a)
{
	(void)arg, (void)f;
	count_jails(r->b);     /* the jails alive now, as sharectl jails */
	return say(a, "sharebrokerd %d: %u mounts, %u jails\n", (int)getpid(),
		   r->b->ns->count, HASH_COUNT(r->b->jails));
}

static int serve_stop(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		   struct answer *a)
{
	(void)f, (void)a;
	if (arg & LS_STOP_FINAL)
		holder_end(r->b);
	__atomic_store_n(&r->b->stop, true, __ATOMIC_RELAXED);  /* loop.c */
	return 0;
}

static int serve_jails(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		    struct answer *a)
{
	size_t size = 1;
	(void)arg, (void)f;
	count_jails(r->b);
	for (struct jail *j = r->b->jails; j; j = j->hh.next)
		size += strlen(j->path) + 1;
	if (!(a->text = malloc(size)))
		return -ENOMEM;
	a->text[0] = '\0';
	for (struct jail *j = r->b->jails; j; j = j->hh.next)
		strcat(strcat(a->text, j->path), "\n");
	a->ntext = (int)strlen(a->text);
	return 0;
}

static int serve_tree(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		   struct answer *a)
{
	(void)arg;
	return show_tree(r, f[0], f[1], &a->pass);
}

static int serve_graph(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		    struct answer *a)
{
	(void)arg, (void)f;
	return show_graph(r, &a->pass);
}

static int serve_namespaces(struct request *r, uint64_t arg,
			    char *f[LS_NFIELDS], struct answer *a)
{
	(void)arg, (void)f;
	return show_namespaces(r, &a->text, &a->ntext);
}

static int serve_table(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		    struct answer *a)
{
	(void)arg;
	return show_table(r, f[1], f[0], &a->pass);
}

static int serve_unshare(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
			 struct answer *a)
{
	(void)f;
	return arg ? -EINVAL : ns_unshare(r, &a->pass);
}

static int serve_setns(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		       struct answer *a)
{
	int old = -1, err = arg > INT_MAX ? -EBADF :
			    ns_setns(r, (int)arg, &a->pass, &old);
	(void)f;
	return err ? err : old >= 0 ? say(a, "%d", old) : 0;
}

static int serve_nsfile(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
			struct answer *a)
{
	unsigned long long num;
	uint64_t v = arg & ~(LS_NSFILE_NUMBER | LS_NSFILE_PIDFD);
	pid_t pid = (pid_t)v;
	int err = v <= INT_MAX ? 0 : arg & LS_NSFILE_PIDFD ? -EBADF : -ENOENT;
	if (!err && (arg & LS_NSFILE_PIDFD))
		err = ns_pidfd(r, (int)v, &pid);
	err = err ?: ns_file(r, pid, arg & LS_NSFILE_NUMBER, &a->pass, &num);
	(void)f;
	return err ? err : say(a, "%llu", num);
}

/* The caller's word that it exits is taken: one that says so and stays
 * loses only its own namespace's mounts, and only when nobody else is in
 * it (ns_end() reads every other process's root and every token). */
static int serve_leave(struct request *r, uint64_t arg, char *f[LS_NFIELDS],
		       struct answer *a)
{
	(void)f, (void)a;
	if (arg)
		return -EINVAL;
	ns_end(r->b, r->caller.pid);
	return 0;
}

static const struct row rows[] = {
	{ LS_OP_MOUNT, F0 | F1 | F2 | F3, 0, ANYONE, serve_mount },
	{ LS_OP_UMOUNT, F1, 0, ANYONE, serve_umount },
	{ LS_OP_PIVOT_ROOT, F0 | F1, 0, ANYONE, serve_pivot },
	{ LS_OP_CHROOT, 0, 0, ANYONE, serve_chroot },
	{ LS_OP_STATUS, 0, 0, ANYONE, serve_status },
	{ LS_OP_STOP, 0, 0, ADMIN, serve_stop },
	{ LS_OP_JAILS, 0, 0, ADMIN, serve_jails },
	{ LS_OP_TREE, F0 | F1, 0, ANYONE, serve_tree },
	{ LS_OP_GRAPH, 0, 0, ON_HOST, serve_graph },
	{ LS_OP_MOUNTTABLE, F0 | F1, F1, ANYONE, serve_table },
	{ LS_OP_UNSHARE, 0, 0, ANYONE, serve_unshare },
	{ LS_OP_SETNS, 0, 0, ANYONE, serve_setns },
	{ LS_OP_NSFILE, 0, 0, ANYONE, serve_nsfile },
	{ LS_OP_NAMESPACES, 0, 0, ADMIN, serve_namespaces },
	{ LS_OP_LEAVE, 0, 0, ANYONE, serve_leave },
};

static const struct row *row_of(uint16_t op)
{
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
		if (rows[i].op == op)
			return &rows[i];
	return NULL;
}

/* Whether the caller's root is the host's: no jail. */
static bool on_host(struct request *r)
{
	struct loc l;
	char *buf;
	bool ok = fd_loc(r->b, r->caller.root, &l, &buf) == 0;
	if (ok) {
		ok = l.m == r->b->ns->root && strcmp(l.dir, l.m->root) == 0;
		free(buf);
	}
	return ok;
}

/* Whether the row lets this caller ask at all: 0, or the refusal. */
static int admitted(struct request *r, const struct row *w,
		    char *f[LS_NFIELDS])
{
	unsigned present = 0;
	for (int i = 0; i < LS_NFIELDS; i++)
		present |= f[i] ? 1u << i : 0;
	if ((present & ~w->allowed) || (w->required & ~present))
		return -EINVAL;
	if (w->who == ADMIN && !r->caller.cap_admin)
		return -EPERM;
	if (w->who != ANYONE && !on_host(r))
		return -EPERM;
	return 0;
}

/* Forgets the jails no process lives in any more: every process's root
 * is read once.  It runs when the list has doubled since the last count,
 * so callers from ever new roots (unprivileged users in user namespaces
 * of their own, build chroots that come and go) cost memory in
 * proportion to the roots alive, and time in proportion to requests. */
static void count_jails(struct broker *b)
{
	struct jail *j, *tmp;
	DIR *d = opendir("/proc");
	for (j = b->jails; j; j = j->hh.next)
		j->live = false;
	for (struct dirent *e; d && (e = readdir(d)); ) {
		char proc[300];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(proc, sizeof proc, "/proc/%s/root", e->d_name);
		char path[PATH_MAX];
		ssize_t n = readlink(proc, path, sizeof path - 1);
		if (n <= 0)
			continue;
		path[n] = '\0';
		HASH_FIND_STR(b->jails, path, j);
		if (j)
			j->live = true;
	}
	if (d)
		closedir(d);
	HASH_ITER(hh, b->jails, j, tmp)
		if (!j->live) {
			HASH_DEL(b->jails, j);
			free(j->path);
			free(j);
		}
	b->jails_high = 2 * HASH_COUNT(b->jails) + 64;
}

/* A root some caller has: sharectl jails lists them. */
static void remember_root(struct request *r)
{
	const char *root = peer_root(&r->caller);
	char *path = root ? strdup(root) : NULL;
	struct jail *j = NULL;
	if (path && strcmp(path, "/") != 0)   /* "/": the host, not a jail */
		HASH_FIND_STR(r->b->jails, path, j);
	if (!path || strcmp(path, "/") == 0 || j ||
	    !(j = calloc(1, sizeof *j))) {
		free(path);
		return;
	}
	j->path = path;
	HASH_ADD_KEYPTR(hh, r->b->jails, j->path, strlen(j->path), j);
	if (HASH_COUNT(r->b->jails) > r->b->jails_high)
		count_jails(r->b);
}

/* Serves request op for r's caller, by its row of the table. */
int policy_serve(struct request *r, uint16_t op, uint64_t arg,
		 char *f[LS_NFIELDS], struct answer *a)
{
	struct broker *b = r->b;
	const struct row *w = row_of(op);
	int err = w ? admitted(r, w, f) : -EINVAL;
	if (err)
		return err;            /* logged by the server (log_request) */
	remember_root(r);
	ns_tick(b);                /* what it sees has no dead namespace */
	if (table_changed(b))
		follow_drift(b);
	if (op != LS_OP_MOUNTTABLE)  /* renderings made before are stale */
		fusetab_touched(b);
	err = w->serve(r, arg, f, a);
	if (op != LS_OP_MOUNTTABLE)  /* and those drawn while it ran */
		fusetab_touched(b);
	if (table_changed(b))      /* the broker's own changes: the kernel's */
		fusetab_changed(b);  /* event is taken, every table is told */
	return err;
}
