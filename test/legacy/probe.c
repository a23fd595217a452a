/*
 * probe DIR - call each feature legacy-sim refuses, straight through
 * syscall(2), and print one "NAME RESULT" line per call: RESULT is "ok", the
 * errno's name, or "SIGSYS" when the kernel killed the calling child.
 *
 * DIR must be a mount point the caller may change (a scratch tmpfs): the
 * propagation calls really run on it, and leave it private. The other calls
 * get arguments that change nothing; without the filter the kernel answers
 * them with something other than ENOSYS, which proves it has the feature.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sysnr.h"
#define X32_SYSCALL_BIT 0x40000000L
#define I386_NR_MOUNT 21
#define I386_NR_PROCESS_VM_READV 347

static const char *errname(int e)
{
	static const struct { int e; const char *name; } names[] = {
		{ ENOSYS, "ENOSYS" }, { EINVAL, "EINVAL" }, { EPERM, "EPERM" },
		{ EBADF, "EBADF" }, { ENOENT, "ENOENT" }, { EFAULT, "EFAULT" },
		{ EACCES, "EACCES" }, { EBUSY, "EBUSY" }, { E2BIG, "E2BIG" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { ENOTDIR, "ENOTDIR" },
		{ EISDIR, "EISDIR" }, { EOVERFLOW, "EOVERFLOW" },
		{ ESTALE, "ESTALE" },
	};
	static char other[32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].name;
	snprintf(other, sizeof(other), "errno%d", e);
	return other;
}

/* A syscall returning -1 and errno, or an fd/0 on success (fd closed). */
static void report(const char *name, long ret)
{
	printf("%s %s\n", name, ret < 0 ? errname(errno) : "ok");
	if (ret > 2)
		close((int)ret);
}

/* A child that exits 0 for ok, 1 + errno for failure, or dies by signal. */
static void report_child(const char *name, pid_t pid)
{
	int status;

	if (pid < 0) {
		report(name, -1);
		return;
	}
	if (waitpid(pid, &status, 0) < 0)
		report(name, -1);
	else if (WIFSIGNALED(status))
		printf("%s %s\n", name, WTERMSIG(status) == SIGSYS ? "SIGSYS" : "signal");
	else if (WEXITSTATUS(status) != 0)
		printf("%s %s\n", name, errname(WEXITSTATUS(status) - 1));
	else
		printf("%s ok\n", name);
}

/* clone(2) as fork: no stack of its own, the child returns here and exits. */
static pid_t clone_fork(unsigned long flags)
{
	long pid = syscall(__NR_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);

	if (pid == 0)
		_exit(0);
	return pid;
}

/*
 * The i386 ABI through int $0x80, which a 64-bit process may use: its
 * mount is number 21, so it bypasses any rule keyed on x86_64 numbers. The
 * path must sit below 4 GiB, hence MAP_32BIT.
 */
static pid_t i386_mount(const char *dir, unsigned long flags)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
#if defined(__x86_64__)
	char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	long ret = I386_NR_MOUNT;

	if (low == MAP_FAILED || strlen(dir) >= 4096)
		_exit(1 + ENOMEM);
	strcpy(low, dir);
	__asm__ volatile ("int $0x80"
			  : "+a" (ret)
			  : "b" (0), "c" ((unsigned)(unsigned long)low), "d" (0),
			    "S" ((unsigned)flags), "D" (0)
			  : "r8", "r9", "r10", "r11", "memory");
	_exit(ret < 0 ? 1 + (int)-ret : 0);
#else
	(void)dir, (void)flags;
	_exit(1 + ENOSYS);
#endif
}

/* i386's process_vm_readv (347) the same way, with more iovecs than
 * UIO_MAXIOV: EINVAL where the kernel has it, whatever its sixth argument
 * (the flags, in %ebp, which this asm leaves alone) holds. */
static pid_t i386_cma(void)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
#if defined(__x86_64__)
	long ret = I386_NR_PROCESS_VM_READV;

	__asm__ volatile ("int $0x80"
			  : "+a" (ret)
			  : "b" ((unsigned)getpid()), "c" (0), "d" (~0U),
			    "S" (0), "D" (0)
			  : "r8", "r9", "r10", "r11", "memory");
	_exit(ret < 0 ? 1 + (int)-ret : 0);
#else
	_exit(1 + ENOSYS);
#endif
}

/* legacy-sim's profiles (--abi 3.2, --no-fhandle, --no-cma): the last
 * calls before Linux 3.5 and the first after, O_TMPFILE, file handles,
 * cross-memory attach, and glibc's statx() with a flag its emulation
 * (for kernels before 4.11) refuses. */
static void probe_profiles(const char *dir)
{
	struct statx sx;
	struct { struct file_handle fh; unsigned char b[128]; } h = {
		.fh.handle_bytes = 0 };
	int id;
	pid_t me = getpid();

	report("process_vm_readv", syscall(__NR_process_vm_readv, me, NULL, 0,
					   NULL, 0, 0));
	report("process_vm_writev", syscall(__NR_process_vm_writev, me, NULL, 0,
					    NULL, 0, 0));
	report_child("i386-process_vm_readv", i386_cma());
	report("kcmp", syscall(__NR_kcmp, me, me, 99, 0, 0));
	report("getrandom", syscall(__NR_getrandom, NULL, 0, ~0U));
	report("statx", syscall(__NR_statx, AT_FDCWD, dir, 0, STATX_INO, &sx));
	report("glibc-statx-dont-sync", statx(AT_FDCWD, dir, AT_STATX_DONT_SYNC,
					      STATX_INO, &sx));
	report("open-dir", syscall(__NR_open, dir, O_RDONLY | O_DIRECTORY));
	report("open-tmpfile", syscall(__NR_open, dir, O_TMPFILE | O_RDWR, 0600));
	report("openat-tmpfile", syscall(__NR_openat, AT_FDCWD, dir,
					 O_TMPFILE | O_RDWR, 0600));
	/* a handle of no bytes: EOVERFLOW, and the mount id all the same */
	report("name_to_handle_at", syscall(__NR_name_to_handle_at, AT_FDCWD,
					    dir, &h.fh, &id, 0));
	h.fh.handle_bytes = sizeof h.b;
	if (syscall(__NR_name_to_handle_at, AT_FDCWD, dir, &h.fh, &id, 0) < 0)
		h.fh.handle_bytes = 0;
	/* the mount is named by a descriptor on it */
	int mnt = open(dir, O_RDONLY | O_DIRECTORY);
	report("open_by_handle_at", syscall(__NR_open_by_handle_at, mnt,
					    &h.fh, O_PATH));
	if (mnt >= 0)
		close(mnt);
}

int main(int argc, char **argv)
{
	const char *dir = argv[1];
	unsigned long size0[8] = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: probe DIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	report("mount-shared", syscall(__NR_mount, NULL, dir, NULL, MS_SHARED, NULL));
	report("mount-slave", syscall(__NR_mount, NULL, dir, NULL, MS_SLAVE, NULL));
	report("mount-unbindable", syscall(__NR_mount, NULL, dir, NULL, MS_UNBINDABLE, NULL));
	report("mount-rprivate", syscall(__NR_mount, NULL, dir, NULL, MS_REC | MS_PRIVATE, NULL));
	/* The pre-2.4 magic in the top bits overlaps MS_PRIVATE|MS_SLAVE. */
	report("mount-magic-remount", syscall(__NR_mount, NULL, dir, NULL,
					      MS_MGC_VAL | MS_REMOUNT | MS_BIND, NULL));
	report("x32-mount-shared", syscall(X32_SYSCALL_BIT | __NR_mount, NULL, dir,
					   NULL, MS_SHARED, NULL));
	report_child("i386-mount-shared", i386_mount(dir, MS_SHARED));
	report("mount-private", syscall(__NR_mount, NULL, dir, NULL, MS_PRIVATE, NULL));
	report("setns", syscall(__NR_setns, -1, 0));
	report("open_tree", syscall(__NR_open_tree, AT_FDCWD, dir, O_CLOEXEC));
	report("move_mount", syscall(__NR_move_mount, AT_FDCWD, dir, AT_FDCWD, dir, ~0U));
	report("fsopen", syscall(__NR_fsopen, "tmpfs", 0));
	report("fsconfig", syscall(__NR_fsconfig, -1, 0, NULL, NULL, 0));
	report("fsmount", syscall(__NR_fsmount, -1, 0, 0));
	report("fspick", syscall(__NR_fspick, AT_FDCWD, dir, 0));
	report("mount_setattr", syscall(__NR_mount_setattr, AT_FDCWD, dir, 0, NULL, 0));
	report("statmount", syscall(__NR_statmount, NULL, NULL, 0, 0));
	report("listmount", syscall(__NR_listmount, NULL, NULL, 0, 0));
	report("open_tree_attr", syscall(__NR_open_tree_attr, AT_FDCWD, dir, 0, NULL, 0));
	report("clone3", syscall(__NR_clone3, size0, 0));
	report_child("clone", clone_fork(0));
	report_child("clone-newns", clone_fork(CLONE_NEWNS));
	probe_profiles(dir);
	/* Last: it moves the probe itself into a new namespace. */
	report("unshare-newns", syscall(__NR_unshare, CLONE_NEWNS));
	return 0;
}
