/*
 * legacy-sim [--] COMMAND [ARGS...] - run COMMAND on a simulated legacy kernel.
 * legacy-sim --check                  - exit 0 if the simulation can be set up.
 *
 * design.md Principle 4: libshare's core path must need nothing a pre-2.6.15
 * kernel lacks. A seccomp filter, inherited across fork and exec and never
 * removable, makes this kernel refuse the features such a kernel has not:
 *
 *   mount(2) with MS_SHARED|MS_SLAVE|MS_PRIVATE|MS_UNBINDABLE  EINVAL
 *   unshare(2), clone(2) with CLONE_NEWNS                      EINVAL
 *   clone3, setns, the new mount API, statmount, listmount     ENOSYS
 *   openat2, pidfd_open, pidfd_getfd, memfd_create             ENOSYS
 *
 * EINVAL is what an old kernel answers there: it takes the unknown flags for
 * a new mount without a type. ENOSYS is its answer to a syscall it lacks.
 * Everything else is allowed. Exit status: 125 when the simulation cannot be
 * set up, 126/127 when COMMAND cannot be run (env(1) conventions).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

/* Syscalls newer than some build hosts' headers (numbers are x86_64's). */
#include "sysnr.h"
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif

/*
 * The numbers above and clone's flags in arg 0 hold for x86_64 only; on any
 * other ABI main() refuses rather than install a filter that lets the
 * features through.
 */
#if defined(__x86_64__) && !defined(__ILP32__)
#define SIM_ARCH AUDIT_ARCH_X86_64
#else
#define SIM_ARCH 0
#endif

#define X32_SYSCALL_BIT 0x40000000U
#define MS_PROPAGATION ((1U << 20) | (1U << 19) | (1U << 18) | (1U << 17))
#define MS_MGC_MASK 0xffff0000U
#define MS_MGC_VALUE 0xc0ed0000U
#define CLONE_NEWNS_FLAG 0x00020000U

/* The low 32 bits of an argument (little endian): every flag lives there. */
#define ARG(n) (offsetof(struct seccomp_data, args) + (n) * sizeof(__u64))
#define LD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define JEQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))
#define RET(k) BPF_STMT(BPF_RET | BPF_K, (k))
#define FAIL(e) RET(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define ALLOW RET(SECCOMP_RET_ALLOW)
/* Syscall nr fails with ENOSYS (two instructions). */
#define NOSYS(nr) JEQ((nr), 0, 1), FAIL(ENOSYS)
/* Syscall nr with any of mask in argument n fails with EINVAL (five). */
#define EINVAL_IF(nr, n, mask) JEQ((nr), 0, 4), LD(ARG(n)), \
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (mask), 0, 1), FAIL(EINVAL), ALLOW

static const struct sock_filter filter[] = {
	/*
	 * Syscall numbers mean something else under another ABI: an i386
	 * "int $0x80" mount would slip past every rule below. Kill rather than
	 * fail it, so that a 32-bit program dies loudly instead of misbehaving.
	 */
	LD(offsetof(struct seccomp_data, arch)),
	JEQ(SIM_ARCH, 1, 0),
	RET(SECCOMP_RET_KILL_PROCESS),
	LD(offsetof(struct seccomp_data, nr)),
	/* x32 calls carry the same arch, with this bit set in nr. */
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
	FAIL(ENOSYS),
	/*
	 * mount(2): the kernel strips the old magic 0xC0ED from the top 16
	 * bits before it reads any flag, and that magic has the MS_PRIVATE and
	 * MS_SLAVE bits set: a legacy program passing it must still mount.
	 */
	JEQ(__NR_mount, 0, 6),
	LD(ARG(3)),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MS_PROPAGATION, 0, 3),
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, MS_MGC_MASK),
	JEQ(MS_MGC_VALUE, 1, 0),
	FAIL(EINVAL),
	ALLOW,
	EINVAL_IF(__NR_unshare, 0, CLONE_NEWNS_FLAG),
	EINVAL_IF(__NR_clone, 0, CLONE_NEWNS_FLAG),
	/* clone3's flags are in memory, out of a filter's reach; glibc falls
	 * back to clone when clone3 is missing. */
	NOSYS(__NR_clone3),
	NOSYS(__NR_setns),
	NOSYS(__NR_open_tree),
	NOSYS(__NR_move_mount),
	NOSYS(__NR_fsopen),
	NOSYS(__NR_fsconfig),
	NOSYS(__NR_fsmount),
	NOSYS(__NR_fspick),
	NOSYS(__NR_mount_setattr),
	NOSYS(__NR_statmount),
	NOSYS(__NR_listmount),
	NOSYS(__NR_open_tree_attr),
	/* design.md principle 4: the optional speed-ups are absent too */
	NOSYS(__NR_openat2),
	NOSYS(__NR_pidfd_open),
	NOSYS(__NR_pidfd_getfd),
	NOSYS(__NR_memfd_create),
	ALLOW,
};

static int fail(int status, const char *what, const char *arg)
{
	fprintf(stderr, "legacy-sim: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
	return status;
}

/*
 * Root installs the filter without no_new_privs: a jailed user running a
 * setuid mount(8) must gain root as on a legacy kernel. Anyone else needs
 * no_new_privs, which the kernel demands so a filter cannot fool setuid code.
 */
static int install(void)
{
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = (struct sock_filter *)filter,
	};

	if (!SIM_ARCH) {
		errno = ENOTSUP;
		return -1;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0)
		return 0;
	if (errno != EACCES || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	int check = argc == 2 && strcmp(argv[1], "--check") == 0;
	int first = argc > 1 && strcmp(argv[1], "--") == 0 ? 2 : 1;

	if (!check && (first >= argc || (first == 1 && argv[1][0] == '-')))
		return fail(125, "usage: legacy-sim [--] COMMAND [ARGS...] | --check", NULL);
	if (install() < 0)
		return fail(125, SIM_ARCH ? "cannot install the seccomp filter"
				 : "only x86_64 is supported", strerror(errno));
	if (check) {
		/* Prove the filter answers: setns(-1) is EBADF without it. */
		if (syscall(__NR_setns, -1, 0) == 0 || errno != ENOSYS)
			return fail(125, "the seccomp filter does not take effect", NULL);
		return 0;
	}
	execvp(argv[first], argv + first);
	return fail(errno == ENOENT ? 127 : 126, argv[first], strerror(errno));
}
