/* mount_abi.h: the mount(2) and umount2(2) flag values that the shim
 * decodes, the broker checks and the engine keeps.  The kernel's values,
 * spelled out so that no component depends on which <sys/mount.h> or
 * <linux/mount.h> a libc ships (musl and old glibc differ).
 */
#ifndef LS_MOUNT_ABI_H
#define LS_MOUNT_ABI_H

/* Propagation types, as the mount(2) flag bits that request them. */
enum { PROP_UNBINDABLE = 1 << 17, PROP_PRIVATE = 1 << 18,
       PROP_SLAVE = 1 << 19, PROP_SHARED = 1 << 20, PROP_REC = 1 << 14,
       PROP_SILENT = 1 << 15 };

/* umount2(2) flags. */
enum { UM_FORCE = 1, UM_DETACH = 2, UM_EXPIRE = 4, UM_NOFOLLOW = 8 };

#endif
