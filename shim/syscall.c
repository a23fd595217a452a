/* syscall.c: syscall(), the other door to the mount family: pivot_root(2)
 * has no libc wrapper, and programs built without the new mount API's
 * wrappers (older glibc, musl) reach fsopen() and friends only this way.
 *
 * A hot path for everything else (Rust parks threads with
 * syscall(SYS_futex), libmount asks for gettid): one switch, then the raw
 * call with the six arguments as they came, errno set only on failure as
 * glibc does.  No lock, no TLS, no symbol lookup.
 */
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shim.h"

/* The numbers headers older than the calls lack.  Since Linux 5.1 new
 * calls share one number on every architecture but alpha. */
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_fspick
#define SYS_fspick 433
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_statmount
#define SYS_statmount 457
#endif
#ifndef SYS_listmount
#define SYS_listmount 458
#endif
#ifndef SYS_open_tree_attr
#define SYS_open_tree_attr 467
#endif

SHIM_EXPORT long syscall(long nr, ...)
{
	va_list ap;
	long a[6];
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	switch (nr) {
	case SYS_mount:
		return shim_mount((const char *)a[0], (const char *)a[1],
				  (const char *)a[2], (unsigned long)a[3],
				  (const void *)a[4]);
	case SYS_umount2:
		return shim_umount2((const char *)a[0], (int)a[1]);
#ifdef SYS_umount
	case SYS_umount:           /* the one-argument oldumount (i386, arm) */
		return shim_umount2((const char *)a[0], 0);
#endif
	case SYS_pivot_root:
		return shim_pivot_root((const char *)a[0], (const char *)a[1]);
	case SYS_chroot:
		return shim_chroot((const char *)a[0]);
	case SYS_unshare:
		return shim_ret(shim_unshare((int)a[0]));
	case SYS_setns:
		return shim_ret(shim_setns((int)a[0], (int)a[1]));
	case SYS_clone:
		return shim_ret(shim_sys_clone(a[0], a[1], a[2], a[3], a[4]));
	case SYS_clone3:           /* callers fall back to clone (ns.c) */
		return shim_ret(-ENOSYS);
	/* the mount table's names (mounttable.c); all else as it came */
#ifdef SYS_open
	case SYS_open:
		return shim_ret(shim_openat(-100 /* AT_FDCWD */,
					    (const char *)a[0], (int)a[1],
					    (unsigned int)a[2]));
#endif
	case SYS_openat:
		return shim_ret(shim_openat((int)a[0], (const char *)a[1],
					    (int)a[2], (unsigned int)a[3]));
	/* The new mount API hands out descriptors that only the caller's
	 * own kernel context could use, and statmount/listmount read the
	 * kernel's table rather than the broker's: refuse them all with
	 * ENOSYS, the one answer on which libmount and util-linux fall back
	 * to mount(2) and mountinfo (preload-pitfalls.md 0.3, 2.31). */
	case SYS_open_tree:
	case SYS_move_mount:
	case SYS_fsopen:
	case SYS_fsconfig:
	case SYS_fsmount:
	case SYS_fspick:
	case SYS_mount_setattr:
	case SYS_statmount:
	case SYS_listmount:
	case SYS_open_tree_attr:
		return shim_ret(-ENOSYS);
	}
	return shim_ret(shim_raw(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}
