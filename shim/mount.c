/* mount.c: mount(2), umount(2), umount2(2), pivot_root(2) and chroot(2),
 * as libc wrappers and as the targets of syscall().
 *
 * The shim is a courier: the broker decides, from the kernel's rules.  The
 * shim answers alone only what cannot travel, in the kernel's order: a
 * NULL or over-long path where the kernel would fail on it before anything
 * the broker knows (privilege, the caller's root) matters.  It never
 * dereferences more than the kernel would copy.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "mount_abi.h"
#include "shim.h"

/* A path argument as the kernel copied it (m, shim_measure()): 0 and
 * its length in *len, -EFAULT when NULL or unreadable before its NUL, or
 * `toolong` when it does not fit in PATH_MAX with its NUL. */
static long path_arg(const struct shim_str *m, long toolong, uint32_t *len)
{
	if (!m->s || m->len < 0)
		return -EFAULT;
	if (m->len == SHIM_PATH_MAX)
		return toolong;
	*len = (uint32_t)m->len;
	return 0;
}

/* Mount data as the kernel copied it (m): 0 and its length up to its NUL
 * or its first unreadable byte, or -EFAULT when none can be read. */
static long data_arg(const struct shim_str *m, uint32_t *len)
{
	if (m->len < 0)
		return m->len;
	*len = (uint32_t)m->len;
	return 0;
}

/* Sends q.  Without a broker the call fails with LS_ENOBROKER, or, when
 * LIBSHARE_FALLBACK=native asks for it, is left to the kernel with the
 * caller's own arguments (nr, a..e).  Returns 0 or -errno. */
static long forward(const struct ls_req_view *q, long nr, long a, long b,
		    long c, long d, long e)
{
	int r = shim_call(q);
	if (r != SHIM_NOBROKER)
		return r;
	if (shim_fallback_native())
		return shim_raw(nr, a, b, c, d, e, 0);
	return -LS_ENOBROKER;
}

/* The kernel copies type, then source (both -EINVAL when too long:
 * strndup_user()), then the data page, and only then looks up the target,
 * before any flag or privilege check.  It copies the data page up to the
 * first byte it cannot read (copy_mount_options(): EFAULT only when that
 * is the first) and forces its last byte to NUL: data is a string to the
 * kernel beyond that page, so binary mount data (long obsolete) would be
 * cut at its first NUL.  The shim reads no byte the kernel would not
 * (peek.c), all four in one system call when they are short. */
long shim_mount(const char *source, const char *target, const char *type,
		unsigned long flags, const void *data)
{
	struct ls_req_view q = { .op = LS_OP_MOUNT, .arg = flags,
				 .field = { source, target, type, data } };
	struct shim_str m[4] = {
		{ .s = type, .max = SHIM_PATH_MAX },
		{ .s = source, .max = SHIM_PATH_MAX },
		{ .s = data, .max = SHIM_DATA_MAX, .partial = 1 },
		{ .s = target, .max = SHIM_PATH_MAX },
	};
	long err = 0;
	shim_measure(m, 4);
	if (type)
		err = path_arg(&m[0], -EINVAL, &q.len[2]);
	if (!err && source)
		err = path_arg(&m[1], -EINVAL, &q.len[0]);
	if (!err && data)
		err = data_arg(&m[2], &q.len[3]);
	if (!err)
		err = path_arg(&m[3], -ENAMETOOLONG, &q.len[1]);
	if (!err)
		err = forward(&q, SYS_mount, (long)source, (long)target,
			      (long)type, (long)flags, (long)data);
	return shim_ret(err);
}

/* ksys_umount() rejects unknown flags before it looks at the path. */
long shim_umount2(const char *target, int flags)
{
	struct ls_req_view q = { .op = LS_OP_UMOUNT,
				 .arg = (unsigned int)flags,
				 .field = { NULL, target } };
	struct shim_str m = { .s = target, .max = SHIM_PATH_MAX };
	long err;
	shim_measure(&m, 1);
	err = path_arg(&m, -ENAMETOOLONG, &q.len[1]);
	if (err && (flags & ~LS_UMOUNT_KNOWN))
		err = -EINVAL;
	if (!err)
		err = forward(&q, SYS_umount2, (long)target, flags, 0, 0, 0);
	return shim_ret(err);
}

/* After the broker's pivot_root: the kernel would re-root the caller and
 * move its cwd along if it was the old root; the broker cannot, so the
 * caller does it with the new root's descriptor it was handed. */
static long reroot(const struct shim_ans *a)
{
	long cwd = shim_raw(SYS_openat, AT_FDCWD, (long)".", O_PATH |
			    O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
	long r = a->fd < 0 ? -EIO : shim_raw(SYS_fchdir, a->fd, 0, 0, 0, 0, 0);
	if (r == 0)
		r = shim_raw(SYS_chroot, (long)".", 0, 0, 0, 0, 0);
	if (cwd >= 0 && (r != 0 || strcmp(a->text, "cwd") != 0))
		shim_raw(SYS_fchdir, cwd, 0, 0, 0, 0, 0);
	if (cwd >= 0)
		shim_raw(SYS_close, cwd, 0, 0, 0, 0, 0);
	return r;
}

/* A path of pivot_root's (m, measured): one it cannot read travels as
 * absent. */
static long pivot_path(struct ls_req_view *q, int i, const struct shim_str *m)
{
	long err = q->field[i] ? path_arg(m, -ENAMETOOLONG, &q->len[i]) : 0;
	if (err == -EFAULT)
		q->field[i] = NULL;
	return err == -EFAULT ? 0 : err;
}

/* pivot_root(2) checks privilege before it reads either path, so a NULL
 * or unreadable one travels as absent and the broker answers EPERM or
 * EFAULT. */
long shim_pivot_root(const char *new_root, const char *put_old)
{
	struct ls_req_view q = { .op = LS_OP_PIVOT_ROOT,
				 .field = { new_root, put_old } };
	struct shim_str m[2] = { { .s = new_root, .max = SHIM_PATH_MAX },
				 { .s = put_old, .max = SHIM_PATH_MAX } };
	struct shim_ans a;
	long err;
	shim_measure(m, 2);
	err = pivot_path(&q, 0, &m[0]);
	if (!q.field[0])
		q.field[1] = NULL;     /* the kernel stops at new_root */
	else if (!err)
		err = pivot_path(&q, 1, &m[1]);
	if (err)
		return shim_ret(err);
	err = shim_call_ans(&q, &a);
	if (err == SHIM_NOBROKER)
		err = shim_fallback_native() ?
		      shim_raw(SYS_pivot_root, (long)new_root, (long)put_old,
			       0, 0, 0, 0) : -LS_ENOBROKER;
	else if (err == 0)
		err = reroot(&a);
	if (a.fd >= 0)
		shim_raw(SYS_close, a.fd, 0, 0, 0, 0, 0);
	return shim_ret(err);
}

/* No process can chroot another, so the caller does it itself; the notice
 * that follows a success only tells the broker the new root, and whatever
 * becomes of it (no broker, a refusal) the chroot has happened: its result
 * is the kernel's. */
long shim_chroot(const char *path)
{
	static const struct ls_req_view notice = { .op = LS_OP_CHROOT };
	long r = shim_raw(SYS_chroot, (long)path, 0, 0, 0, 0, 0);
	if (r == 0)
		(void)shim_call(&notice);
	return shim_ret(r);
}

SHIM_EXPORT int mount(const char *source, const char *target,
		      const char *type, unsigned long flags, const void *data)
{
	return (int)shim_mount(source, target, type, flags, data);
}

SHIM_EXPORT int umount2(const char *target, int flags)
{
	return (int)shim_umount2(target, flags);
}

SHIM_EXPORT int umount(const char *target)
{
	return (int)shim_umount2(target, 0);
}

SHIM_EXPORT int chroot(const char *path)
{
	return (int)shim_chroot(path);
}
