/* copy.c: a BIND step's mount made straight on its place.  The kernel
 * binds the source's handle onto the place, opened beneath the parent's
 * handle as open_loc() opens places (no symlink followed, no other mount
 * crossed on the way), and the copy's handle is then opened by the
 * place's name from its directory.  No staging directory, no move, no
 * rmdir: those were most of a fan-out's cost (issue 10).
 *
 * What this way cannot reach goes the staged way (exec.c make(), which
 * this returns -EAGAIN for): a copy on its parent's own root (no
 * directory to name it from), a place behind a covered directory (the
 * staged way moves covers aside), any error before the kernel is asked.
 *
 * Crash recovery: before the bind, the step's progress records "P", the
 * kernel id of the mount on top of the place and the source's superblock
 * (intent_pending()); the record's "to" is the place's path.  A broker
 * killed after the bind but before "D" leaves a copy recover.c finds as
 * the one mount of that superblock at that path whose parent is that
 * top: the top had nothing on it when the bind began.  A fan-out's
 * copies go in batches (execplan.c): each prepared (copy_prepare(): its
 * place opened, the top known), the "P" of all written in one write, then
 * each bound (copy_make()); recovery looks for every copy of a batch
 * whose record says "P".  Two copies of a batch never share a parent, so
 * none goes on another's place and each top stays true.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "exec/exec.h"
#include "hold/hold.h"
#include "persist/persist.h"

/* The directory of place (p, dir), opened beneath p's handle (p's
 * handle itself, *own false, when it is p's root: a receiver's own
 * directory, the common case), and the place's last name; -EAGAIN when
 * dir is p's root or its last name is not a plain one. */
static int open_dir(struct request *r, struct mount *p, const char *dir,
		    int *fd, bool *own, char name[NAME_MAX + 1])
{
	const char *slash = strrchr(dir, '/');
	size_t len = slash ? strlen(slash + 1) : 0;
	const struct handle *h = handle_of(r->b, p);
	if (!h || !len || len > NAME_MAX || strcmp(dir, p->root) == 0 ||
	    !dir_under(dir, p->root) || strcmp(slash + 1, ".") == 0 ||
	    strcmp(slash + 1, "..") == 0)
		return -EAGAIN;
	memcpy(name, slash + 1, len + 1);
	char *up = strndup(dir, slash == dir ? 1 : (size_t)(slash - dir));
	int err = up ? 0 : -ENOMEM;
	*own = up && strcmp(up, p->root) != 0;
	if (!*own)
		*fd = h->fd;
	else
		err = open_loc(r, p, up, false, fd, NULL);
	free(up);
	return err;
}

/* The source of the copy m: its source's handle itself when m shows that
 * mount's whole root, or the caller's own source there, which the request
 * holds until its answer (*own false: not a dup() and a close() more);
 * else a place opened beneath it. */
static int open_source(struct request *r, const struct step *s,
		       const struct mount *m, int *fd, bool *own,
		       const struct handle **sh)
{
	struct mount *src = mount_by_id(&r->b->g, s->src);
	*sh = src ? handle_of(r->b, src) : NULL;
	if (!*sh)
		return -EAGAIN;
	*own = strcmp(m->root, src->root) != 0;
	if (!*own) {
		*fd = (*sh)->fd;
		return 0;
	}
	if ((*fd = named_fd(r, src, m->root, false)) >= 0) {
		*own = false;
		return 0;
	}
	return open_loc(r, src, m->root, false, fd, NULL);
}

/* The place itself, which must not be a symlink (one swapped in since
 * the lookup, as open_loc() refuses it): a directory's by O_DIRECTORY,
 * which fails on one, at no cost; a file's by its type. */
static int open_place(int dir, const char *name, bool file)
{
	struct stat st;
	int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC |
			(file ? 0 : O_DIRECTORY));
	if (fd >= 0 && file && (fd_stat(fd, &st) < 0 || S_ISLNK(st.st_mode))) {
		close(fd);
		return -ELOOP;
	}
	return fd < 0 ? -errno : fd;
}

/* The mount id and the attributes of fd in one statx() where the kernel
 * gives the id (Linux 5.8), which saves each copy a name_to_handle_at();
 * else as fd_mnt_id() and fd_stat() find them (older kernels, the legacy
 * simulation's, where statx() is absent). */
static int copy_stat(int fd, struct stat *st)
{
#if defined(STATX_MNT_ID) && defined(__GLIBC__)
	static bool lacks;         /* no statx(), or no id in it: asked once */
	struct statx x;
	if (!lacks) {
		long n = syscall(SYS_statx, fd, "", AT_EMPTY_PATH |
				 AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MODE |
				 STATX_MNT_ID, &x);
		if (n == 0 && (x.stx_mask & STATX_MNT_ID)) {
			*st = (struct stat){
				.st_dev = makedev(x.stx_dev_major,
						  x.stx_dev_minor),
				.st_mode = x.stx_mode,
			};
			return x.stx_mnt_id <= INT_MAX ? (int)x.stx_mnt_id : -1;
		}
		lacks = n == 0 || errno == ENOSYS || errno == EPERM;
	}
#endif
	int kid = fd_mnt_id(fd);
	return kid < 0 || fd_stat(fd, st) < 0 ? -1 : kid;
}

/* The copy just bound on place c->at, taken as its mount's handle.  What
 * the name opens must be a mount the graph does not know, of the
 * source's superblock: else the jail renamed another directory into the
 * place before the bind, which then went onto the old one, wherever it
 * is now; that copy is detached (umount2 takes the top of the place's
 * stack, LOOKUP_MOUNTPOINT) and the request meets a stale name (EIO,
 * request.c runs it again). */
static int take_copy(struct broker *b, const struct copy *c)
{
	struct stat st;
	char buf[64];
	int fd = openat(c->dir, c->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int kid = fd >= 0 ? copy_stat(fd, &st) : -1;
	int err = fd < 0 ? -errno : 0;
	if (!err && (kid < 0 || kid == c->top || mount_of_kid(b, kid) ||
		     st.st_dev != c->sh->dev))
		err = -EIO;
	if (!err && !(err = handle_set(b, c->m, fd, kid, &st)))
		return 0;
	log_msg(LOG_WARNING, "mount %u: its copy at %s is not where it was "
		"bound: detached", c->m->id, c->m->mp);
	if (fd >= 0)
		close(fd);
	umount2(FDPATH(buf, c->at), MNT_DETACH);
	return err;
}

/* Step s (BIND, with a parent) made ready to be bound on its place: its
 * descriptors opened and the mount on top of the place known;  -EAGAIN:
 * not this way, nothing held. */
int copy_prepare(struct request *r, const struct step *s, struct copy *c)
{
	struct broker *b = r->b;
	struct mount *p = mount_by_id(&b->g, s->parent);
	*c = (struct copy){ .s = s, .m = mount_by_id(&b->g, s->mnt),
			    .dir = -1, .src = -1, .at = -1 };
	if (!c->m || !p ||
	    open_dir(r, p, s->dir, &c->dir, &c->owndir, c->name) < 0)
		return -EAGAIN;
	if (open_source(r, s, c->m, &c->src, &c->ownsrc, &c->sh) < 0 ||
	    (c->at = open_place(c->dir, c->name, c->sh->m->file)) < 0 ||
	    (c->top = fd_mnt_id(c->at)) < 0) {
		copy_release(c);   /* the staged way gives the kernel's errno */
		return -EAGAIN;
	}
	return 0;
}

/* The descriptors c holds closed. */
void copy_release(struct copy *c)
{
	if (c->at >= 0)
		close(c->at);
	if (c->ownsrc && c->src >= 0)
		close(c->src);
	if (c->owndir && c->dir >= 0)
		close(c->dir);
	c->at = c->src = c->dir = -1;
}

/* The copy c bound, its progress "P" already recorded: the kernel's
 * errno, or its handle taken. */
int copy_make(struct request *r, const struct copy *c)
{
	char from[64], to[64];
	if (mount(FDPATH(from, c->src), FDPATH(to, c->at), NULL, MS_BIND,
		  NULL) < 0)
		return -errno;
	fault_copy();
	return take_copy(r->b, c);
}

/* Step s (BIND, with a parent) made on its place; -EAGAIN: not this way,
 * nothing done. */
int copy_bind(struct request *r, const struct step *s)
{
	struct copy c;
	if (copy_prepare(r, s, &c) < 0)
		return -EAGAIN;
	/* the record itself with the "P" of a plan's first step */
	int err = intent_pending(r->b, s, c.top, c.sh->dev) ?: copy_make(r, &c);
	copy_release(&c);
	return err;
}
