/* calls.c: the system calls a caller forwards, each checked in the
 * kernel's order (target lookup, flags, privilege, then the operation's own
 * checks in the engine), planned, executed and committed as one request.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "broker.h"

/* The caller as the engine sees it; root's directory lives in *buf. */
static int caller_of(struct broker *b, struct caller *c, char **buf)
{
	c->privileged = b->peer->cap_admin;
	c->ns = b->ns;
	return fd_loc(b, b->peer->root, &c->root, buf);
}

/* Plans with op, executes, commits: all or nothing. */
static int apply(struct broker *b, int err)
{
	if (!err)
		err = exec_plan(b);
	if (err)
		plan_abandon(&b->g);
	else
		exec_commit(b);
	return err;
}

static int mount_new(struct broker *b, const struct caller *c, struct loc at,
		     const char *source, const char *type, unsigned long ms)
{
	if (!type)
		return -EINVAL;
	if (!*type)
		return -ENODEV;
	struct fs *fs = fs_new(&b->g, type, "");
	fs->refs++;                /* ours, whatever the plan does */
	plan_begin(&b->g);
	int err = apply(b, op_mount_fs(&b->g, c, at, fs,
				       source ? source : "none", ms));
	fs_put(fs);
	return err;
}

/* BIND and MOVE: the source is looked up after the privilege check. */
static int mount_two(struct broker *b, const struct caller *c, struct loc at,
		     const char *source, int kind, unsigned long ms)
{
	struct loc from;
	char *buf;
	if (!source || !*source)
		return kind == CALL_BIND ? -EINVAL : -ENOENT;
	int err = resolve(b, source, RES_FOLLOW, &from, &buf);
	if (err)
		return err;
	plan_begin(&b->g);
	err = apply(b, kind == CALL_MOVE ? op_move(&b->g, c, from, at) :
		    op_bind(&b->g, c, from, at, ms & LS_MS_REC));
	free(buf);
	return err;
}

int call_mount(struct broker *b, const char *source, const char *target,
	       const char *type, const char *data, unsigned long ms)
{
	struct caller c;
	struct loc at;
	char *atbuf = NULL, *rootbuf = NULL;
	int kind, err;

	if (!target)
		return -EFAULT;
	if ((err = resolve(b, target, RES_FOLLOW, &at, &atbuf)))
		return err;
	if ((kind = mount_call(&ms)) < 0) {
		err = kind;
	} else if (!b->peer->cap_admin) {
		err = -EPERM;
	} else if (!(err = caller_of(b, &c, &rootbuf))) {
		b->ms = ms;
		b->data = data;
		switch (kind) {
		case CALL_REMOUNT_BIND:
		case CALL_REMOUNT:
			plan_begin(&b->g);
			err = apply(b, op_remount(&b->g, &c, at, ms));
			break;
		case CALL_CHANGE:
			plan_begin(&b->g);
			err = apply(b, op_change(&b->g, &c, at, (int)ms));
			break;
		case CALL_BIND:
		case CALL_MOVE:
			err = mount_two(b, &c, at, source, kind, ms);
			break;
		default:
			err = mount_new(b, &c, at, source, type, ms);
		}
		b->data = NULL;
	}
	free(atbuf);
	free(rootbuf);
	return err;
}

int call_umount(struct broker *b, const char *target, int flags)
{
	struct caller c;
	struct loc at;
	char *atbuf = NULL, *rootbuf = NULL;
	int err = op_umount_flags_ok(flags);
	if (err)
		return err;
	if (!target)
		return -EFAULT;
	err = resolve(b, target, flags & LS_UMOUNT_NOFOLLOW ? RES_NOFOLLOW :
		      RES_FOLLOW, &at, &atbuf);
	if (!err)
		err = caller_of(b, &c, &rootbuf);
	if (!err) {
		b->busy_known = false;
		plan_begin(&b->g);
		err = apply(b, op_umount(&b->g, &c, at, flags, busy, b));
	}
	free(atbuf);
	free(rootbuf);
	return err;
}

/* pivot_root(2): the engine moves the mounts; the caller's process is
 * re-rooted by the shim with the descriptor *newroot of the new root (the
 * broker cannot chroot another process).  *cwd_too says whether the
 * caller's cwd was its root, which the kernel moves along. */
int call_pivot_root(struct broker *b, const char *new_root,
		    const char *put_old, int *newroot, bool *cwd_too)
{
	struct caller c;
	struct loc new, old;
	char *nbuf = NULL, *obuf = NULL, *rootbuf = NULL, at[64];
	struct stat a, r;
	int err;

	if (!new_root || !put_old)
		return -EFAULT;
	if ((err = resolve(b, new_root, RES_FOLLOW, &new, &nbuf)) ||
	    (err = resolve(b, put_old, RES_FOLLOW, &old, &obuf)) ||
	    (err = caller_of(b, &c, &rootbuf)))
		goto out;
	*cwd_too = fstat(b->peer->cwd, &a) == 0 &&
		   fstat(b->peer->root, &r) == 0 && a.st_dev == r.st_dev &&
		   a.st_ino == r.st_ino &&
		   fd_mnt_id(b->peer->cwd) == fd_mnt_id(b->peer->root);
	struct mount *nm = new.m;
	plan_begin(&b->g);
	err = apply(b, op_pivot_root(&b->g, &c, new, old));
	if (!err) {
		snprintf(at, sizeof at, "/proc/self/fd/%d", handle_of(b, nm)->fd);
		*newroot = open(at, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
out:
	free(nbuf);
	free(obuf);
	free(rootbuf);
	return err;
}
