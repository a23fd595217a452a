/* named.c: a place of the graph from a descriptor on it, and a caller's
 * named place taken to the top of its stack: the way from what the kernel
 * says of a descriptor (fd.c) to the mounts the broker holds (handle.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "hold/hold.h"

/* The place of the graph an O_PATH descriptor is at: its mount from the
 * kernel's mount id, its directory from where the kernel has it now
 * relative to where it has the mount's root now (both read the same way,
 * so a rename of a directory above does not matter). */
int fd_loc(struct broker *b, int fd, struct loc *out, char **dirbuf)
{
	struct stat st;
	char *path = fd_path(fd);
	int kid, root, err = !path || fd_stat_kid(fd, &st, &kid, &root) < 0 ?
			     -errno : fd_loc_kid(b, kid < 0 ? fd_mnt_id(fd) : kid,
						 root, path, &st, out, dirbuf);
	free(path);
	return err;
}

/* The same, with fd's path (fd_path()) and status already read.  A
 * descriptor on a mount that no table holds (unmounted with MNT_DETACH,
 * through the broker or behind its back) gives -E_DETACHED. */
int fd_loc_at(struct broker *b, int fd, const char *path,
	      const struct stat *st, struct loc *out, char **dirbuf)
{
	return fd_loc_kid(b, fd_mnt_id(fd), -1, path, st, out, dirbuf);
}

/* The same, with its mount's id read too, and whether it is on that
 * mount's root (root 1; 0 or -1: not, or not known): then the handle,
 * on the same root of the same mount, has the same path, not read again
 * (an unmount's target is one). */
int fd_loc_kid(struct broker *b, int kid, int root, const char *path,
	       const struct stat *st, struct loc *out, char **dirbuf)
{
	struct mount *m = mount_of_kid(b, kid);
	if (!m && !kid_mounted(kid))
		return -E_DETACHED;
	struct handle *h = m ? handle_awake(b, m) : NULL;  /* expire.c */
	char *top = !h ? NULL : root == 1 ? strdup(path) :
		    handle_path(b, h);   /* paths.c */
	int err = -EIO;
	if (!top) {
		log_msg(LOG_WARNING, "%s: on a mount the broker does not know",
			path);
	} else if (strlen(path) > 10 &&
		   strcmp(path + strlen(path) - 10, " (deleted)") == 0) {
		err = -ENOENT;
	} else if (!path_under(path, top)) {
		log_msg(LOG_WARNING, "%s: not under its mount's root %s", path,
			top);
	} else {
		const char *rel = strcmp(top, "/") == 0 ? path :
				  path + strlen(top);
		if (strcmp(rel, "/") == 0)
			rel = "";
		err = asprintf(dirbuf, "%s%s", strcmp(m->root, "/") == 0 &&
			       *rel ? "" : m->root, rel) < 0 ? -ENOMEM : 0;
		*out = (struct loc){ .m = m, .dir = *dirbuf,
				     .file = !S_ISDIR(st->st_mode) };
	}
	free(top);
	return err;
}

/* A name's descriptor and directory go (resolve() made them). */
void named_free(struct named *n)
{
	if (n->fd >= 0)
		close(n->fd);
	free(n->buf);
	n->fd = -1;
	n->buf = NULL;
}

/* Takes n to the topmost mount on its place.  The walk crosses into the
 * top of a stack at every name it opens, ".." included (fs/namei.c
 * handle_dots() steps into the parent's mounts); only where it opened no
 * name at the end ("." and a trailing "/." from the caller's cwd or root,
 * "/") is it still beneath a stack: a cwd that was covered since keeps the
 * dentry beneath.  Then the kernel goes to the top for umount's last
 * component (LOOKUP_MOUNTPOINT, handle_lookup_down()) and for the place a
 * new mount, a bind, a move or pivot_root's put_old goes (do_lock_mount()),
 * not for a bind's or a move's source, pivot_root's new_root, a remount
 * or a change of type (docs/semantics.md 3.2, 5.1, 7).  A sleeping top
 * (expire.c) wakes, as a lookup that ends on it clears the kernel's mark
 * (mntput()), but for umount2(MNT_EXPIRE), whose lookup drops its
 * reference with mntput_no_expire(): the sleeper stays named, no
 * descriptor, as resolve.c's last name does. */
int named_top(struct broker *b, struct named *n, bool expire)
{
	struct mount *m = n->at.m, *c;
	const char *dir = n->at.dir;
	while ((c = mount_at(&b->g, m, dir))) {
		m = c;
		dir = c->root;
	}
	if (m == n->at.m)
		return 0;
	struct handle *h = handle_known(b, m);
	bool sleeps = h && h->asleep && expire;
	if (h && !sleeps)
		h = handle_awake(b, m);
	int fd = h && !sleeps ? dup(h->fd) : -1;
	char *buf = strdup(m->root);
	if ((fd < 0 && !sleeps) || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return h ? -ENOMEM : -EIO;
	}
	named_free(n);
	n->fd = fd;
	n->buf = buf;
	n->at = (struct loc){ .m = m, .dir = buf, .file = m->file };
	return 0;
}

/* Whether c is where the graph names it: its handle at its parent's,
 * whose path is top (or read, when NULL), and its mountpoint's name below
 * the parent's root.  Mounts out of reach or asleep (expire.c) pass. */
static bool name_fresh(const struct broker *b, const struct mount *c,
		       const char *top)
{
	const struct mount *p = c->parent;
	const struct handle *h = handle_known(b, c), *hp = handle_known(b, p);
	if (!h || h->fd < 0 || (!top && (!hp || hp->fd < 0)))
		return true;
	char *own = top ? NULL : handle_path(b, hp), *is = handle_path(b, h);
	char *want = NULL;
	const char *rel = c->mp + (strcmp(p->root, "/") ? strlen(p->root) : 0);
	if (strcmp(rel, "/") == 0)
		rel = "";          /* on the parent's root: at its path */
	top = top ? top : own;
	bool fresh = is && top && dir_under(c->mp, p->root) &&
		     asprintf(&want, "%s%s", strcmp(top, "/") == 0 && *rel ?
			      "" : top, rel) >= 0 && strcmp(want, is) == 0;
	free(want);
	free(is);
	free(own);
	return fresh;
}

/* Whether the graph's names of the mounts below at are the kernel's: a
 * rename of a directory above a mountpoint changes where the kernel has
 * the mount and signals nothing (an rbind of at would miss or misplace
 * it; refresh_paths() reads the names again).  A readlink for each of
 * at.m's children, two for each mount below those in at. */
bool names_fresh(const struct broker *b, struct loc at)
{
	const struct handle *h = handle_known(b, at.m);
	char *top = h && h->fd >= 0 ? handle_path(b, h) : NULL;
	bool fresh = true;
	if (!top)
		return true;
	/* every child of at.m (a rename may take one in or out of dir),
	 * and below those in dir, each against its parent: no recursion,
	 * however deep a jail nests its mounts */
	for (struct list *l = at.m->mounts.next; fresh && l != &at.m->mounts;
	     l = l->next) {
		struct mount *c = list_entry(l, struct mount, child), *d = c;
		fresh = name_fresh(b, c, top);
		if (!dir_under(c->mp, at.dir))
			continue;
		while (fresh && (d = next_in_tree(d, c)))
			fresh = name_fresh(b, d, NULL);
	}
	free(top);
	return fresh;
}

/* The directory rel below the root of the mount held by dir, as
 * roots_fresh() last read it: a fan-out's receivers mostly ask of one. */
struct rootmemo {
	int dir;
	const char *rel;       /* NULL: nothing read yet */
	bool found;
	struct stat st;
};

/* Whether the directory rel below the root of the mount held by dir is
 * the root of the mount held by fd: a statx() of rel (not opened, no
 * symlink followed), once for the receivers that ask of the same, and
 * one of fd. */
static bool root_is(int dir, const char *rel, int fd, struct rootmemo *memo)
{
	struct stat b;
	int kid, root;
	if (!memo->rel || memo->dir != dir || strcmp(memo->rel, rel) != 0) {
		memo->dir = dir;
		memo->rel = rel;
		memo->found = name_stat_kid(dir, *rel ? rel : ".", &memo->st,
					    &kid, &root) == 0;
	}
	return memo->found && fd_stat(fd, &b) == 0 &&
	       memo->st.st_dev == b.st_dev && memo->st.st_ino == b.st_ino;
}

/* Whether the roots of the mounts m propagates to are where the graph
 * names them, as far as m's own root tells: a receiver bound from a
 * directory below m's root must be that directory of m, and the other
 * way round.  A rename of such a directory signals nothing, and the
 * graph would carry a mount to the wrong receivers.  Receivers with m's
 * root, the usual whole binds, cost nothing; disjoint roots are left
 * unchecked (refresh_paths() reads them where a name fails). */
bool roots_fresh(const struct broker *b, struct mount *m)
{
	const struct handle *hm = m->group ? handle_known(b, m) : NULL;
	struct rootmemo memo = { .rel = NULL };
	bool fresh = true;
	if (!hm || hm->fd < 0)
		return true;
	for (struct mount *r = propagation_next(m, m); fresh && r;
	     r = propagation_next(r, m)) {
		const struct handle *hr = handle_known(b, r);
		if (!hr || hr->fd < 0 || strcmp(r->root, m->root) == 0)
			continue;
		if (dir_under(r->root, m->root))
			fresh = root_is(hm->fd, r->root + strlen(m->root) +
					(strcmp(m->root, "/") != 0), hr->fd,
					&memo);
		else if (dir_under(m->root, r->root))
			fresh = root_is(hr->fd, m->root + strlen(r->root) +
					(strcmp(r->root, "/") != 0), hm->fd,
					&memo);
	}
	return fresh;
}
