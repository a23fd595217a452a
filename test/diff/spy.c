/*
 * spy.so - LD_PRELOAD helper for the native side of the kernel-differential
 * harness (test/diff/). Loaded only into util-linux mount/umount/mkdir.
 *
 * SPY_LOG=FILE  every mount(2)/umount2(2) appends "mount <flags> = <res>"
 *               (res: 0 or the errno name) so the caller can tell which
 *               syscall failed and why, instead of parsing util-linux text.
 * SPY_ROOT=DIR  the constructor chroots into DIR before main() runs, after
 *               taking an O_PATH descriptor on the host's /proc. Opens of
 *               absolute "/proc/..." paths are then served relative to that
 *               descriptor, so util-linux inside a jail without /proc works
 *               as in a jail with /proc mounted, without adding a mount the
 *               scenario would see; the kernel still renders
 *               /proc/self/mountinfo relative to the jail root.
 *
 * SPY_CWD=DIR   the cwd the command runs from, taken (O_PATH) before the
 *               chroot and entered after it: /proc/PID/cwd of the process
 *               that keeps the scenario's cwd ("cd DIR" in native.sh), so
 *               a cwd that a mount covered since stays beneath it.
 * SPY_CHDIR=DIR then chdir(DIR) (for "cd DIR": the keeper itself) and
 *               "ready" on stdout, or exit 125 when DIR cannot be entered.
 * SPY_MAX_CALLS=N  the first N mount(2)/umount2(2)/pivot_root(2) calls of
 *               the process go through, later ones fail with EIO without
 *               reaching the kernel: a command of several calls cut short
 *               between two of them, as a broker killed in the middle
 *               leaves it (fault-diff.sh's outcomes in between).
 *
 * Every wrapper preserves errno of the real call. Wrappers may run before
 * the constructor (other libraries' constructors open files): they resolve
 * the real symbol lazily and redirect nothing until procfd is set.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int logfd = -1;  /* SPY_LOG, O_APPEND so several processes can share it */
static int procfd = -1; /* host /proc, only set once chrooted */

/* The real functions, resolved together on first use of any wrapper. */
static struct {
	int (*mount)(const char *, const char *, const char *, unsigned long,
		     const void *);
	int (*umount2)(const char *, int);
	int (*openat)(int, const char *, int, ...);
	FILE *(*fopen)(const char *, const char *);
	FILE *(*fopen64)(const char *, const char *);
	ssize_t (*readlink)(const char *, char *, size_t);
	int (*access)(const char *, int);
	long (*syscall)(long, ...);
	int loaded;
} real;

static void load_real(void)
{
	if (real.loaded)
		return;
	real.mount = dlsym(RTLD_NEXT, "mount");
	real.umount2 = dlsym(RTLD_NEXT, "umount2");
	real.openat = dlsym(RTLD_NEXT, "openat");
	real.fopen = dlsym(RTLD_NEXT, "fopen");
	real.fopen64 = dlsym(RTLD_NEXT, "fopen64");
	real.readlink = dlsym(RTLD_NEXT, "readlink");
	real.access = dlsym(RTLD_NEXT, "access");
	real.syscall = dlsym(RTLD_NEXT, "syscall");
	real.loaded = 1;
}

/* Whether this call is past SPY_MAX_CALLS (then errno is EIO). */
static int cut_short(void)
{
	static long left = -2;
	const char *max;

	if (left == -2)
		left = (max = getenv("SPY_MAX_CALLS")) && *max ? atol(max) : -1;
	if (left < 0)
		return 0;
	if (left > 0) {
		left--;
		return 0;
	}
	errno = EIO;
	return 1;
}

/* Relative name under /proc if PATH must be redirected, else NULL. */
static const char *proc_rel(const char *path)
{
	if (procfd < 0 || !path || strncmp(path, "/proc/", 6) != 0)
		return NULL;
	return path + 6;
}

static void log_result(const char *what, unsigned long flags, int rc, int err)
{
	const char *name = rc == 0 ? "0" : strerrorname_np(err);

	if (logfd < 0)
		return;
	if (name)
		dprintf(logfd, "%s %#lx = %s\n", what, flags, name);
	else
		dprintf(logfd, "%s %#lx = E%d\n", what, flags, err);
}

/* SPY_CWD and SPY_CHDIR, once in the jail: fchdir() to the very
 * (mount, dentry) the keeper holds, which a path would not reach once
 * covered. */
static void enter_cwd(int cwd)
{
	const char *dir = getenv("SPY_CHDIR");

	if (cwd >= 0 && fchdir(cwd) < 0)
		_exit(125);
	if (cwd >= 0)
		close(cwd);
	if (!dir || !*dir)
		return;
	if (chdir(dir) < 0 || write(1, "ready\n", 6) != 6)
		_exit(125);
}

__attribute__((constructor)) static void spy_init(void)
{
	const char *log = getenv("SPY_LOG"), *root = getenv("SPY_ROOT");
	const char *cwd = getenv("SPY_CWD");
	int fd, cfd = -1;

	load_real();
	if (log && *log)
		logfd = real.openat(AT_FDCWD, log,
				    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (cwd && *cwd && (cfd = real.openat(AT_FDCWD, cwd, O_PATH |
					      O_DIRECTORY | O_CLOEXEC)) < 0)
		_exit(125);
	if (!root || !*root) {
		enter_cwd(cfd);
		return;
	}
	fd = real.openat(AT_FDCWD, "/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || chroot(root) < 0 || chdir("/") < 0) {
		/* The command cannot run in its jail: report the cause as
		 * its result (native.sh prints it like a failed syscall). */
		log_result("chroot", 0, -1, errno);
		_exit(125);
	}
	procfd = fd;
	enter_cwd(cfd);
}

int mount(const char *src, const char *tgt, const char *type,
	  unsigned long flags, const void *data)
{
	int rc, err;

	load_real();
	rc = cut_short() ? -1 : real.mount(src, tgt, type, flags, data);
	err = errno;
	log_result("mount", flags, rc, err);
	errno = err;
	return rc;
}

int umount2(const char *tgt, int flags)
{
	int rc, err;

	load_real();
	rc = cut_short() ? -1 : real.umount2(tgt, flags);
	err = errno;
	log_result("umount2", (unsigned)flags, rc, err);
	errno = err;
	return rc;
}

int umount(const char *tgt)
{
	return umount2(tgt, 0);
}

/* pivot_root(8) has no libc wrapper to call: it uses syscall(2).  Every
 * other number passes through with its six argument words. */
long syscall(long nr, ...)
{
	va_list ap;
	long a[6], rc;
	int err;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	load_real();
	if (nr == SYS_pivot_root && cut_short())
		rc = -1;
	else
		rc = real.syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	err = errno;
	if (nr == SYS_pivot_root)
		log_result("pivot_root", 0, (int)rc, err);
	errno = err;
	return rc;
}

/* The mode argument is only present when the flags say so (open(2)). */
static mode_t open_mode(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return va_arg(ap, mode_t);
	return 0;
}

/* Every open goes through openat(): the one place that redirects /proc.
 * The 64 variants differ only by O_LARGEFILE (a no-op on 64-bit). */
int openat(int dirfd, const char *path, int flags, ...)
{
	const char *rel = proc_rel(path);
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	load_real();
	return real.openat(rel ? procfd : dirfd, rel ? rel : path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return openat(dirfd, path, flags | O_LARGEFILE, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return openat(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return openat(AT_FDCWD, path, flags | O_LARGEFILE, mode);
}

/* Fortified callers (util-linux is built with _FORTIFY_SOURCE) use these. */
int __open_2(const char *path, int flags)
{
	return open(path, flags);
}

int __open64_2(const char *path, int flags)
{
	return open64(path, flags);
}

int __openat_2(int dirfd, const char *path, int flags)
{
	return openat(dirfd, path, flags);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	return openat64(dirfd, path, flags);
}

/* glibc's fopen does not go through the exported open: redirect it here. */
static FILE *proc_fopen(const char *rel, const char *mode)
{
	int flags = strchr(mode, '+') ? O_RDWR : O_RDONLY, fd;
	FILE *f;

	if (mode[0] == 'w' || mode[0] == 'a')
		return errno = EACCES, NULL; /* /proc is only read here */
	if (strchr(mode, 'e'))
		flags |= O_CLOEXEC;
	fd = openat(procfd, rel, flags);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, mode);
	if (!f) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}

FILE *fopen(const char *path, const char *mode)
{
	const char *rel = proc_rel(path);

	load_real();
	return rel ? proc_fopen(rel, mode) : real.fopen(path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	const char *rel = proc_rel(path);

	load_real();
	return rel ? proc_fopen(rel, mode) : real.fopen64(path, mode);
}

/* libmount canonicalises "/proc/self/mountinfo" and probes /proc files. */
ssize_t readlink(const char *path, char *buf, size_t size)
{
	const char *rel = proc_rel(path);

	load_real();
	return rel ? readlinkat(procfd, rel, buf, size)
		   : real.readlink(path, buf, size);
}

int access(const char *path, int mode)
{
	const char *rel = proc_rel(path);

	load_real();
	return rel ? faccessat(procfd, rel, mode, 0) : real.access(path, mode);
}
