/* fd.c: what the kernel says of a descriptor: where it is now and what it
 * is, from its cache; and how many descriptors the broker may hold.  The
 * one place that reads /proc/self/fd; which mount a descriptor is on is
 * mntid.c's to say. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "base/base.h"

char *fd_path(int fd)
{
	char proc[64], path[PATH_MAX + 16];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(proc, path, sizeof path - 1);
	if (n < 0)
		return NULL;
	path[n] = '\0';
	return strdup(path);
}

/* Whether path is top or below it (every path is below "/"). */
bool path_under(const char *path, const char *top)
{
	size_t t = strlen(top);
	return strcmp(top, "/") == 0 || (strncmp(path, top, t) == 0 &&
					 (path[t] == '/' || path[t] == '\0'));
}

/* Whether the object fd is inside the directory root, as the kernel has
 * both now. */
bool fd_within(int fd, int root)
{
	char *path = fd_path(fd), *top = fd_path(root);
	bool in = path && top && !strstr(path, " (deleted)") &&
		  path_under(path, top);
	free(path);
	free(top);
	return in;
}

/* fstat(2) from what the kernel has cached: a filesystem whose server
 * never answers (FUSE, NFS) would block a plain fstat for ever, and with
 * it the broker.  Type, owner, mode, device and inode number are all the
 * broker asks, and the cache has them; the mount id, and whether fd is
 * on its mount's root, come in the same call from Linux 5.8 on
 * (STATX_MNT_ID in the answer's mask, STATX_ATTR_MOUNT_ROOT in its
 * attributes' mask): *kid and *root are set then, else left alone.  As
 * fstat: 0, or -1 and errno.  The raw call: on a kernel without statx
 * (before 4.11) glibc's statx() emulates it and refuses
 * AT_STATX_DONT_SYNC with EINVAL, so the ENOSYS that calls for fstat
 * here would never come. */
#ifdef STATX_MNT_ID            /* headers before 5.8's: never asked */
#define STATX_KID STATX_MNT_ID
#else
#define STATX_KID 0U
#endif

static int stat_cached(int dir, const char *name, int flags, struct stat *st,
		       int *kid, int *root)
{
	struct statx x;
	if (syscall(SYS_statx, dir, name, flags | AT_STATX_DONT_SYNC,
		    STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO |
		    STATX_KID, &x) < 0)
		return errno == ENOSYS ? fstatat(dir, name, st, flags) : -1;
	*st = (struct stat){
		.st_dev = makedev(x.stx_dev_major, x.stx_dev_minor),
		.st_ino = x.stx_ino, .st_mode = x.stx_mode,
		.st_uid = x.stx_uid, .st_gid = x.stx_gid,
	};
#if STATX_KID
	if ((x.stx_mask & STATX_KID) && x.stx_mnt_id <= INT_MAX)
		*kid = (int)x.stx_mnt_id;
#endif
#ifdef STATX_ATTR_MOUNT_ROOT
	if (x.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
		*root = !!(x.stx_attributes & STATX_ATTR_MOUNT_ROOT);
#endif
	return 0;
}

int fd_stat(int fd, struct stat *st)
{
	int kid, root;
	return stat_cached(fd, "", AT_EMPTY_PATH, st, &kid, &root);
}

/* fd_stat() and, where statx() names the mount (Linux 5.8), its id:
 * a name_to_handle_at() less per descriptor a request looks up.  0, or
 * -1 and errno.  *kid -1 when statx() cannot say: fd_mnt_id() then, only
 * where it is needed (before 5.8 it may read mountinfo).  *root: 1 when
 * fd is on its mount's root, 0 when not, -1 when statx() cannot say. */
int fd_stat_kid(int fd, struct stat *st, int *kid, int *root)
{
	*kid = *root = -1;
	return stat_cached(fd, "", AT_EMPTY_PATH, st, kid, root);
}

/* The same of dir/name, not opened: the top of what is mounted there,
 * a symlink itself (AT_SYMLINK_NOFOLLOW), as umount2(UMOUNT_NOFOLLOW)
 * finds it. */
int name_stat_kid(int dir, const char *name, struct stat *st, int *kid,
		  int *root)
{
	*kid = *root = -1;
	return stat_cached(dir, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, st,
			   kid, root);
}

/* Whether the kernel stands for one without what ("no-fuse",
 * "no-fdinfo-mnt-id"): a word of LIBSHARE_LEGACY_SIM, which only the
 * legacy simulation sets (test/legacy/legacy-sim.c), for what a seccomp
 * filter cannot take away. */
bool kernel_lacks(const char *what)
{
	static const char *sim;
	size_t n = strlen(what);
	if (!sim && !(sim = getenv("LIBSHARE_LEGACY_SIM")))
		sim = "";
	for (const char *w = sim; (w = strstr(w, what)); w += n)
		if ((w == sim || w[-1] == ',') && (w[n] == ',' || !w[n]))
			return true;
	return false;
}

/* The broker holds a descriptor per mount: as many as it may have.  Root
 * (CAP_SYS_RESOURCE) may raise the hard limit too, up to the kernel's
 * fs.nr_open; otherwise the soft limit goes up to the hard one. */
static int room = -1;          /* fd_room()'s answer, once asked */

void fd_raise_limit(void)
{
	struct rlimit r;
	room = -1;
	unsigned long most = sysctl_value("/proc/sys/fs/nr_open");
	if (getrlimit(RLIMIT_NOFILE, &r) < 0)
		return;
	if (most > r.rlim_max && r.rlim_max != RLIM_INFINITY) {
		struct rlimit up = { most, most };
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return;
	}
	if (r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

/* The first descriptor number a handle may not take: FD_SPARE below the
 * limit stay for serving requests (the socket, a caller's root and cwd,
 * a path's walk).  Asked once per mount at import, it is read once: the
 * broker's limit moves only in fd_raise_limit() (a prlimit(1) from
 * outside is seen after the next one). */
int fd_room(void)
{
	struct rlimit r;
	if (room >= 0)
		return room;
	if (getrlimit(RLIMIT_NOFILE, &r) < 0 || r.rlim_cur == RLIM_INFINITY ||
	    r.rlim_cur > INT_MAX)
		return room = INT_MAX;
	return room = (int)r.rlim_cur > FD_SPARE ? (int)r.rlim_cur - FD_SPARE : 0;
}

/* A number the kernel shows under /proc/sys (fs.mount-max, fs.nr_open),
 * or 0. */
unsigned long sysctl_value(const char *path)
{
	unsigned long n = 0;
	FILE *f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%lu", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}
