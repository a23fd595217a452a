/* mount_abi.h: the mount(2) and umount2(2) flag values that the shim
 * decodes, the broker checks and the engine keeps.  The kernel's values,
 * spelled out (and prefixed, so that they sit beside <sys/mount.h>) so
 * that no component depends on which <sys/mount.h> or <linux/mount.h> a
 * libc ships: musl and old glibc differ.
 */
#ifndef LS_MOUNT_ABI_H
#define LS_MOUNT_ABI_H

/* mount(2) flags. */
enum {
	LS_MS_RDONLY = 1, LS_MS_NOSUID = 2, LS_MS_NODEV = 4, LS_MS_NOEXEC = 8,
	LS_MS_SYNCHRONOUS = 16, LS_MS_REMOUNT = 32, LS_MS_MANDLOCK = 64,
	LS_MS_DIRSYNC = 128, LS_MS_NOSYMFOLLOW = 256, LS_MS_NOATIME = 1024,
	LS_MS_NODIRATIME = 2048, LS_MS_BIND = 4096, LS_MS_MOVE = 8192,
	LS_MS_REC = 16384, LS_MS_SILENT = 32768,
	LS_MS_UNBINDABLE = 1 << 17, LS_MS_PRIVATE = 1 << 18,
	LS_MS_SLAVE = 1 << 19, LS_MS_SHARED = 1 << 20,
	LS_MS_RELATIME = 1 << 21, LS_MS_STRICTATIME = 1 << 24,
	LS_MS_LAZYTIME = 1 << 25,
};
#define LS_MS_NOUSER (1UL << 31)
#define LS_MS_MGC_VAL 0xC0ED0000UL     /* old callers' magic, high half */
#define LS_MS_MGC_MSK 0xffff0000UL

/* umount2(2) flags. */
enum {
	LS_MNT_FORCE = 1, LS_MNT_DETACH = 2, LS_MNT_EXPIRE = 4,
	LS_UMOUNT_NOFOLLOW = 8,
};
/* Every flag umount2(2) knows; any other bit is EINVAL, before the path is
 * read. */
#define LS_UMOUNT_KNOWN \
	(LS_MNT_FORCE | LS_MNT_DETACH | LS_MNT_EXPIRE | LS_UMOUNT_NOFOLLOW)

#endif
