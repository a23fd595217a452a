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

/* A path argument as the kernel copies it: -EFAULT when NULL, `toolong`
 * when it does not fit in PATH_MAX with its NUL. */
static long measure(const char *s, long toolong, uint32_t *len)
{
	size_t n;
	if (!s)
		return -EFAULT;
	n = strnlen(s, SHIM_PATH_MAX);
	if (n == SHIM_PATH_MAX)
		return toolong;
	*len = (uint32_t)n;
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
 * before any flag or privilege check.  Data is a string to the kernel
 * beyond the page's last byte, which it forces to NUL; binary mount data
 * (long obsolete) would be cut at its first NUL. */
long shim_mount(const char *source, const char *target, const char *type,
		unsigned long flags, const void *data)
{
	struct ls_req_view q = { .op = LS_OP_MOUNT, .arg = flags,
				 .field = { source, target, type, data } };
	long err = 0;
	if (type)
		err = measure(type, -EINVAL, &q.len[2]);
	if (!err && source)
		err = measure(source, -EINVAL, &q.len[0]);
	if (!err)
		err = measure(target, -ENAMETOOLONG, &q.len[1]);
	if (!err && data)
		q.len[3] = (uint32_t)strnlen(data, SHIM_DATA_MAX);
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
	long err = measure(target, -ENAMETOOLONG, &q.len[1]);
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
	long cwd = shim_raw(SYS_open, (long)".", O_PATH | O_DIRECTORY |
			    O_CLOEXEC, 0, 0, 0, 0);
	long r = a->fd < 0 ? -EIO : shim_raw(SYS_fchdir, a->fd, 0, 0, 0, 0, 0);
	if (r == 0)
		r = shim_raw(SYS_chroot, (long)".", 0, 0, 0, 0, 0);
	if (cwd >= 0 && (r != 0 || strcmp(a->text, "cwd") != 0))
		shim_raw(SYS_fchdir, cwd, 0, 0, 0, 0, 0);
	if (cwd >= 0)
		shim_raw(SYS_close, cwd, 0, 0, 0, 0, 0);
	return r;
}

/* pivot_root(2) checks privilege before it reads either path, so a NULL
 * one travels as absent and the broker answers EPERM or EFAULT. */
long shim_pivot_root(const char *new_root, const char *put_old)
{
	struct ls_req_view q = { .op = LS_OP_PIVOT_ROOT,
				 .field = { new_root, put_old } };
	struct shim_ans a;
	long err = 0;
	if (new_root)
		err = measure(new_root, -ENAMETOOLONG, &q.len[0]);
	if (!err && put_old)
		err = measure(put_old, -ENAMETOOLONG, &q.len[1]);
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
