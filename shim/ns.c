/* ns.c: mount namespaces through the broker: unshare(2), setns(2) and
 * clone(2) with CLONE_NEWNS, as libc wrappers and as syscall() targets.
 *
 * The broker makes the copy and hands over a token of it (daemon/broker/ns/
 * ns.c); entering is re-rooting: the broker answers LS_OP_SETNS with a
 * directory descriptor of the namespace's root, and the caller does
 * fchdir, chroot(".") itself, as after pivot_root.  The caller keeps a
 * copy of the token open, without close-on-exec, for as long as it is in
 * the namespace: its children inherit it, and the namespace lives while
 * some copy of it is open (or some process's root is in it).
 *
 * CLONE_NEWNS implies CLONE_FS in the kernel: the re-rooting happens on a
 * fs_struct of the calling thread's own.  Other namespace types, and any
 * descriptor setns is given that is no token, are the kernel's: they
 * reach it as they came and fail as it fails them.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shim.h"

/* The filesystems of the kernel's namespace files (linux/magic.h, which
 * a musl build does not see). */
#define NSFS_MAGIC 0x6e736673
#define PROC_SUPER_MAGIC 0x9fa0

#if defined(__x86_64__) && defined(__GLIBC__)
/* As in raw.c: dlsym@GLIBC_2.34 is absent from older jails' glibc. */
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
#endif

/* The flags unshare(2) knows (kernel/fork.c, check_unshare_flags()). */
#define UNSHARE_KNOWN (CLONE_THREAD | CLONE_FS | CLONE_NEWNS | CLONE_SIGHAND | \
		       CLONE_VM | CLONE_FILES | CLONE_SYSVSEM | CLONE_NEWUTS | \
		       CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUSER | \
		       CLONE_NEWPID | CLONE_NEWCGROUP | 0x80 /* NEWTIME */)
/* A membership token waits at or above this descriptor number, out of
 * the way of programs that expect their lowest numbers free. */
#define MEMBER_FD_MIN SHIM_MEMBER_FD

static long sys(long nr, long a, long b, long c)
{
	return shim_raw(nr, a, b, c, 0, 0, 0);
}

static void close_fd(long fd)
{
	if (fd >= 0)
		sys(SYS_close, fd, 0, 0);
}

/* A decimal descriptor number from the broker's text, or -1. */
static long fd_number(const char *s)
{
	long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 1 << 24)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* Re-roots the calling thread into the namespace of token tok: the root
 * the broker names, then cwd (NULL: the new root, as setns does).  The
 * token's copy that stays is a member's: inherited, never closed on exec;
 * the member token of the namespace left is closed. */
static long enter(long tok, const char *cwd)
{
	struct ls_req_view q = { .op = LS_OP_SETNS, .arg = (uint64_t)tok };
	struct shim_ans a;
	long err = shim_call_ans(&q, &a);
	if (err == SHIM_NOBROKER)
		err = -LS_ENOBROKER;
	if (err == 0 && a.fd < 0)
		err = -EIO;
	/* the kernel's CLONE_FS: other threads stay where they are */
	if (err == 0)
		err = sys(SYS_unshare, CLONE_FS, 0, 0);
	if (err == 0)
		err = sys(SYS_fchdir, a.fd, 0, 0);
	if (err == 0)
		err = sys(SYS_chroot, (long)".", 0, 0);
	if (a.fd >= 0)
		close_fd(a.fd);
	if (err)
		return err;
	if (!cwd || sys(SYS_chdir, (long)cwd, 0, 0) != 0)
		sys(SYS_chdir, (long)"/", 0, 0);
	long old = fd_number(a.text);
	long keep = sys(SYS_fcntl, tok, F_DUPFD, MEMBER_FD_MIN);
	if (keep < 0)
		keep = sys(SYS_fcntl, tok, F_DUPFD, 0);
	if (old >= 0 && old != tok && old != keep)
		close_fd(old);
	shim_member = (int)keep;
	static const struct ls_req_view notice = { .op = LS_OP_CHROOT };
	(void)shim_call(&notice);  /* sharectl jails lists the new root */
	return 0;
}

/* A new namespace's token from the broker (privilege and limits are its
 * to check), or -errno. */
static long new_ns(void)
{
	struct ls_req_view q = { .op = LS_OP_UNSHARE };
	struct shim_ans a;
	long err = shim_call_ans(&q, &a);
	if (err == SHIM_NOBROKER)
		return -LS_ENOBROKER;
	if (err == 0 && a.fd < 0)
		err = -EIO;
	if (err && a.fd >= 0)
		close_fd(a.fd);
	return err ? err : a.fd;
}

/* A copy keeps the cwd at the same place (copy_mnt_ns() moves it along):
 * its path from the root, where the copy of the root is the new root. */
static long enter_here(long tok)
{
	char cwd[SHIM_PATH_MAX];
	if (sys(SYS_getcwd, (long)cwd, sizeof cwd, 0) <= 0)
		cwd[0] = '\0';
	return enter(tok, cwd[0] == '/' ? cwd : NULL);
}

/* A copy owned by a new user namespace has its shared mounts made
 * slaves and locked (CL_SHARED_TO_SLAVE): not emulated, and refused as a
 * kernel refuses a type it lacks.  A new network namespace comes last: an
 * abstract socket (the broker's default address) is not in it. */
static long unshare_ns(int flags)
{
	if (flags & CLONE_NEWUSER)
		return -EINVAL;
	long tok = new_ns();
	if (tok == -LS_ENOBROKER && shim_fallback_native())
		return sys(SYS_unshare, flags, 0, 0);
	if (tok < 0)
		return tok;
	/* the rest, and a fs_struct of our own, are the kernel's */
	long err = sys(SYS_unshare, (flags & ~(CLONE_NEWNS | CLONE_NEWNET)) |
		       CLONE_FS, 0, 0);
	if (err == 0)
		err = enter_here(tok);
	close_fd(tok);
	if (err == 0 && (flags & CLONE_NEWNET))
		err = sys(SYS_unshare, CLONE_NEWNET, 0, 0);
	return err;
}

long shim_unshare(int flags)
{
	if (!(flags & CLONE_NEWNS) || (flags & ~UNSHARE_KNOWN))
		return sys(SYS_unshare, flags, 0, 0);
	return unshare_ns(flags);
}

/* What setns is given: a descriptor not open, a namespace file of the
 * kernel's own (nsfs; procfs before Linux 3.19), a socket (a token is
 * one: a socket pair's end the broker made), or something else. */
enum { NOT_OPEN = -1, KERNEL_NS, SOCKET, OTHER };

static int kind_of(int fd)
{
	struct statfs st;
	int type;
	unsigned len = sizeof type;
	if (fd < 0 || shim_raw(SYS_fstatfs, fd, (long)&st, 0, 0, 0, 0) < 0)
		return NOT_OPEN;
	if (st.f_type == NSFS_MAGIC || st.f_type == PROC_SUPER_MAGIC)
		return KERNEL_NS;
	return shim_raw(SYS_getsockopt, fd, SOL_SOCKET, SO_TYPE, (long)&type,
			(long)&len, 0) == 0 ? SOCKET : OTHER;
}

/* setns(pidfd, flags) with CLONE_NEWNS (Linux 5.8): the emulated
 * namespace of the pidfd's process, through a token of it the broker
 * makes as for its ns file; the other types are the kernel's, first (it
 * enters the mount namespace after them too).  No pidfd: EINVAL, as for
 * any descriptor that is no namespace, or the kernel's answer when other
 * types were asked with it; no broker: the kernel's. */
static long setns_pidfd(int fd, int flags)
{
	struct ls_req_view q = { .op = LS_OP_NSFILE,
				 .arg = LS_NSFILE_PIDFD | (unsigned)fd };
	struct shim_ans a;
	long err = shim_call_ans(&q, &a);
	if (err == 0 && a.fd < 0)
		err = -EIO;
	if (err == SHIM_NOBROKER || (err == -EINVAL && flags != CLONE_NEWNS))
		return sys(SYS_setns, fd, flags, 0);
	if (err == 0 && (flags & ~CLONE_NEWNS))
		err = sys(SYS_setns, fd, flags & ~CLONE_NEWNS, 0);
	if (err == 0)
		err = enter(a.fd, NULL);
	if (a.fd >= 0)
		close_fd(a.fd);
	return err;
}

/* setns(2).  The kernel's, as it came, whenever another type is asked
 * (a pidfd's mount namespace aside) or fd is a namespace file of its own
 * (an IPC, UTS, network... namespace's, or a real mount namespace's): its
 * answer comes back unchanged, ENOSYS from a kernel without setns.  For
 * the type libshare emulates (CLONE_NEWNS, or 0), a token enters its
 * namespace, a pidfd its process's, and the rest gets the answer of a
 * kernel that has mount namespaces: EBADF for no descriptor, EINVAL for
 * one that is no namespace (a socket the broker does not know among
 * them). */
long shim_setns(int fd, int nstype)
{
	int kind = kind_of(fd);
	if (nstype & ~CLONE_NEWNS)
		return (nstype & CLONE_NEWNS) && kind == OTHER ?
		       setns_pidfd(fd, nstype) : sys(SYS_setns, fd, nstype, 0);
	if (kind == KERNEL_NS)
		return sys(SYS_setns, fd, nstype, 0);
	if (kind != SOCKET)
		return kind == NOT_OPEN ? -EBADF :
		       nstype ? setns_pidfd(fd, nstype) : -EINVAL;
	long err = enter(fd, NULL);
	if (err == -LS_ENOBROKER && shim_fallback_native())
		return sys(SYS_setns, fd, nstype, 0);
	return err;
}

SHIM_EXPORT int unshare(int flags)
{
	return (int)shim_ret(shim_unshare(flags));
}

SHIM_EXPORT int setns(int fd, int nstype)
{
	return (int)shim_ret(shim_setns(fd, nstype));
}

/* ---- clone -------------------------------------------------------------- */

/* What the child of clone(CLONE_NEWNS) needs, carved from the top of its
 * own stack: the parent's frame may be gone (CLONE_VM) before it runs. */
struct start {
	int (*fn)(void *);
	void *arg;
	long tok;
	int files;             /* CLONE_FILES: the table is the parent's */
	int vm;                /* CLONE_VM: so is the memory */
	int net;               /* CLONE_NEWNET, once in (see unshare_ns()) */
};

static int child_start(void *p)
{
	struct start s = *(struct start *)p;
	int was = shim_member;
	long err = enter_here(s.tok);
	if (s.vm)                  /* the parent's member stays its own */
		shim_member = was;
	if (!s.files)
		close_fd(s.tok);
	if (!err && s.net)
		err = sys(SYS_unshare, CLONE_NEWNET, 0, 0);
	if (err)                   /* the parent has its pid: no way back */
		sys(SYS_exit, 127, 0, 0);
	return s.fn(s.arg);
}

typedef int clone_fn(int (*)(void *), void *, int, void *, ...);

/* clone(): the namespace is made here, so that its errors are the
 * parent's (EPERM); the child enters it before fn runs. */
static int do_clone(clone_fn *real, int (*fn)(void *), void *stack, int flags,
		    void *arg, void *ptid, void *tls, void *ctid)
{
	if (!(flags & CLONE_NEWNS))
		return real(fn, stack, flags, arg, ptid, tls, ctid);
	if ((flags & (CLONE_FS | CLONE_NEWUSER)) || !fn || !stack)
		return (int)shim_ret(-EINVAL);
	long tok = new_ns();
	if (tok < 0)
		return (int)shim_ret(tok);
	uintptr_t top = ((uintptr_t)stack - sizeof(struct start)) &
			~(uintptr_t)15;
	struct start *s = (struct start *)top;
	*s = (struct start){ fn, arg, tok, !!(flags & CLONE_FILES),
			     !!(flags & CLONE_VM), !!(flags & CLONE_NEWNET) };
	int pid = real(child_start, s, flags & ~(CLONE_NEWNS | CLONE_NEWNET),
		       s, ptid, tls, ctid);
	if (!(flags & CLONE_FILES) || pid < 0)
		close_fd(tok);
	return pid;
}

static clone_fn *real_clone(void)
{
	static clone_fn *f;
	clone_fn *r = __atomic_load_n(&f, __ATOMIC_ACQUIRE);
	if (!r) {
		int saved = errno;
		r = (clone_fn *)dlsym(RTLD_NEXT, "clone");
		errno = saved;
		__atomic_store_n(&f, r, __ATOMIC_RELEASE);
	}
	return r;
}

SHIM_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	void *ptid = va_arg(ap, void *), *tls = va_arg(ap, void *),
	     *ctid = va_arg(ap, void *);
	va_end(ap);
	clone_fn *real = real_clone();
	if (!real)
		return (int)shim_ret(-ENOSYS);
	return do_clone(real, fn, stack, flags, arg, ptid, tls, ctid);
}

/* syscall(SYS_clone, ...): the raw call returns in the child too, on the
 * stack it was given; only a fork-like one (no new stack, no shared
 * memory) can run C code there, so CLONE_NEWNS is served only then. */
long shim_sys_clone(long flags, long stack, long a, long b, long c)
{
	if (!(flags & CLONE_NEWNS))
		return shim_raw(SYS_clone, flags, stack, a, b, c, 0);
	if ((flags & (CLONE_FS | CLONE_VM | CLONE_NEWUSER)) || stack)
		return -EINVAL;
	long tok = new_ns();
	if (tok < 0)
		return tok;
	long pid = shim_raw(SYS_clone, flags & ~(CLONE_NEWNS | CLONE_NEWNET), 0,
			    a, b, c, 0);
	if (pid == 0 && (enter_here(tok) || ((flags & CLONE_NEWNET) &&
			 sys(SYS_unshare, CLONE_NEWNET, 0, 0))))
		sys(SYS_exit, 127, 0, 0);
	if (pid != 0 || !(flags & CLONE_FILES))
		close_fd(tok);
	return pid;
}
