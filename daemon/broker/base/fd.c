/* fd.c: what the kernel says of a descriptor: where it is now, and which
 * mount it is on.  The one place that reads /proc/self/fd and fdinfo. */
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
#include "broker.h"
#include "config.h"

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

/* The place of the graph an O_PATH descriptor is at: its mount from the
 * kernel's mount id, its directory from where the kernel has it now
 * relative to where it has the mount's root now (both read the same way,
 * so a rename of a directory above does not matter). */
int fd_loc(struct broker *b, int fd, struct loc *out, char **dirbuf)
{
	struct stat st;
	char *path = fd_path(fd);
	int err = !path || fd_stat(fd, &st) < 0 ? -errno :
		  fd_loc_at(b, fd, path, &st, out, dirbuf);
	free(path);
	return err;
}

/* The same, with fd's path (fd_path()) and status already read. */
int fd_loc_at(struct broker *b, int fd, const char *path,
	      const struct stat *st, struct loc *out, char **dirbuf)
{
	struct mount *m = mount_of_kid(b, fd_mnt_id(fd));
	struct handle *h = m ? handle_awake(b, m) : NULL;  /* expire.c */
	char *top = h ? fd_path(h->fd) : NULL;
	int err = -EIO;
	if (!top) {
		log_msg(LOG_WARNING, "%s: on a mount the broker does not know",
			path);
	} else if (strlen(path) > 10 &&
		   strcmp(path + strlen(path) - 10, " (deleted)") == 0) {
		err = -ENOENT;
	} else if (!path_under(path, top)) {
		log_msg(LOG_WARNING, "%s: not under its mount's root %s", path,
			top);
	} else {
		const char *rel = strcmp(top, "/") == 0 ? path :
				  path + strlen(top);
		if (strcmp(rel, "/") == 0)
			rel = "";
		err = asprintf(dirbuf, "%s%s", strcmp(m->root, "/") == 0 &&
			       *rel ? "" : m->root, rel) < 0 ? -ENOMEM : 0;
		*out = (struct loc){ .m = m, .dir = *dirbuf,
				     .file = !S_ISDIR(st->st_mode) };
	}
	free(top);
	return err;
}

/* fstat(2) from what the kernel has cached: a filesystem whose server
 * never answers (FUSE, NFS) would block a plain fstat for ever, and with
 * it the broker.  Type, owner, mode, device and inode number are all the
 * broker asks, and the cache has them.  As fstat: 0, or -1 and errno.
 * The raw call: on a kernel without statx (before 4.11) glibc's statx()
 * emulates it and refuses AT_STATX_DONT_SYNC with EINVAL, so the ENOSYS
 * that calls for fstat here would never come. */
int fd_stat(int fd, struct stat *st)
{
	struct statx x;
	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		    STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO,
		    &x) < 0)
		return errno == ENOSYS ? fstat(fd, st) : -1;
	*st = (struct stat){
		.st_dev = makedev(x.stx_dev_major, x.stx_dev_minor),
		.st_ino = x.stx_ino, .st_mode = x.stx_mode,
		.st_uid = x.stx_uid, .st_gid = x.stx_gid,
	};
	return 0;
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

/* The mnt_id line of an fdinfo file, -ENODATA without one (before Linux
 * 3.15), or -errno. */
static int fdinfo_line(const char *fdinfo)
{
	char line[128];
	int id = -ENODATA;
	FILE *f = fopen(fdinfo, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "mnt_id: %d", &id) == 1)
			break;
	fclose(f);
	return kernel_lacks("no-fdinfo-mnt-id") ? -ENODATA : id;
}

/* Whether fdinfo says a descriptor's mount (Linux 3.15 on). */
bool fdinfo_has_mnt_id(void)
{
	int fd = open("/", O_PATH | O_CLOEXEC), id = -ENODATA;
	char path[64];
	if (fd >= 0) {
		snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
		id = fdinfo_line(path);
		close(fd);
	}
	return id != -ENODATA;
}

/* The mount of any process's descriptor, by its fdinfo path (.../fdinfo/N):
 * without the line, from the descriptor itself (.../fd/N). */
int fdinfo_mnt_id(const char *fdinfo)
{
	char path[PATH_MAX];
	const char *num = strrchr(fdinfo, '/');
	int id = fdinfo_line(fdinfo), fd;
	if (id != -ENODATA || !num || num - fdinfo < 6 ||
	    strncmp(num - 6, "fdinfo", 6) != 0)
		return id;
	snprintf(path, sizeof path, "%.*sfd%s", (int)(num - 6 - fdinfo),
		 fdinfo, num);
	if ((fd = open(path, O_PATH | O_CLOEXEC)) < 0)
		return -errno;
	id = fd_mnt_id(fd);
	close(fd);
	return id;
}

/* The broker holds a descriptor per mount: as many as it may have.  Root
 * (CAP_SYS_RESOURCE) may raise the hard limit too, up to the kernel's
 * fs.nr_open; otherwise the soft limit goes up to the hard one. */
void fd_raise_limit(void)
{
	struct rlimit r;
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
 * a path's walk). */
int fd_room(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) < 0 || r.rlim_cur == RLIM_INFINITY ||
	    r.rlim_cur > INT_MAX)
		return INT_MAX;
	return (int)r.rlim_cur > FD_SPARE ? (int)r.rlim_cur - FD_SPARE : 0;
}

/* name_to_handle_at() (Linux 2.6.39) names the mount in one call where the
 * filesystem can make file handles: asked for a handle of no bytes it
 * answers EOVERFLOW and the mount id all the same.  fdinfo (four calls: a
 * path walk resolves a mount at every step) answers for the others (proc,
 * sysfs, devpts) and for kernels without it; mountinfo (mntid.c) for a
 * kernel with neither (no CONFIG_FHANDLE, before 3.15). */
int fd_mnt_id(int fd)
{
	char path[64];
	struct file_handle fh = { .handle_bytes = 0 };
	int id = -1;
	if ((name_to_handle_at(fd, "", &fh, &id, AT_EMPTY_PATH) == 0 ||
	     errno == EOVERFLOW) && id >= 0)
		return id;
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	id = fdinfo_line(path);
	return id == -ENODATA ? mountinfo_mnt_id(fd) : id;
}

/* Whether fd is on the root of its mount: what a handle must be (a
 * directory inside a mount is another place of it). */
bool fd_at_root(int fd)
{
#ifdef STATX_ATTR_MOUNT_ROOT
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, 0, &sx) == 0 &&
	    (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return sx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
#endif
	(void)fd;
	return true;           /* a kernel that cannot say: the id decides */
}
