/* peek.c: the caller's memory, read and written as the kernel would,
 * without trusting a pointer.
 *
 * A pointer handed to mount(2) may point anywhere: the kernel copies it
 * and answers EFAULT where the copy faults, and the shim must answer the
 * same, never fault.  It installs no SIGSEGV handler (the program's
 * handlers, and its crashes, stay its own): the kernel copies for it.
 * process_vm_readv(2) and process_vm_writev(2) on the caller's own pid
 * (Linux 3.2) copy what is mapped and fail on what is not.  Where they are
 * missing (older kernels, CONFIG_CROSS_MEMORY_ATTACH off) or filtered
 * (container seccomp profiles refuse them), a pipe of the call's own does
 * the same: write(2) fails with EFAULT on a source it cannot read, read(2)
 * on a destination it cannot write.  Only when neither is possible (no
 * descriptor left either) is the pointer trusted, as before.
 *
 * A copy never crosses a 4096-byte boundary, so it is all or nothing on
 * every page size, and a string is read block by block up to its NUL,
 * never further than the kernel's strncpy_from_user() would read.
 *
 * The wrappers that pass a name to a call of the kernel's own (open,
 * stat, access, readlink: mounttable.c, nsfile.c) let that call read it
 * first and need none of this unless it failed.
 */
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include "shim.h"

#define BLOCK 4096

/* Bytes from p to the end of its block, at most n. */
static size_t in_block(const void *p, size_t n)
{
	size_t left = BLOCK - ((uintptr_t)p & (BLOCK - 1));
	return n < left ? n : left;
}

/* The same through a pipe: 0, -EFAULT, or 1 when no pipe could be had. */
static long via_pipe(void *ours, void *theirs, size_t n, int out)
{
	int p[2];
	long r;
	if (shim_raw(SYS_pipe2, (long)p, O_CLOEXEC, 0, 0, 0, 0) < 0)
		return 1;
	/* n <= one page: the pipe takes it whole, without blocking */
	r = shim_raw(SYS_write, p[1], (long)(out ? ours : theirs), (long)n,
		     0, 0, 0);
	if (r == (long)n)
		r = shim_raw(SYS_read, p[0], (long)(out ? theirs : ours),
			     (long)n, 0, 0, 0);
	shim_raw(SYS_close, p[0], 0, 0, 0, 0, 0);
	shim_raw(SYS_close, p[1], 0, 0, 0, 0, 0);
	return r == (long)n ? 0 : -EFAULT;
}

/* Copies n bytes, within one block, from the caller's theirs to ours, or
 * the other way when out: 0 or -EFAULT. */
static long xfer(void *ours, void *theirs, size_t n, int out)
{
	struct iovec l = { ours, n }, r = { theirs, n };
	long pid = shim_raw(SYS_getpid, 0, 0, 0, 0, 0, 0);
	long got = shim_raw(out ? SYS_process_vm_writev : SYS_process_vm_readv,
			    pid, (long)&l, 1, (long)&r, 1, 0);
	if (got == (long)n)
		return 0;
	if (got >= 0 || got == -EFAULT)
		return -EFAULT;
	got = via_pipe(ours, theirs, n, out);
	if (got == 1) {           /* nothing left to ask: trust it */
		memcpy(out ? theirs : ours, out ? ours : theirs, n);
		got = 0;
	}
	return got;
}

/* One string of the caller's, block by block (struct shim_str). */
static long measure_one(const char *s, size_t max, int partial)
{
	char buf[256];
	size_t done = 0;
	while (done < max) {
		size_t n = in_block(s + done, max - done);
		const char *nul;
		if (n > sizeof buf)
			n = sizeof buf;
		if (xfer(buf, (char *)s + done, n, 0) < 0)
			return partial && done ? (long)done : -EFAULT;
		if ((nul = memchr(buf, '\0', n)))
			return (long)(done + (size_t)(nul - buf));
		done += n;
	}
	return (long)max;
}

long shim_strnlen(const char *s, size_t max)
{
	return measure_one(s, max, 0);
}

/* The first piece of every string in one system call, the rest (a string
 * longer than its piece, a fault, no process_vm_readv) one by one. */
#define PIECE 256
void shim_measure(struct shim_str *v, int n)
{
	char buf[SHIM_MEASURE_MAX][PIECE];
	struct iovec l[SHIM_MEASURE_MAX], r[SHIM_MEASURE_MAX];
	long got = 0, pid = shim_raw(SYS_getpid, 0, 0, 0, 0, 0, 0);
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (!v[i].s)
			continue;
		l[k] = (struct iovec){ buf[k], in_block(v[i].s, v[i].max) };
		if (l[k].iov_len > PIECE)
			l[k].iov_len = PIECE;
		r[k] = (struct iovec){ (void *)v[i].s, l[k].iov_len };
		k++;
	}
	if (k)
		got = shim_raw(SYS_process_vm_readv, pid, (long)l, k, (long)r,
			       k, 0);
	for (int i = 0, j = 0; i < n; i++) {
		const char *nul = NULL;
		if (!v[i].s)
			continue;
		if (got >= (long)l[j].iov_len)
			nul = memchr(buf[j], '\0', l[j].iov_len);
		v[i].len = nul ? nul - buf[j] :
			   measure_one(v[i].s, v[i].max, v[i].partial);
		got -= (long)l[j++].iov_len;
	}
}

long shim_poke(void *dst, const void *src, size_t n)
{
	size_t done = 0;
	while (done < n) {
		size_t k = in_block((char *)dst + done, n - done);
		if (xfer((char *)src + done, (char *)dst + done, k, 1) < 0)
			return -EFAULT;
		done += k;
	}
	return 0;
}

int shim_name_ok(const char *path)
{
	long n = path ? shim_strnlen(path, SHIM_PATH_MAX) : -EFAULT;
	return n >= 0 && n < SHIM_PATH_MAX;
}

/* The kernel copies a name before anything else but the flags (getname()
 * comes first in every call that takes one), so its success says the name
 * was there to read, and EFAULT, ENAMETOOLONG and the flags' EINVAL are
 * final.  ENOSYS, EPERM, EACCES and ENOMEM may have come before the copy
 * (a seccomp filter's answer, an allocation): the name is then peeked.
 * Every other answer (ENOENT, ENOTDIR, ELOOP, ...) comes from the walk, so
 * an ordinary failed open costs no system call more.  NULL is read by no
 * one (AT_EMPTY_PATH). */
int shim_name_read(long r, const char *path)
{
	if (!path || r == -EFAULT || r == -ENAMETOOLONG || r == -EINVAL)
		return 0;
	if (r == -ENOSYS || r == -EPERM || r == -EACCES || r == -ENOMEM)
		return shim_name_ok(path);
	return 1;
}
