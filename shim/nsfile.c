/* nsfile.c: /proc/PID/ns/mnt as the emulation has it, /proc or not.
 *
 * open gives a token of PID's namespace (LS_OP_NSFILE), the descriptor
 * setns() recognises; readlink gives "mnt:[N]" and stat st_ino N, N the
 * broker's number of the namespace: the same for every process in one,
 * different between two.  The broker decides whom the caller may name.
 * Names other than "/proc/{self,thread-self,PID}/ns/mnt" (absolute) are
 * the kernel's, and so is everything when no broker answers.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "shim.h"

#if defined(__x86_64__) && defined(__GLIBC__)
/* As in raw.c: dlsym@GLIBC_2.34 is absent from older jails' glibc. */
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
#endif

/* The pid an ns file's name stands for (0: the caller), or -1 when the
 * name is none. */
static long ns_pid(const char *path)
{
	size_t n = strlen(path);
	if (strncmp(path, "/proc/", 6) != 0 || n < 14 || n > 40 ||
	    !shim_ns_leaf(path))
		return -1;
	const char *x = path + 6, *end = path + n - 7;
	if ((end - x == 4 && memcmp(x, "self", 4) == 0) ||
	    (end - x == 11 && memcmp(x, "thread-self", 11) == 0))
		return 0;
	long v = 0;
	if (*x == '0' || x == end)
		return -1;
	for (; x < end; x++) {
		if (*x < '0' || *x > '9' || v > 100000000)
			return -1;
		v = v * 10 + (*x - '0');
	}
	return v == shim_raw(SYS_getpid, 0, 0, 0, 0, 0, 0) ? 0 : v;
}

/* The same for a name relative to dirfd (lsns opens "ns/mnt" from a
 * descriptor of /proc/PID; test/diff/spy.so serves a jail's "/proc/..."
 * from one of the proc root). */
static long ns_pid_at(int dirfd, const char *path)
{
	char abs[SHIM_PATH_MAX];
	size_t n;
	if (path[0] == '/')
		return ns_pid(path);
	if (strlen(path) > 32 || shim_base_dir(dirfd, abs, sizeof abs - 40) < 0)
		return -1;
	n = strlen(abs);
	abs[n] = '/';
	strcpy(abs + n + 1, path);
	return ns_pid(abs);
}

/* The broker's answer for pid: a token (tok not NULL) and the number;
 * SHIM_NOBROKER when none answered. */
static int ask(long pid, int *tok, unsigned long long *num)
{
	struct ls_req_view q = { .op = LS_OP_NSFILE,
				 .arg = (uint64_t)pid |
					(tok ? 0 : LS_NSFILE_NUMBER) };
	struct shim_ans a;
	int err = shim_call_ans(&q, &a);
	unsigned long long v = 0;
	const char *s = a.text;
	if (err == 0 && (!*s || (tok && a.fd < 0)))
		err = -EIO;
	for (; err == 0 && *s; s++) {
		if (*s < '0' || *s > '9' || v > UINT64_MAX / 10)
			err = -EIO;
		v = v * 10 + (unsigned)(*s - '0');
	}
	if (err == 0 && tok)
		*tok = a.fd;
	else if (a.fd >= 0)
		shim_raw(SYS_close, a.fd, 0, 0, 0, 0, 0);
	*num = v;
	return err;
}

long shim_ns_open(int dirfd, const char *path, int flags, int *handled)
{
	unsigned long long num;
	int tok = -1;
	long pid = ns_pid_at(dirfd, path);
	int err = pid < 0 ? SHIM_NOBROKER : ask(pid, &tok, &num);
	*handled = err != SHIM_NOBROKER;
	if (err)
		return err;
	if (!(flags & O_CLOEXEC))
		shim_raw(SYS_fcntl, tok, F_SETFD, 0, 0, 0, 0);
	return tok;
}

/* "mnt:[N]", its length, into buf. */
static size_t link_text(char *buf, unsigned long long num)
{
	char digits[24];
	size_t n = 0, k = 0;
	do
		digits[k++] = (char)('0' + num % 10);
	while ((num /= 10));
	memcpy(buf, "mnt:[", 5);
	n = 5;
	while (k)
		buf[n++] = digits[--k];
	buf[n++] = ']';
	buf[n] = '\0';
	return n;
}

#define NEXT(type, name)                                               \
	({                                                             \
		static void *slot_;                                    \
		void *f_ = __atomic_load_n(&slot_, __ATOMIC_ACQUIRE);  \
		if (!f_) {                                             \
			int saved_ = errno;                            \
			f_ = dlsym(RTLD_NEXT, name);                   \
			errno = saved_;                                \
			__atomic_store_n(&slot_, f_, __ATOMIC_RELEASE); \
		}                                                      \
		(type *)f_;                                            \
	})

/* After a call of the kernel's own that was handed path and answered r:
 * 1 and the namespace's number in *num when path is an ns file a broker
 * answers for, 0 when the kernel's answer stands, or the broker's -errno.
 * The kernel read the name first (shim_name_read()). */
static int ours(long r, int dirfd, const char *path, unsigned long long *num)
{
	long pid = shim_name_read(r, path) && shim_ns_leaf(path) ?
		   ns_pid_at(dirfd, path) : -1;
	int err = pid < 0 ? SHIM_NOBROKER : ask(pid, NULL, num);
	return err == SHIM_NOBROKER ? 0 : err == 0 ? 1 : err;
}

/* readlinkat(2): the kernel's call first (it reads the name, checks the
 * size), then, for an ns file a broker answers, the emulation's text. */
static long ns_readlink(int dirfd, const char *path, char *buf, size_t size)
{
	unsigned long long num;
	char text[40];
	long r = shim_raw(SYS_readlinkat, dirfd, (long)path, (long)buf,
			  (long)size, 0, 0);
	int k = ours(r, dirfd, path, &num);
	size_t n;
	if (k != 1)
		return k ? k : r;
	n = link_text(text, num);
	if (n > size)
		n = size;
	return shim_poke(buf, text, n) ? -EFAULT : (long)n;
}

SHIM_EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
	return shim_ret(ns_readlink(AT_FDCWD, path, buf, size));
}

SHIM_EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf,
			       size_t size)
{
	return shim_ret(ns_readlink(dirfd, path, buf, size));
}

/* ---- stat: an nsfs file, st_ino N; lstat: the magic link ---------------- */

/* The emulation's stat of the ns file number num. */
static void ns_stat(struct stat *st, unsigned long long num, int nofollow)
{
	char text[40];
	memset(st, 0, sizeof *st);
	st->st_dev = makedev(0, 4);        /* nsfs's, as the kernel shows */
	st->st_ino = (ino_t)num;
	st->st_nlink = 1;
	st->st_mode = nofollow ? S_IFLNK | 0777 : S_IFREG | 0444;
	st->st_size = nofollow ? (off_t)link_text(text, num) : 0;
	st->st_blksize = 4096;
}

/* The answer of a stat call the kernel answered r: the emulation's, into
 * the caller's st, for an ns file; else r. */
static long stat_answer(long r, int dirfd, const char *path, void *st,
			int nofollow)
{
	unsigned long long num;
	struct stat ns;
	int k = ours(r, dirfd, path, &num);
	if (k != 1)
		return k ? k : r;
	ns_stat(&ns, num, nofollow);
	return shim_poke(st, &ns, sizeof ns);
}

/* libc's answer as 0 or -errno, errno as it was before. */
static long kernel(int ret, int saved)
{
	long r = ret == 0 ? 0 : -errno;
	errno = saved;
	return r;
}


/* struct stat64 is struct stat on 64-bit systems, the only ones the
 * 64 forms are interposed on (a 32-bit one keeps glibc's). */
#define STAT_WRAPPER(name, type, nofollow)                             \
	SHIM_EXPORT int name(const char *path, type *st)              \
	{                                                              \
		typedef int fn_(const char *, type *);                 \
		fn_ *f = NEXT(fn_, #name);                             \
		int saved = errno;                                     \
		long r = f ? kernel(f(path, st), saved) : -ENOSYS;     \
		return (int)shim_ret(stat_answer(r, AT_FDCWD, path,   \
					     st, nofollow));           \
	}
#define FSTATAT_WRAPPER(name, type)                                    \
	SHIM_EXPORT int name(int dirfd, const char *path, type *st,   \
			     int flags)                                \
	{                                                              \
		typedef int fn_(int, const char *, type *, int);       \
		fn_ *f = NEXT(fn_, #name);                             \
		int saved = errno;                                     \
		long r = f ? kernel(f(dirfd, path, st, flags), saved)  \
			   : -ENOSYS;                                  \
		return (int)shim_ret(stat_answer(r, dirfd, path, st,   \
				     flags & AT_SYMLINK_NOFOLLOW));    \
	}
STAT_WRAPPER(stat, struct stat, 0)
STAT_WRAPPER(lstat, struct stat, 1)
FSTATAT_WRAPPER(fstatat, struct stat)
#if __WORDSIZE == 64
_Static_assert(sizeof(struct stat64) == sizeof(struct stat), "stat64");
STAT_WRAPPER(stat64, struct stat64, 0)
STAT_WRAPPER(lstat64, struct stat64, 1)
FSTATAT_WRAPPER(fstatat64, struct stat64)
#endif

/* statx(2): of an ns file, the emulation's stat in statx's form.  Not in
 * a libc that declares no statx (musl before 1.2.5): its programs have no
 * statx to call. */
#ifdef STATX_BASIC_STATS
typedef int statx_fn(int, const char *, int, unsigned, struct statx *);

SHIM_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask,
		      struct statx *sx)
{
	statx_fn *f = NEXT(statx_fn, "statx");
	unsigned long long num;
	struct statx x;
	struct stat st;
	int saved = errno, k;
	long r = f ? kernel(f(dirfd, path, flags, mask, sx), saved) : -ENOSYS;
	if ((k = ours(r, dirfd, path, &num)) != 1)
		return (int)shim_ret(k ? k : r);
	ns_stat(&st, num, flags & AT_SYMLINK_NOFOLLOW);
	memset(&x, 0, sizeof x);
	x.stx_mask = STATX_BASIC_STATS;
	x.stx_blksize = (uint32_t)st.st_blksize;
	x.stx_nlink = 1;
	x.stx_mode = (uint16_t)st.st_mode;
	x.stx_ino = st.st_ino;
	x.stx_size = (uint64_t)st.st_size;
	x.stx_dev_major = 0;
	x.stx_dev_minor = 4;
	return (int)shim_ret(shim_poke(sx, &x, sizeof x));
}
#endif
