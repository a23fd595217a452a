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
	errno = saved;
	return r;
}
#endif
