/* resolve.c: what a caller's paths name.
 *
 * Security: the caller's root and cwd come from the kernel (identity.c), never
 * from the message.  Paths are walked one
 * component at a time from the caller's root or cwd with O_PATH|O_NOFOLLOW;
 * ".." stops at the caller's root, symlinks are expanded here (absolute
 * ones restart at the caller's root), and procfs magic links, which
 * jump to wherever some descriptor points, are followed only where they
 * land inside the caller's root.  So no spelling of a path, and no symlink
 * swapped in meanwhile, reaches outside the jail: the walk never asks the
 * kernel to resolve more than one name, bar a magic link whose end is
 * checked.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "hold/hold.h"
#include "resolve/resolve.h"

#define MAXLINKS 40            /* the kernel's MAXSYMLINKS */
#define PATHMAX 4096

static bool in_group(const struct peer *p, gid_t g)
{
	if (g == p->gid)
		return true;
	for (int i = 0; i < p->ngroups; i++)
		if (p->groups[i] == g)
			return true;
	return false;
}

/* May the caller look up names in this directory (x permission)? */
static int may_search(struct peer *p, int dir)
{
	struct stat st;
	if (p->cap_search)
		return 0;
	peer_creds(p);
	if (fd_stat(dir, &st) < 0)
		return -errno;
	mode_t bit = st.st_uid == p->uid ? S_IXUSR :
		     in_group(p, st.st_gid) ? S_IXGRP : S_IXOTH;
	return st.st_mode & bit ? 0 : -EACCES;
}

/* The same directory of the same mount (for ".." at the caller's root). */
static bool same_place(int a, int b)
{
	struct stat sa, sb;
	return fd_stat(a, &sa) == 0 && fd_stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
	       fd_mnt_id(a) == fd_mnt_id(b);
}

static void replace(int *cur, int fd)
{
	close(*cur);
	*cur = fd;
}

/* Whether m is a procfs mount, by the type the kernel gave it: fstatfs
 * would ask the filesystem, and one whose server hangs (FUSE, NFS) would
 * never answer. */
static bool on_proc(const struct mount *m)
{
	return m && m->fs && m->fs->type && strcmp(m->fs->type, "proc") == 0;
}

/* Whether name, a symlink in directory dir, is one of procfs's magic
 * links (fd/N, cwd, root, exe...): a jump to wherever the kernel has the
 * object, with no text to expand.  self and thread-self, in procfs's root,
 * are plain links (link_text()). */
static bool magic(const struct mount *m, int dir)
{
	struct stat st;
	return on_proc(m) && fd_stat(dir, &st) == 0 && st.st_ino != 1;
}

/* A symlink's text, for the caller: procfs's self and thread-self name
 * the caller, not the broker. */
static int link_text(const struct peer *p, const struct mount *m, int fd,
		     const char *name, char *buf, size_t size)
{
	if (on_proc(m)) {
		if (strcmp(name, "self") == 0)
			return snprintf(buf, size, "%d", (int)p->pid);
		if (strcmp(name, "thread-self") == 0)
			return snprintf(buf, size, "%d/task/%d", (int)p->pid,
					(int)p->pid);
	}
	ssize_t n = readlinkat(fd, "", buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

struct walk {
	struct broker *b;
	struct peer *p;
	int cur;
	char *rest;            /* what is left of the path, malloc'ed */
	size_t pos;
	int links;
	/* where cur is in the graph, kept from the names walked (reading
	 * it back from the kernel's path would race with renames) */
	struct mount *m;
	int kid;
	char *dir;             /* malloc'ed */
	struct mount *sleeper; /* the last name's, not looked up (expire.c) */
};

/* The place of cur read from the kernel: at the start, and after a jump
 * (an absolute symlink, ".." out of a mount). */
static int place_from_fd(struct walk *w)
{
	struct loc l;
	char *buf;
	int err = fd_loc(w->b, w->cur, &l, &buf);
	if (err)
		return err;
	free(w->dir);
	w->dir = buf;
	w->m = l.m;
	w->kid = fd_mnt_id(w->cur);
	return 0;
}

/* cur went down to name: the same mount, or the root of the topmost one
 * mounted there. */
static int place_down(struct walk *w, const char *name)
{
	int kid = fd_mnt_id(w->cur);
	char *dir;
	if (kid != w->kid) {
		struct mount *m = mount_of_kid(w->b, kid);
		if (!m)
			return place_from_fd(w);   /* logs the unknown mount */
		w->m = m;
		w->kid = kid;
		dir = strdup(m->root);
	} else if (asprintf(&dir, "%s/%s", strcmp(w->dir, "/") == 0 ? "" :
			    w->dir, name) < 0) {
		dir = NULL;
	}
	if (!dir)
		return -ENOMEM;
	free(w->dir);
	w->dir = dir;
	return 0;
}

/* cur went up (".."): within the mount, or out of it. */
static int place_up(struct walk *w)
{
	char *slash = strrchr(w->dir, '/');
	if (fd_mnt_id(w->cur) != w->kid || strcmp(w->dir, w->m->root) == 0 ||
	    !slash)
		return place_from_fd(w);
	if (slash == w->dir)
		slash++;           /* "/a" goes to "/" */
	*slash = '\0';
	return 0;
}

/* Follows procfs's magic link name in w->cur, as the kernel follows it for
 * the caller: where it stays inside the caller's root.  The kernel would
 * also follow one that leads out (an fd opened before chroot, another
 * process's root): that is the one escape from a chroot the broker does
 * not lend, ELOOP as RESOLVE_NO_MAGICLINKS answers.  Another process's
 * links are the caller's only with privilege (ptrace's rule, roughly). */
static int follow_magic(struct walk *w, const char *name)
{
	char *end;
	long pid = strtol(w->dir + (w->dir[0] == '/'), &end, 10);
	if ((pid != w->p->pid || (*end && *end != '/')) && !w->p->cap_admin)
		return -EACCES;
	if (++w->links > MAXLINKS)
		return -ELOOP;
	int fd = openat(w->cur, name, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!fd_within(fd, w->p->root)) {
		close(fd);
		return -ELOOP;
	}
	replace(&w->cur, fd);
	return place_from_fd(w);
}

/* Follows the symlink fd (named name) met in the walk: its text goes in
 * front of what is left. */
static int follow(struct walk *w, int fd, const char *name)
{
	char text[PATHMAX + 1], *rest;
	if (magic(w->m, w->cur))
		return follow_magic(w, name);
	int n = link_text(w->p, w->m, fd, name, text, sizeof text);
	if (n < 0)
		return n;
	if (++w->links > MAXLINKS)
		return -ELOOP;
	if (n == 0)
		return -ENOENT;
	if (asprintf(&rest, "%s/%s", text, w->rest + w->pos) < 0)
		return -ENOMEM;
	free(w->rest);
	w->rest = rest;
	w->pos = 0;
	if (text[0] == '/') {
		int root = dup(w->p->root);
		if (root < 0)
			return -errno;
		replace(&w->cur, root);
		return place_from_fd(w);
	}
	return 0;
}

/* name in cur, not followed: a descriptor or -errno.  In a filesystem
 * whose server may hang, the lookup is slow.c's (-EINPROGRESS: the
 * request waits aside). */
static int lookup(const struct walk *w, const char *name)
{
	if (fs_may_stall(w->m->fs))
		return slow_openat(w->cur, name);
	int fd = openat(w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The sleeping mount (expire.c) on top of name in the walk's directory,
 * if there is one: umount2(MNT_EXPIRE)'s last name.  The kernel's lookup
 * of it drops a reference without clearing its mark; ours would clear
 * it, so the graph, which has every mount there, names it instead. */
static struct mount *sleeper_at(const struct walk *w, const char *name)
{
	struct graph *g = &w->b->g;
	char *dir;
	if (!w->b->nasleep || asprintf(&dir, "%s/%s", strcmp(w->dir, "/") ?
				       w->dir : "", name) < 0)
		return NULL;
	struct mount *c = mount_at(g, w->m, dir), *t;
	free(dir);
	while (c && (t = mount_at(g, c, c->root)))
		c = t;
	struct handle *h = c ? handle_known(w->b, c) : NULL;
	return h && h->asleep ? c : NULL;
}

/* One name of the walk; *last when nothing but slashes follows it. */
static int step(struct walk *w, const char *name, bool last, bool slash,
		int how)
{
	if (strcmp(name, ".") == 0)
		return may_search(w->p, w->cur);
	if (strcmp(name, "..") == 0) {
		int err = may_search(w->p, w->cur), fd;
		if (err || same_place(w->cur, w->p->root))
			return err;
		if ((fd = openat(w->cur, "..", O_PATH | O_CLOEXEC)) < 0)
			return -errno;
		replace(&w->cur, fd);
		return place_up(w);
	}
	int err = may_search(w->p, w->cur);
	if (err)
		return err;
	if (last && (how & RES_MOUNTPOINT) &&
	    (w->sleeper = sleeper_at(w, name)))
		return slash && w->sleeper->file ? -ENOTDIR : 0;
	int fd = lookup(w, name);
	struct stat st;
	if (fd < 0)
		return fd;
	if (fd_stat(fd, &st) < 0) {
		err = -errno;
	} else if (S_ISLNK(st.st_mode) &&
		   (!last || slash || !(how & RES_NOFOLLOW))) {
		err = follow(w, fd, name);
		close(fd);
		return err;
	} else if ((!last || slash) && !S_ISDIR(st.st_mode)) {
		err = -ENOTDIR;
	}
	if (err) {
		close(fd);
		return err;
	}
	replace(&w->cur, fd);
	return place_down(w, name);
}

/* The walk ended on a sleeping mount's name: its root, no descriptor. */
static int named_sleeper(struct walk *w, struct named *out)
{
	struct mount *m = w->sleeper;
	close(w->cur);
	free(w->dir);
	if (!(out->buf = strdup(m->root)))
		return -ENOMEM;
	out->fd = -1;
	out->at = (struct loc){ .m = m, .dir = out->buf, .file = m->file };
	return 0;
}

/* Walks path for the current caller to an O_PATH descriptor and its
 * place in the graph (out->at, its directory in out->buf). */
static int walk(struct request *r, const char *path, int how,
		struct named *out)
{
	struct broker *b = r->b;
	struct walk w = { .b = b, .p = (&r->caller) };
	struct stat st;
	int err = 0;
	if (!*path)
		return -ENOENT;
	if (strlen(path) >= PATHMAX)
		return -ENAMETOOLONG;
	int from = path[0] == '/' ? w.p->root : peer_cwd(w.p);
	w.cur = from < 0 ? -1 : dup(from);
	w.rest = strdup(path);
	if (from < 0)
		err = -ESRCH;          /* gone since it was identified */
	else if (w.cur < 0 || !w.rest)
		err = -ENOMEM;
	else
		err = place_from_fd(&w);
	while (!err) {
		char *s = w.rest + w.pos;
		while (*s == '/')
			s++;
		if (!*s)
			break;
		size_t n = strcspn(s, "/");
		char name[NAME_MAX + 1];
		if (n > NAME_MAX) {
			err = -ENAMETOOLONG;
			break;
		}
		memcpy(name, s, n);
		name[n] = '\0';
		const char *after = s + n;
		bool slash = *after == '/';
		while (*after == '/')
			after++;
		w.pos = (size_t)(after - w.rest);
		err = step(&w, name, !*after, slash, how);
	}
	free(w.rest);
	if (!err && w.sleeper)
		return named_sleeper(&w, out);
	if (!err && fd_stat(w.cur, &st) < 0)
		err = -errno;
	if (err) {
		if (w.cur >= 0)
			close(w.cur);
		free(w.dir);
		return err;
	}
	out->fd = w.cur;
	out->buf = w.dir;
	out->at = (struct loc){ .m = w.m, .dir = w.dir,
				.file = !S_ISDIR(st.st_mode) };
	return 0;
}

/* A caller's path as a place of the graph (the topmost mount there). */
/* The time until the plan (issue 10 item 8) counts as resolving. */
int resolve(struct request *r, const char *path, int how, struct named *out)
{
	phase(PHASE_RESOLVE);
	out->fd = -1;
	out->buf = NULL;
	if (!r->target && !r->source)
		paths_moved(r->b); /* an attempt's first name: after a stale
				      one (request.c), mounts' paths too are
				      read again (paths.c) */
	int err = quick_walk(r, path, how, out);
	if (err > 0)
		err = walk(r, path, how, out);
	phase(PHASE_PLAN);
	return err;
}
