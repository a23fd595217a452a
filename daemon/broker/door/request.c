/* request.c: the system calls a caller forwards, each checked in the
 * kernel's order (target lookup, flags, privilege, then the operation's own
 * checks in the engine), planned, executed and committed as one request.
 *
 * A request that meets a stale name (a directory renamed since the graph
 * learned it, EIO from the lookup or the executor) runs again after the
 * graph's names are read again from the kernel, a few times at most: the
 * graph names places by path, the kernel by dentry.
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
#include "door/door.h"
#include "exec/exec.h"
#include "hold/hold.h"
#include "resolve/resolve.h"

enum { RETRIES = 10 };         /* names read again while renames race us */

/* The caller as the engine sees it; root's directory lives in *buf. */
static int caller_of(struct request *r, struct caller *c, char **buf)
{
	struct broker *b = r->b;
	const char *path = peer_root(&r->caller);
	struct stat st;
	c->privileged = r->caller.cap_admin;
	int err, kid, root;
	/* a root with no path (none kept, or fd_path() failed) is an
	 * error even if nothing set errno: c->root stays unset then */
	if (!path || fd_stat_kid(r->caller.root, &st, &kid, &root) < 0)
		err = errno ? -errno : -EIO;
	else
		err = fd_loc_kid(b, kid < 0 ? fd_mnt_id(r->caller.root) : kid,
				 root, path, &st, &c->root, buf);
	/* -fanalyzer's uninitialised c->root: fd_loc_at() (fd.c) sets
	 * it whenever it returns 0 */
	c->ns = err ? b->ns : c->root.m->ns;   /* its root's (ns.c) */
	return err;
}

/* A new filesystem: the kernel makes it first (at the broker's staging
 * place), which is also the kernel's order: its errors (ENODEV, bad
 * options, no device) come before those of attaching it (EBUSY, ENOTDIR,
 * ENOSPC).  Its superblock says whether the graph has the filesystem
 * already (a device mounted again, sysfs). */
static int mount_new(struct request *r, const struct caller *c, struct loc at,
		     const char *source, const char *type, unsigned long ms,
		     const char *data)
{
	struct broker *b = r->b;
	if (!type)
		return -EINVAL;
	int err = stage_new(r, source, type, ms, data);
	if (err)
		return err;
	int kid = r->staged_kid;   /* read by stage_new() */
	struct fs *fs = fs_of_dev(b, r->staged_st.st_dev);
	if (!fs && (fs = fs_new(&b->g, type, "")))
		fs_learn_kid(fs, kid < 0 ? fd_mnt_id(r->staged) : kid);
	if (!fs) {
		unstage(r);
		return -ENOMEM;
	}
	fs->refs++;                /* ours, whatever the plan does */
	plan_begin(&b->g);
	err = apply_plan(r, op_mount_fs(&b->g, c, at, fs, source ? source : "none",
				   ms));
	fs_put(fs);
	unstage(r);
	return err;
}

/* BIND and MOVE: the source is looked up after the privilege check. */
static int mount_two(struct request *r, const struct caller *c, struct loc at,
		     const char *source, int kind, unsigned long ms)
{
	struct broker *b = r->b;
	struct named from;
	if (!source || !*source)
		return kind == CALL_BIND ? -EINVAL : -ENOENT;
	int err = resolve(r, source, RES_FOLLOW, &from);
	if (err)               /* a detached source: EINVAL (check_mnt()) */
		return err == -E_DETACHED ? -EINVAL : err;
	/* an rbind copies mounts by their names below the source */
	if (kind == CALL_BIND && (ms & LS_MS_REC) &&
	    !names_fresh(b, from.at) && refresh_paths(b) > 0) {
		named_free(&from);
		return -EIO;   /* names read again: looked up again */
	}
	r->source = &from;
	plan_begin(&b->g);
	err = apply_plan(r, kind == CALL_MOVE ? op_move(&b->g, c, from.at, at) :
		    op_bind(&b->g, c, from.at, at, ms & LS_MS_REC));
	r->source = NULL;
	named_free(&from);
	return err;
}

/* What is mounted on m or taken off it reaches m's receivers by the names
 * of their roots: read again when a rename made them stale (EIO: the
 * request runs again with the new names). */
static int roots_checked(struct broker *b, struct mount *m)
{
	return !m || roots_fresh(b, m) || refresh_paths(b) == 0 ? 0 : -EIO;
}

/* A target on a mount unmounted with MNT_DETACH (E_DETACHED): changing
 * that mount is EINVAL (check_mnt()); a mount on it is ENOENT
 * (lock_mount()), after the kernel has looked up the source or made the
 * new filesystem, whose errors come first. */
static int mount_detached(struct request *r, int kind, const char *source,
			  const char *type, const char *data, unsigned long ms)
{
	struct named from = { .fd = -1 };
	int err;
	switch (kind) {
	case CALL_REMOUNT_BIND:
	case CALL_REMOUNT:
	case CALL_CHANGE:
		return -EINVAL;
	case CALL_BIND:
	case CALL_MOVE:
		if (!source || !*source)
			return kind == CALL_BIND ? -EINVAL : -ENOENT;
		err = resolve(r, source, RES_FOLLOW, &from);
		named_free(&from);
		return err && err != -E_DETACHED ? err : -ENOENT;
	default:
		if (!type)
			return -EINVAL;
		if ((err = stage_new(r, source, type, ms, data)))
			return err;
		unstage(r);
		return -ENOENT;
	}
}

static int mount_once(struct request *r, const char *source, const char *target,
		      const char *type, const char *data, unsigned long ms)
{
	struct broker *b = r->b;
	struct caller c;
	struct named at = { .fd = -1 };
	char *rootbuf = NULL;
	int kind, err = resolve(r, target, RES_FOLLOW, &at);
	bool detached = err == -E_DETACHED;

	if (err && !detached)
		return err;
	r->target = detached ? NULL : &at;
	if ((kind = mount_call(&ms)) < 0) {
		err = kind;
	} else if (!r->caller.cap_admin) {
		err = -EPERM;
	} else if (detached) {
		err = mount_detached(r, kind, source, type, data, ms);
	} else if (!(err = caller_of(r, &c, &rootbuf))) {
		r->data = data;
		plan_begin(&b->g);
		switch (kind) {
		case CALL_REMOUNT_BIND:
		case CALL_REMOUNT:
			err = apply_plan(r, op_remount(&b->g, &c, at.at, ms));
			break;
		case CALL_CHANGE:
			err = apply_plan(r, op_change(&b->g, &c, at.at, (int)ms));
			break;
		case CALL_BIND:
		case CALL_MOVE:
			plan_abandon(&b->g);
			err = named_top(b, &at, false) ?:
			      roots_checked(b, at.at.m) ?:
			      mount_two(r, &c, at.at, source, kind, ms);
			break;
		default:
			plan_abandon(&b->g);
			err = named_top(b, &at, false) ?:
			      roots_checked(b, at.at.m) ?:
			      mount_new(r, &c, at.at, source, type, ms, data);
		}
		r->data = NULL;
	}
	r->target = NULL;
	named_free(&at);
	free(rootbuf);
	return err;
}

int call_mount(struct request *r, const char *source, const char *target,
	       const char *type, const char *data, unsigned long ms)
{
	struct broker *b = r->b;
	if (!target)
		return -EFAULT;
	int err = mount_once(r, source, target, type, data, ms);
	for (int i = 0; i < RETRIES && err == -EIO; i++) {
		refresh_paths(b);
		err = mount_once(r, source, target, type, data, ms);
	}
	return err;
}

/* umount2() planned and carried out; with MNT_EXPIRE, the engine's
 * -EAGAIN for an unmarked mount asks the kernel to mark it (expire.c). */
static int umount_apply(struct request *r, struct caller *c, struct loc at,
			int flags)
{
	struct graph *g = &r->b->g;
	plan_begin(g);
	int err = op_umount(g, c, at, flags, mount_busy, r);
	if (err != -EAGAIN || !(flags & LS_MNT_EXPIRE) || at.m->expiry_mark)
		return apply_plan(r, err);
	plan_abandon(g);
	return expiry_mark(r, at.m);
}

static int umount_once(struct request *r, const char *target, int flags)
{
	struct broker *b = r->b;
	struct caller c;
	struct named at;
	char *rootbuf = NULL;
	int how = (flags & LS_UMOUNT_NOFOLLOW ? RES_NOFOLLOW : RES_FOLLOW) |
		  (flags & LS_MNT_EXPIRE ? RES_MOUNTPOINT : 0);
	int err = resolve(r, target, how, &at);
	if (err == -E_DETACHED)    /* can_umount(): privilege, check_mnt() */
		return r->caller.cap_admin ? -EINVAL : -EPERM;
	if (!err && ((err = named_top(b, &at, flags & LS_MNT_EXPIRE)) ||
		     (err = roots_checked(b, at.at.m->parent))))
		named_free(&at);
	if (err)
		return err;
	r->target = &at;
	if (!(err = caller_of(r, &c, &rootbuf))) {
		r->busy_known = r->busy_all = false;
		err = umount_apply(r, &c, at.at, flags);
	}
	r->target = NULL;
	named_free(&at);
	free(rootbuf);
	return err;
}

int call_umount(struct request *r, const char *target, int flags)
{
	struct broker *b = r->b;
	int err = op_umount_flags_ok(flags);
	if (err)
		return err;
	if (!target)
		return -EFAULT;
	err = umount_once(r, target, flags);
	for (int i = 0; i < RETRIES && err == -EIO; i++) {
		refresh_paths(b);
		err = umount_once(r, target, flags);
	}
	return err;
}

/* pivot_root(2): the engine moves the mounts; the caller's process is
 * re-rooted by the shim with the descriptor *newroot of the new root (the
 * broker cannot chroot another process).  *cwd_too says whether the
 * caller's cwd was its root, which the kernel moves along. */
int call_pivot_root(struct request *r, const char *new_root,
		    const char *put_old, int *newroot, bool *cwd_too)
{
	struct broker *b = r->b;
	struct caller c;
	struct named new = { .fd = -1 }, old = { .fd = -1 };
	char *rootbuf = NULL, at[64];
	struct stat cw, rt;
	int err;

	if (!r->caller.cap_admin)
		return -EPERM;         /* before the paths are read */
	if (!new_root || !put_old)
		return -EFAULT;
	/* on detached mounts: put_old's lock_mount() ENOENT comes before
	 * new_root's check_mnt() EINVAL */
	int gone = resolve(r, new_root, RES_FOLLOW, &new);
	if (gone && gone != -E_DETACHED)
		return gone;
	if ((err = resolve(r, put_old, RES_FOLLOW, &old)) == -E_DETACHED)
		err = -ENOENT;
	if (err || (err = gone ? -EINVAL : 0) ||
	    (err = named_top(b, &old, false)) ||
	    (err = caller_of(r, &c, &rootbuf)))
		goto out;
	*cwd_too = fd_stat(peer_cwd(&r->caller), &cw) == 0 &&
		   fd_stat(r->caller.root, &rt) == 0 && cw.st_dev == rt.st_dev &&
		   cw.st_ino == rt.st_ino &&
		   fd_mnt_id(r->caller.cwd) == fd_mnt_id(r->caller.root);
	struct mount *nm = new.at.m;
	r->target = &old;
	plan_begin(&b->g);
	err = apply_plan(r, op_pivot_root(&b->g, &c, new.at, old.at));
	r->target = NULL;
	if (!err) {
		snprintf(at, sizeof at, "/proc/self/fd/%d", handle_of(b, nm)->fd);
		*newroot = open(at, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
out:
	named_free(&new);
	named_free(&old);
	free(rootbuf);
	return err;
}
