/* badinput: every function the shim exports, called with the input a
 * fuzzer or a buggy program hands the kernel: unreadable and partly
 * readable pointers, strings without a NUL, unknown flags, odd lengths
 * (test/shim/shim-badinput.bats, docs/bad-input.md).
 *
 * usage: badinput DIR [CASE...]
 *
 * Each case (all, or those named, in that order) runs in a child of its
 * own and prints one line, "CASE ret N errno NAME" or "CASE killed
 * SIGNAL", so that the same program run on
 * the kernel and through libshare can be compared line by line.  DIR is an
 * existing directory the cases may mount on (and leave unmounted).
 */
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int __open_2(const char *, int);
int __open64_2(const char *, int);
int __openat_2(int, const char *, int);
int __openat64_2(int, const char *, int);
FILE *__setmntent(const char *, const char *);

/* The pointers a case can pass, by letter. */
enum {
	BAD = 1,     /* (void *)1 */
	NONE,        /* a page that cannot be read */
	EDGE,        /* "=755" and then an unreadable page: no NUL */
	DEDGE,       /* "mode=755" and then an unreadable page: mount data */
	LONG,        /* 4096 'a' and a NUL: no NUL within PATH_MAX */
	LEDGE,       /* 4096 'a' and then an unreadable page */
	DIR_,        /* argv[1] */
	MISSING,     /* argv[1]/missing */
	TMPFS,       /* "tmpfs" */
	NSMNT,       /* "/proc/self/ns/mnt" */
	MINFO,       /* "/proc/self/mountinfo" */
	MTAB,        /* "/etc/mtab" */
	BUF,         /* 256 writable bytes */
	BEDGE,       /* 3 writable bytes, then a page that is not */
	R,           /* "r" */
	NPTR
};
static void *ptr[NPTR];

/* A pointer argument is P(letter); everything else is a number. */
#define P(k) (0x5e0000L + (k))
static long val(long a)
{
	return a > P(0) && a < P(NPTR) ? (long)ptr[a - P(0)] : a;
}

static void setup(const char *dir)
{
	char *m = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *l = calloc(1, 4097), *missing = malloc(strlen(dir) + 9);
	if (m == MAP_FAILED || !l || !missing)
		abort();
	mprotect(m + 4096, 4096, PROT_NONE);
	mprotect(m + 3 * 4096, 4096, PROT_NONE);
	memset(m, 'a', 4096);
	memset(l, 'a', 4096);
	memcpy(m + 3 * 4096 - 8, "mode=755", 8);
	sprintf(missing, "%s/missing", dir);
	ptr[BAD] = (void *)1;
	ptr[NONE] = m + 4096;
	ptr[EDGE] = m + 3 * 4096 - 4;
	ptr[DEDGE] = m + 3 * 4096 - 8;
	ptr[LONG] = l;
	ptr[LEDGE] = m;
	ptr[DIR_] = (void *)dir;
	ptr[MISSING] = missing;
	ptr[TMPFS] = "tmpfs";
	ptr[NSMNT] = "/proc/self/ns/mnt";
	ptr[MINFO] = "/proc/self/mountinfo";
	ptr[MTAB] = "/etc/mtab";
	ptr[BUF] = calloc(1, 256);
	ptr[BEDGE] = m + 3 * 4096 - 11;
	ptr[R] = "r";
}

enum fn {
	MOUNT, UMOUNT, UMOUNT2, CHROOT, SYSCALL, OPEN, OPEN64, OPEN_2,
	OPEN64_2, OPENAT, OPENAT64, OPENAT_2, OPENAT64_2, ACCESS, FACCESSAT,
	FOPEN, FOPEN64, FREOPEN, FREOPEN64, SETMNTENT, SETMNTENT_,
	READLINK, READLINKAT, STAT, STAT64, LSTAT, LSTAT64, FSTATAT,
	FSTATAT64, STATX, UNSHARE, SETNS,
};

struct kase {
	const char *name;
	enum fn fn;
	long a[6];
};

#include "badinput_cases.h"

static long stream(FILE *f)
{
	return f ? 0 : -1;
}

/* The call itself, as the program would make it: the result, errno set
 * by the callee. */
static long call(const struct kase *c)
{
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = val(c->a[i]);
#define S(i) ((const char *)a[i])
#define V(i) ((void *)a[i])
	switch (c->fn) {
	case MOUNT: return mount(S(0), S(1), S(2), (unsigned long)a[3], V(4));
	case UMOUNT: return umount(S(0));
	case UMOUNT2: return umount2(S(0), (int)a[1]);
	case CHROOT: return chroot(S(0));
	case SYSCALL: return syscall(a[0], a[1], a[2], a[3], a[4], a[5]);
	case OPEN: return open(S(0), (int)a[1], (int)a[2]);
	case OPEN64: return open64(S(0), (int)a[1], (int)a[2]);
	case OPEN_2: return __open_2(S(0), (int)a[1]);
	case OPEN64_2: return __open64_2(S(0), (int)a[1]);
	case OPENAT: return openat((int)a[0], S(1), (int)a[2], (int)a[3]);
	case OPENAT64: return openat64((int)a[0], S(1), (int)a[2], (int)a[3]);
	case OPENAT_2: return __openat_2((int)a[0], S(1), (int)a[2]);
	case OPENAT64_2: return __openat64_2((int)a[0], S(1), (int)a[2]);
	case ACCESS: return access(S(0), (int)a[1]);
	case FACCESSAT: return faccessat((int)a[0], S(1), (int)a[2], (int)a[3]);
	case FOPEN: return stream(fopen(S(0), S(1)));
	case FOPEN64: return stream(fopen64(S(0), S(1)));
	case FREOPEN: return stream(freopen(S(0), S(1), stdin));
	case FREOPEN64: return stream(freopen64(S(0), S(1), stdin));
	case SETMNTENT: return stream(setmntent(S(0), S(1)));
	case SETMNTENT_: return stream(__setmntent(S(0), S(1)));
	case READLINK: return readlink(S(0), V(1), (size_t)a[2]);
	case READLINKAT: return readlinkat((int)a[0], S(1), V(2), (size_t)a[3]);
	case STAT: return stat(S(0), V(1));
	case STAT64: return stat64(S(0), V(1));
	case LSTAT: return lstat(S(0), V(1));
	case LSTAT64: return lstat64(S(0), V(1));
	case FSTATAT: return fstatat((int)a[0], S(1), V(2), (int)a[3]);
	case FSTATAT64: return fstatat64((int)a[0], S(1), V(2), (int)a[3]);
	case STATX: return statx((int)a[0], S(1), (int)a[2], (unsigned)a[3],
				 V(4));
	case UNSHARE: return unshare((int)a[0]);
	case SETNS: return setns((int)a[0], (int)a[1]);
	}
#undef S
#undef V
	errno = ENOSYS;
	return -1;
}

/* One case in a child: its line on stdout, its death reported too.  The
 * child ends with exit(3), not _exit(2): make coverage's counts of the
 * shim's code it ran are written at exit (a case is the only test of
 * some of it: freopen's read of a name before libc closes the stream). */
static void run(const struct kase *c)
{
	int st;
	pid_t pid;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		long r;
		errno = 0;
		r = call(c);
		printf("%s ret %ld errno %s\n", c->name, r,
		       r < 0 ? strerrorname_np(errno) : "-");
		exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		abort();
	if (WIFSIGNALED(st))
		printf("%s killed %s\n", c->name, sigabbrev_np(WTERMSIG(st)));
}

/* The case named name, or NULL. */
static const struct kase *find(const char *name)
{
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: badinput DIR [CASE...]\n");
		return 2;
	}
	setup(argv[1]);
	for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof *cases; i++)
		run(&cases[i]);
	for (int k = 2; k < argc; k++) {
		const struct kase *c = find(argv[k]);
		if (!c) {
			fprintf(stderr, "badinput: no case %s\n", argv[k]);
			return 2;
		}
		run(c);
	}
	return 0;
}
