/* shim.h: the inside of libshare.so, the preload library that forwards
 * the mount-family calls of jailed processes to sharebrokerd.
 *
 * Error convention: the internal functions return 0 or a negative errno,
 * as the kernel does, and never touch errno; only the exported wrappers
 * set errno, and only when they fail (design.md principle 6).  Nothing here
 * allocates, locks, exits or prints: a wrapper may run before the
 * constructors, in a vfork child, in a signal handler or after fork in a
 * threaded program.
 */
#ifndef LS_SHIM_H
#define LS_SHIM_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "libshare_proto.h"
#include "libshare_wire.h"

/* The interposed names: everything else stays hidden (-fvisibility=hidden,
 * libshare.map). */
#define SHIM_EXPORT __attribute__((visibility("default")))

/* The kernel's limit on a path (PATH_MAX, counting the NUL) and on mount
 * data (one page, whose last byte the kernel forces to NUL: path_mount()). */
#define SHIM_PATH_MAX 4096
#define SHIM_DATA_MAX 4095

/* raw.c: a system call without libc: no errno, no cancellation point, no
 * symbol to resolve.  Returns the result or -errno. */
#if defined(__x86_64__) && !defined(SHIM_NO_ASM)
static inline long shim_raw(long nr, long a, long b, long c, long d, long e,
			    long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
long shim_raw(long nr, long a, long b, long c, long d, long e, long f);
#endif

/* The libc convention on top of a raw result: -1 and errno on failure,
 * errno untouched otherwise. */
static inline long shim_ret(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* peek.c: the caller's memory without trusting a pointer (no signal
 * handler: the kernel copies).  The length of the string at s as
 * strncpy_from_user() reads it: -EFAULT when a byte before its NUL cannot
 * be read, max when no NUL comes within max bytes. */
long shim_strnlen(const char *s, size_t max);
/* The same for several strings at once (a mount's four), in one system
 * call when each is short: every len filled in. */
struct shim_str {
	const char *s;     /* the caller's pointer; NULL: none, len untouched */
	size_t max;        /* bytes the kernel reads at most */
	int partial;       /* mount data: a fault after the first byte ends it */
	long len;          /* its length, max (no NUL within it), or -EFAULT */
};
#define SHIM_MEASURE_MAX 4
void shim_measure(struct shim_str *v, int n);
/* n bytes into the caller's dst: 0 or -EFAULT. */
long shim_poke(void *dst, const void *src, size_t n);
/* Whether path is a name the kernel would read: a NUL within PATH_MAX
 * bytes, each of them readable. */
int shim_name_ok(const char *path);
/* Whether the shim may read path after a call of the kernel's own that
 * was handed it answered r (a result or -errno); peeks only if it must. */
int shim_name_read(long r, const char *path);

/* conn.c: one request to the broker (struct ls_req_view, whose tid
 * conn.c fills in), on a connection of its own. */

/* shim_call()'s answer when no broker, or none that is root, answered:
 * positive, so that it cannot be taken for 0 or a -errno. */
#define SHIM_NOBROKER 1

/* Seconds a call waits for the broker's answer unless LIBSHARE_TIMEOUT
 * says otherwise (0: for ever); then it fails with ETIMEDOUT. */
#define SHIM_TIMEOUT 60

/* The broker's answer (0 or -errno), -EIO for a malformed reply,
 * -ETIMEDOUT when none came in time, or SHIM_NOBROKER. */
int shim_call(const struct ls_req_view *q);
/* The same, keeping what comes with the answer: its text and a descriptor
 * (fd -1 when none came; the caller closes it). */
struct shim_ans {
	char text[16];
	int fd;
};
int shim_call_ans(const struct ls_req_view *q, struct shim_ans *a);
/* Whether LIBSHARE_FALLBACK=native asks for the kernel's own call when no
 * broker answers. */
int shim_fallback_native(void);

/* mount.c: the calls themselves, for the wrappers and for syscall(). */
long shim_mount(const char *source, const char *target, const char *type,
		unsigned long flags, const void *data);
long shim_umount2(const char *target, int flags);
long shim_pivot_root(const char *new_root, const char *put_old);
long shim_chroot(const char *path);

/* ns.c: mount namespaces (the broker's copies). */
long shim_unshare(int flags);
long shim_setns(int fd, int nstype);
long shim_sys_clone(long flags, long stack, long a, long b, long c);
/* nsend.c: the member token this image took (-1: none; one inherited
 * across exec waits at SHIM_MEMBER_FD), ended with the process. */
#define SHIM_MEMBER_FD 100
/* conn.c: a kept connection to the broker waits at or above this number. */
#define SHIM_CONN_FD 101
extern int shim_member;

/* nsfile.c: /proc/PID/ns/mnt as the emulation has it.  The fast test on
 * every name: is its end "ns/mnt" (after a slash or alone)? */
static inline int shim_ns_leaf(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	return n >= 6 && path[n - 1] == 't' &&
	       memcmp(path + n - 6, "ns/mnt", 6) == 0 &&
	       (n == 6 || path[n - 7] == '/');
}
/* open of an ns file: a token, or -errno; *handled says whether it was
 * one (else the kernel's call follows). */
long shim_ns_open(int dirfd, const char *path, int flags, int *handled);

/* mounttable.c: openat(2), serving the virtual mount table for its exact
 * names; the descriptor or -errno. */
long shim_openat(int dirfd, const char *path, int flags, unsigned int mode);

/* mtname.c: the names of the virtual mount table.  The basename test is
 * the fast path of every open: inline, one compare for most names. */
enum { VT_NONE, VT_MOUNTINFO, VT_MOUNTS, VT_MTAB };
/* Which table a basename could stand for: the fast path. */
static inline int shim_leaf_kind(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	if (b[0] != 'm')
		return VT_NONE;
	if (strcmp(b, "mountinfo") == 0)
		return VT_MOUNTINFO;
	if (strcmp(b, "mounts") == 0)
		return VT_MOUNTS;
	if (strcmp(b, "mtab") == 0)
		return VT_MTAB;
	return VT_NONE;
}

int shim_full_kind(int dirfd, const char *path, int kind, int *proc,
		   int *pid);
/* The directory a relative name starts from: the cwd for AT_FDCWD, else
 * dirfd's path (a proc root's, "/proc", without /proc); 0 or -1. */
int shim_base_dir(int dirfd, char *buf, size_t size);

/* VT_MOUNTINFO or VT_MOUNTS when (dirfd, path) names a virtual table,
 * VT_NONE otherwise; *proc: a name under /proc (read-only there); *pid:
 * another process's table (/proc/PID/mountinfo), or 0 for the caller's. */
static inline int shim_virtual_kind(int dirfd, const char *path, int *proc,
				    int *pid)
{
	int kind;
	if (!path || (kind = shim_leaf_kind(path)) == VT_NONE)
		return VT_NONE;
	return shim_full_kind(dirfd, path, kind, proc, pid);
}

#endif
