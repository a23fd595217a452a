/* raw.c: system calls where shim.h has no inline instruction for the
 * architecture: through the C library's own syscall(), the next one after
 * ours.
 *
 * It is looked up in the constructor, and on first use when a wrapper runs
 * before the constructors (another library's constructor mounting): dlsym
 * may allocate, so it is kept off every later call (preload-pitfalls.md
 * 2.1-2.2).  A lost race only looks the same symbol up twice.
 */
#include "shim.h"

#if !defined(__x86_64__) || defined(SHIM_NO_ASM)
#include <dlfcn.h>
#include <sys/syscall.h>

#if defined(__x86_64__) && defined(__GLIBC__)
/* glibc 2.34 moved dlsym into libc as dlsym@GLIBC_2.34; a jail with an
 * older glibc has only the first version, which 2.34 still provides. */
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
#endif

typedef long syscall_fn(long, ...);
static syscall_fn *next_syscall;

static syscall_fn *resolve(void)
{
	syscall_fn *f = __atomic_load_n(&next_syscall, __ATOMIC_ACQUIRE);
	if (!f) {
		f = (syscall_fn *)dlsym(RTLD_NEXT, "syscall");
		__atomic_store_n(&next_syscall, f, __ATOMIC_RELEASE);
	}
	return f;
}

__attribute__((constructor)) static void resolve_early(void)
{
	int saved = errno;
	resolve();
	errno = saved;
}

#if defined(SYS_socketcall) && defined(SYS_socket)
#include <linux/net.h>
/* Before Linux 4.3, i386 (like the other ABIs that have socketcall) had
 * no system call of its own per socket operation: socketcall(2) carries
 * them all, its arguments in memory.  Its call for syscall nr, or 0. */
static int socketcall_of(long nr)
{
	switch (nr) {
	case SYS_socket: return SYS_SOCKET;
	case SYS_connect: return SYS_CONNECT;
	case SYS_sendto: return SYS_SENDTO;
	case SYS_setsockopt: return SYS_SETSOCKOPT;
	case SYS_getsockopt: return SYS_GETSOCKOPT;
	case SYS_sendmsg: return SYS_SENDMSG;
	case SYS_recvmsg: return SYS_RECVMSG;
	}
	return 0;
}
#else
#define socketcall_of(nr) 0
#endif

long shim_raw(long nr, long a, long b, long c, long d, long e, long f)
{
	syscall_fn *next;
	int saved = errno;
	long r;
	if (!(next = resolve())) {
		errno = saved;
		return -ENOSYS;
	}
	r = next(nr, a, b, c, d, e, f);
	if (r == -1)
		r = -errno;
#ifdef SYS_socketcall
	int call = r == -ENOSYS ? socketcall_of(nr) : 0;
	if (call) {
		long args[6] = { a, b, c, d, e, f };
		if ((r = next(SYS_socketcall, call, (long)args)) == -1)
			r = -errno;
	}
#endif
	errno = saved;
	return r;
}
#endif
