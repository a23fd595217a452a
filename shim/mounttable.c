/* mounttable.c: the virtual mount table.  A jailed process that reads
 * /proc/self/mountinfo (or /proc/mounts, /etc/mtab and their kin) gets the
 * table the broker keeps, rendered for the calling thread's root at the
 * moment of the open (LS_OP_MOUNTTABLE): a mount that just returned is
 * listed, mountpoints are relative to the jail, and the propagation fields
 * only the broker knows are there.  It needs no /proc in the jail.
 *
 * Exact names only (preload-pitfalls.md 2.28): /proc/{self,thread-self,
 * <own pid>}/{mountinfo,mounts}, /proc/{self,<own pid>}/task/<own tid>/...,
 * /proc/mounts and /etc/mtab, after folding "//" and "/./"; a relative name
 * is resolved against the cwd or the dirfd, and only when its basename
 * matches.  Everything else under /proc is the kernel's.  The common case
 * costs a basename compare: no system call, no lock, no allocation, errno
 * untouched.
 *
 * When no broker answers, or it refuses, the path is opened for real: a
 * program outside a broker's reach sees the kernel's table as before.
 *
 * Pass-through opens are raw openat(2) calls (the shim's pattern: nothing
 * to resolve); fopen, freopen, setmntent and fdopen are libc's, looked up
 * with dlsym(RTLD_NEXT) once, lazily, and only on the paths that need them.
 * The descriptor is live as the kernel's is (a file of the broker's FUSE
 * filesystem, daemon/broker/tab/fusetab.c): reads from offset 0 render anew,
 * poll/epoll signal changes; the shim wraps none of read, poll or epoll,
 * so no other descriptor pays for it.  Not covered: readlink of a virtual
 * name, and the cancellation point that glibc's open is.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shim.h"

#if defined(__x86_64__) && defined(__GLIBC__)
/* As in raw.c: dlsym@GLIBC_2.34 is absent from older jails' glibc. */
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
#endif

#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

/* musl's headers make the 64 names macros for the plain ones (its programs
 * call only those); the shim still defines both, as the symbols a program
 * built elsewhere may name. */
#undef open64
#undef openat64
#undef fopen64
#undef freopen64
/* Whose 64 names the shim's own pass on to: glibc's, or on musl the plain
 * ones (since 1.2.4 dlsym finds no fopen64 there). */
#ifdef __GLIBC__
#define NEXT_FOPEN64 "fopen64"
#define NEXT_FREOPEN64 "freopen64"
#else
#define NEXT_FOPEN64 "fopen"
#define NEXT_FREOPEN64 "freopen"
#endif

/* ---- the table ---------------------------------------------------------- */

/* A descriptor of the broker's rendering, with O_CLOEXEC as asked, or -1
 * when no broker served it (the caller then opens the path for real). */
static int table_fd(int kind, int cloexec, int pid)
{
	const char *what = kind == VT_MOUNTINFO ? "mountinfo" : "mounts";
	char num[16], *d = num + sizeof num;
	struct ls_req_view q = { .op = LS_OP_MOUNTTABLE,
				 .field = { NULL, what } };
	struct shim_ans a;
	int r;
	q.len[1] = (uint32_t)strlen(what);
	if (pid > 0) {     /* another process's table: its pid in field 0 */
		*--d = '\0';
		for (int v = pid; v; v /= 10)
			*--d = (char)('0' + v % 10);
		q.field[0] = d;
		q.len[0] = (uint32_t)strlen(d);
	}
	r = shim_call_ans(&q, &a);
	if (r != 0 || a.fd < 0) {
		if (a.fd >= 0)
			shim_raw(SYS_close, a.fd, 0, 0, 0, 0, 0);
		return -1;
	}
	if (!cloexec)   /* it came with MSG_CMSG_CLOEXEC */
		shim_raw(SYS_fcntl, a.fd, F_SETFD, 0, 0, 0, 0);
	return a.fd;
}

/* What the shim serves for (dirfd, path) opened with flags, into *out (a
 * descriptor or -errno): 1, or 0 when the kernel's own open stands.  A
 * write open of a virtual name is the kernel's (root may open mountinfo
 * for writing, and fails each write). */
static int served(int dirfd, const char *path, int flags, long *out)
{
	int proc, kind, ns = 0, pid;
	if (shim_ns_leaf(path) &&
	    (*out = shim_ns_open(dirfd, path, flags, &ns), ns))
		return 1;          /* /proc/PID/ns/mnt (nsfile.c) */
	if ((flags & (O_PATH | O_DIRECTORY | O_TRUNC)) ||
	    (flags & O_ACCMODE) != O_RDONLY ||
	    (kind = shim_virtual_kind(dirfd, path, &proc, &pid)) == VT_NONE)
		return 0;
	*out = table_fd(kind, flags & O_CLOEXEC, pid);
	return *out >= 0;
}

/* openat(2) as the shim serves it: the broker's table for a virtual name
 * opened for reading, the kernel's call for everything else.  The kernel's
 * call comes first and reads the name, so that the shim reads only a name
 * the kernel could (shim_name_read()) and an ordinary open costs nothing
 * more; a virtual name's open is then closed again.  Returns the
 * descriptor or -errno. */
long shim_openat(int dirfd, const char *path, int flags, unsigned int mode)
{
	long fd = shim_raw(SYS_openat, dirfd, (long)path, flags, mode, 0, 0);
	long v;
	if (!shim_name_read(fd, path) || !served(dirfd, path, flags, &v))
		return fd;
	if (fd >= 0)
		shim_raw(SYS_close, fd, 0, 0, 0, 0, 0);
	return v;
}

/* ---- the open family ---------------------------------------------------- */

#define NEEDS_MODE(f) (((f) & O_CREAT) || ((f) & O_TMPFILE) == O_TMPFILE)

#define MODE_ARG(flags, mode)                          \
	do {                                           \
		va_list ap;                            \
		va_start(ap, flags);                   \
		if (NEEDS_MODE(flags))                 \
			mode = va_arg(ap, unsigned int); \
		va_end(ap);                            \
	} while (0)

SHIM_EXPORT int open(const char *path, int flags, ...)
{
	unsigned int mode = 0;
	MODE_ARG(flags, mode);
	return (int)shim_ret(shim_openat(AT_FDCWD, path, flags, mode));
}

SHIM_EXPORT int open64(const char *path, int flags, ...)
{
	unsigned int mode = 0;
	MODE_ARG(flags, mode);
	return (int)shim_ret(shim_openat(AT_FDCWD, path, flags | O_LARGEFILE,
					 mode));
}

SHIM_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	unsigned int mode = 0;
	MODE_ARG(flags, mode);
	return (int)shim_ret(shim_openat(dirfd, path, flags, mode));
}

SHIM_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	unsigned int mode = 0;
	MODE_ARG(flags, mode);
	return (int)shim_ret(shim_openat(dirfd, path, flags | O_LARGEFILE,
					 mode));
}

/* The fortified forms: O_CREAT or O_TMPFILE without a mode is glibc's to
 * abort on, so such a call goes to glibc's own (looked up only then). */
typedef int fortified_fn(const char *, int);
typedef int fortified_at_fn(int, const char *, int);

static void *next(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!f) {
		int saved = errno;
		f = dlsym(RTLD_NEXT, name);
		errno = saved;
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}
#define NEXT(type, name)                                   \
	({                                                 \
		static void *slot_;                        \
		(type *)next(&slot_, name);                \
	})

SHIM_EXPORT int __open_2(const char *path, int flags)
{
	fortified_fn *f;
	if (NEEDS_MODE(flags) && (f = NEXT(fortified_fn, "__open_2")))
		return f(path, flags);
	return (int)shim_ret(shim_openat(AT_FDCWD, path, flags, 0));
}

SHIM_EXPORT int __open64_2(const char *path, int flags)
{
	fortified_fn *f;
	if (NEEDS_MODE(flags) && (f = NEXT(fortified_fn, "__open64_2")))
		return f(path, flags);
	return (int)shim_ret(shim_openat(AT_FDCWD, path, flags | O_LARGEFILE,
					 0));
}

SHIM_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	fortified_at_fn *f;
	if (NEEDS_MODE(flags) && (f = NEXT(fortified_at_fn, "__openat_2")))
		return f(dirfd, path, flags);
	return (int)shim_ret(shim_openat(dirfd, path, flags, 0));
}

SHIM_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	fortified_at_fn *f;
	if (NEEDS_MODE(flags) && (f = NEXT(fortified_at_fn, "__openat64_2")))
		return f(dirfd, path, flags);
	return (int)shim_ret(shim_openat(dirfd, path, flags | O_LARGEFILE,
					 0));
}

/* ---- access ------------------------------------------------------------- */

/* findmnt -k checks access(mountinfo, R_OK) first: a virtual name is
 * readable when the broker serves it, /proc or not.  As for open, the
 * kernel's call comes first and reads the name. */
static long shim_faccessat(int dirfd, const char *path, int mode, int flags)
{
	typedef int faccessat_fn(int, const char *, int, int);
	faccessat_fn *f;
	int proc, kind, fd, pid;
	long r;
	if (flags == 0)
		r = shim_raw(SYS_faccessat, dirfd, (long)path, mode, 0, 0, 0);
	else if ((f = NEXT(faccessat_fn, "faccessat")))
		r = f(dirfd, path, mode, flags) == 0 ? 0 : -errno;
	else
		return -ENOSYS;
	if (r == 0 || (mode & (W_OK | X_OK)) || !shim_name_read(r, path) ||
	    (kind = shim_virtual_kind(dirfd, path, &proc, &pid)) == VT_NONE ||
	    (fd = table_fd(kind, 1, pid)) < 0)
		return r;
	shim_raw(SYS_close, fd, 0, 0, 0, 0, 0);
	return 0;
}

SHIM_EXPORT int access(const char *path, int mode)
{
	return (int)shim_ret(shim_faccessat(AT_FDCWD, path, mode, 0));
}

SHIM_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	return (int)shim_ret(shim_faccessat(dirfd, path, mode, flags));
}

/* ---- stdio -------------------------------------------------------------- */

typedef FILE *fopen_fn(const char *, const char *);
typedef FILE *freopen_fn(const char *, const char *, FILE *);
typedef FILE *fdopen_fn(int, const char *);

/* The table's descriptor for a stream on a virtual name opened for
 * reading ("r", "re", "rb", ...; "r+" and the write modes are the real
 * call's), or -1. */
static int stream_fd(const char *path, const char *mode, int cloexec)
{
	int proc, kind, pid;
	if (!path || !mode || (kind = shim_leaf_kind(path)) == VT_NONE ||
	    mode[0] != 'r' || strchr(mode, '+') ||
	    (kind = shim_full_kind(AT_FDCWD, path, kind, &proc, &pid)) ==
	    VT_NONE)
		return -1;
	return table_fd(kind, cloexec || strchr(mode, 'e'), pid);
}

static FILE *stream(int fd, const char *mode)
{
	fdopen_fn *fdo = NEXT(fdopen_fn, "fdopen");
	FILE *f = fdo ? fdo(fd, mode) : NULL;
	if (!f) {
		int saved = fdo ? errno : ENOSYS;
		shim_raw(SYS_close, fd, 0, 0, 0, 0, 0);
		errno = saved;
	}
	return f;
}

/* A stream on a virtual name opened for reading in place of f, the
 * kernel's stream (NULL when it failed, errno then its answer): libc's
 * call came first and read the name. */
static FILE *instead(FILE *f, const char *path, const char *mode,
		     int cloexec, int saved)
{
	int fd;
	if (!shim_name_read(f ? 0 : -errno, path) ||
	    (fd = stream_fd(path, mode, cloexec)) < 0)
		return f;
	if (f)
		fclose(f);
	errno = saved;
	return stream(fd, mode);
}

static FILE *vfopen(const char *path, const char *mode, fopen_fn *real)
{
	int saved = errno;
	if (!real) {
		errno = ENOSYS;
		return NULL;
	}
	return instead(real(path, mode), path, mode, 0, saved);
}

SHIM_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return vfopen(path, mode, NEXT(fopen_fn, "fopen"));
}

SHIM_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return vfopen(path, mode, NEXT(fopen_fn, NEXT_FOPEN64));
}

/* The stream keeps its FILE and its descriptor number, which now reads
 * the table (its mode stays the one it had; a table is only read). */
static FILE *vfreopen(const char *path, const char *mode, FILE *f,
		      freopen_fn *real)
{
	int fd, old = f ? fileno(f) : -1;
	/* libc's freopen closes f before it reads the name: read it first */
	if (old >= 0 && shim_name_ok(path) &&
	    (fd = stream_fd(path, mode, 0)) >= 0) {
		fflush(f);
		if (shim_raw(SYS_dup3, fd, old, strchr(mode, 'e') ? O_CLOEXEC : 0,
			     0, 0, 0) == old) {
			shim_raw(SYS_close, fd, 0, 0, 0, 0, 0);
			rewind(f);
			return f;
		}
		shim_raw(SYS_close, fd, 0, 0, 0, 0, 0);
	}
	if (!real) {
		errno = ENOSYS;
		return NULL;
	}
	return real(path, mode, f);
}

SHIM_EXPORT FILE *freopen(const char *path, const char *mode, FILE *f)
{
	return vfreopen(path, mode, f, NEXT(freopen_fn, "freopen"));
}

SHIM_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *f)
{
	return vfreopen(path, mode, f, NEXT(freopen_fn, NEXT_FREOPEN64));
}

/* glibc's setmntent opens with "ce" through its internal fopen, which no
 * wrapper sees, and leaves locking to the caller. */
static FILE *vsetmntent(const char *path, const char *mode, fopen_fn *real)
{
	int saved = errno;
	FILE *f, *k;
	if (!real) {
		errno = ENOSYS;
		return NULL;
	}
	k = real(path, mode);
	if ((f = instead(k, path, mode, 1, saved)) && f != k)
		__fsetlocking(f, FSETLOCKING_BYCALLER);
	return f;
}

SHIM_EXPORT FILE *setmntent(const char *path, const char *mode)
{
	return vsetmntent(path, mode, NEXT(fopen_fn, "setmntent"));
}

SHIM_EXPORT FILE *__setmntent(const char *path, const char *mode)
{
	return vsetmntent(path, mode, NEXT(fopen_fn, "__setmntent"));
}
