/* named.c: a place of the graph from a descriptor on it, and a caller's
 * named place taken to the top of its stack: the way from what the kernel
 * says of a descriptor (fd.c) to the mounts the broker holds (handle.c).
 */
#include <errno.h>
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
