/* newapi.c: the new mount API's glibc wrappers (glibc 2.36), refused.
 *
 * fsopen() and its kin hand out descriptors for kernel objects (a
 * filesystem context, a detached tree) that live in the caller's process:
 * the broker could not give them back in any useful form, and an
 * unprivileged caller could not finish fsconfig(FSCONFIG_CMD_CREATE) with
 * them anyway.  ENOSYS is the answer on which libmount (util-linux 2.39+)
 * falls back to mount(2), which the shim forwards; EPERM would be final
 * (preload-pitfalls.md 0.3, 1a).  syscall.c refuses the same calls by
 * number.
 *
 * The prototypes are glibc's, declared here rather than taken from
 * <sys/mount.h>: the shim builds against a glibc older than 2.36 too.
 */
#include <stddef.h>
#include "shim.h"

struct mount_attr;

static int nosys(void)
{
	errno = ENOSYS;
	return -1;
}

SHIM_EXPORT int fsopen(const char *fs_name, unsigned int flags)
{
	(void)fs_name, (void)flags;
	return nosys();
}

SHIM_EXPORT int fsconfig(int fd, unsigned int cmd, const char *key,
			 const void *value, int aux)
{
	(void)fd, (void)cmd, (void)key, (void)value, (void)aux;
	return nosys();
}

SHIM_EXPORT int fsmount(int fd, unsigned int flags, unsigned int ms_flags)
{
	(void)fd, (void)flags, (void)ms_flags;
	return nosys();
}

SHIM_EXPORT int fspick(int dfd, const char *path, unsigned int flags)
{
	(void)dfd, (void)path, (void)flags;
	return nosys();
}

SHIM_EXPORT int move_mount(int from_dfd, const char *from_path, int to_dfd,
			   const char *to_path, unsigned int flags)
{
	(void)from_dfd, (void)from_path, (void)to_dfd, (void)to_path,
		(void)flags;
	return nosys();
}

SHIM_EXPORT int open_tree(int dfd, const char *path, unsigned int flags)
{
	(void)dfd, (void)path, (void)flags;
	return nosys();
}

SHIM_EXPORT int mount_setattr(int dfd, const char *path, unsigned int flags,
			      struct mount_attr *attr, size_t size)
{
	(void)dfd, (void)path, (void)flags, (void)attr, (void)size;
	return nosys();
}
