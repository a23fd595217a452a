/*
 * legacy-sim [PROFILE...] [--] COMMAND [ARGS...] - run COMMAND on a
 *                                                  simulated legacy kernel.
 * legacy-sim [PROFILE...] --check - exit 0 if the simulation can be set up.
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
 * The rules hold for x86_64 programs and for i386 ones (an i386 jail's, on
 * a kernel with IA32 emulation); a call of any other ABI is killed.
 * Everything else is allowed, unless a PROFILE takes more away (issue 23):
 *
 *   --abi 3.2           every syscall from Linux 3.5 on (kcmp, 312, and
 *                       up) ENOSYS; open/openat with O_TMPFILE EISDIR (3.2
 *                       knows no such flag: a directory opened to write)
 *   --no-fhandle        name_to_handle_at, open_by_handle_at EOPNOTSUPP
 *                       (a kernel without CONFIG_FHANDLE)
 *   --no-cma            process_vm_readv, process_vm_writev ENOSYS (a
 *                       kernel without CONFIG_CROSS_MEMORY_ATTACH, or a
 *                       container's seccomp profile); not in --oldest
 *   --no-fuse           no /dev/fuse                            (hook)
 *   --no-fdinfo-mnt-id  /proc/PID/fdinfo without mnt_id (before 3.15)
 *                                                               (hook)
 *   --oldest            all four: the oldest ABI the tests run on
 *
 * A filter cannot see a path or a file's contents: the two hooks are
 * words of LIBSHARE_LEGACY_SIM in COMMAND's environment, which the broker
 * honours as the kernel's answer (daemon/broker/base/fd.c, sim_lacks()).
 * LEGACY_SIM_PROFILE, when set, holds PROFILE words taken before the
 * command line's: how a test harness runs every suite on an older ABI.
 * Exit status: 125 when the simulation cannot be set up, 126/127 when
 * COMMAND cannot be run (env(1) conventions).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
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

/* legacy-sim itself must be an x86_64 program: check() and the command
 * it runs are, and the filter is written for that kernel's ABIs. */
#if defined(__x86_64__) && !defined(__ILP32__)
#define SIM_HOST 1
#else
#define SIM_HOST 0
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
/* Syscall nr with any of mask in argument n fails with e (five). */
#define ERRNO_IF(nr, n, mask, e) JEQ((nr), 0, 4), LD(ARG(n)), \
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (mask), 0, 1), FAIL(e), ALLOW
#define EINVAL_IF(nr, n, mask) ERRNO_IF(nr, n, mask, EINVAL)
#define EISDIR_IF(nr, n, mask) ERRNO_IF(nr, n, mask, EISDIR)
/* O_TMPFILE without its O_DIRECTORY: the bit Linux 3.11 added. */
#define O_TMPFILE_BIT 020000000U

/*
 * The system-call ABIs of an x86_64 kernel: its own, and i386's (IA32
 * emulation: an i386 jail's programs run natively, or any program through
 * int $0x80).  Their numbers differ below 424, where the calls added
 * since Linux 5.1 are numbered alike on every architecture; clone's flags
 * are its first argument on both.  Any other ABI is killed: a rule keyed
 * on numbers it does not know would let the features through.
 */
struct abi {
	__u32 arch;
	__u32 open, openat, mount, clone, unshare, setns, kcmp;
	__u32 name_to_handle_at, open_by_handle_at, memfd_create;
	__u32 process_vm_readv, process_vm_writev;
};

static const struct abi x86_64 = {
	AUDIT_ARCH_X86_64, 2, 257, 165, 56, 272, 308, 312, 303, 304, 319,
	310, 311,
};
static const struct abi i386 = {
	AUDIT_ARCH_I386, 5, 295, 21, 120, 310, 346, 349, 341, 342, 356,
	347, 348,
};

/* What the command line and LEGACY_SIM_PROFILE asked for. */
struct profile {
	bool abi32, nofhandle, nocma, check;
	char hooks[64];        /* LIBSHARE_LEGACY_SIM's words */
};

#define MAXPROG 256
/* The instructions given, after prog's first *n. */
#define PUT(...) do { \
	const struct sock_filter ins_[] = { __VA_ARGS__ }; \
	memcpy(prog + *n, ins_, sizeof ins_); \
	*n += sizeof ins_ / sizeof ins_[0]; \
} while (0)

/* ABI a's rules, each answering or falling through with the syscall number
 * still loaded; the last allows what none refused. */
static void rules(struct sock_filter *prog, size_t *n, const struct abi *a,
		  const struct profile *p)
{
	PUT(LD(offsetof(struct seccomp_data, nr)));
	if (a->arch == AUDIT_ARCH_X86_64)  /* x32: the same arch, this bit */
		PUT(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
		    FAIL(ENOSYS));
	if (p->abi32)
		PUT(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, a->kcmp, 0, 1),
		    FAIL(ENOSYS),
		    EISDIR_IF(a->open, 1, O_TMPFILE_BIT),
		    EISDIR_IF(a->openat, 2, O_TMPFILE_BIT));
	if (p->nofhandle)
		PUT(JEQ(a->name_to_handle_at, 0, 1), FAIL(EOPNOTSUPP),
		    JEQ(a->open_by_handle_at, 0, 1), FAIL(EOPNOTSUPP));
	if (p->nocma)
		PUT(NOSYS(a->process_vm_readv), NOSYS(a->process_vm_writev));
	/*
	 * mount(2): the kernel strips the old magic 0xC0ED from the top 16
	 * bits before it reads any flag, and that magic has the MS_PRIVATE and
	 * MS_SLAVE bits set: a legacy program passing it must still mount.
	 */
	PUT(JEQ(a->mount, 0, 6),
	    LD(ARG(3)),
	    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MS_PROPAGATION, 0, 3),
	    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, MS_MGC_MASK),
	    JEQ(MS_MGC_VALUE, 1, 0),
	    FAIL(EINVAL),
	    ALLOW,
	    EINVAL_IF(a->unshare, 0, CLONE_NEWNS_FLAG),
	    EINVAL_IF(a->clone, 0, CLONE_NEWNS_FLAG),
	    /* clone3's flags are in memory, out of a filter's reach; glibc
	     * falls back to clone when clone3 is missing. */
	    NOSYS(__NR_clone3),
	    NOSYS(a->setns),
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
	    NOSYS(a->memfd_create),
	    ALLOW);
}

/* The filter: x86_64's rules, then i386's, chosen by the arch. */
static size_t filter(struct sock_filter *prog, const struct profile *p)
{
	size_t len = 0, *n = &len, ja;
	PUT(LD(offsetof(struct seccomp_data, arch)),
	    JEQ(AUDIT_ARCH_X86_64, 3, 0),
	    JEQ(AUDIT_ARCH_I386, 0, 1),
	    BPF_STMT(BPF_JMP | BPF_JA | BPF_K, 0),   /* to i386's, below */
	    RET(SECCOMP_RET_KILL_PROCESS));
	ja = len - 2;
	rules(prog, n, &x86_64, p);
	prog[ja].k = (__u32)(len - ja - 1);
	rules(prog, n, &i386, p);
	return len;
}


static int fail(int status, const char *what, const char *arg)
{
	fprintf(stderr, "legacy-sim: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
	return status;
}

static void hook(struct profile *p, const char *word)
{
	if (strstr(p->hooks, word))
		return;
	if (*p->hooks)
		strcat(p->hooks, ",");
	strcat(p->hooks, word);
}

/* One PROFILE word at argv[*i] (--abi takes the next too): 0, or -1 if
 * it is none. */
static int profile_word(struct profile *p, char **argv, int *i)
{
	const char *w = argv[*i];
	if (strcmp(w, "--abi") == 0 && argv[*i + 1] &&
	    strcmp(argv[*i + 1], "3.2") == 0) {
		p->abi32 = true;
		++*i;
	} else if (strcmp(w, "--no-fhandle") == 0) {
		p->nofhandle = true;
	} else if (strcmp(w, "--no-cma") == 0) {
		p->nocma = true;
	} else if (strcmp(w, "--no-fuse") == 0) {
		hook(p, "no-fuse");
	} else if (strcmp(w, "--no-fdinfo-mnt-id") == 0) {
		hook(p, "no-fdinfo-mnt-id");
	} else if (strcmp(w, "--oldest") == 0) {
		p->abi32 = p->nofhandle = true;
		hook(p, "no-fuse");
		hook(p, "no-fdinfo-mnt-id");
	} else {
		return -1;
	}
	return 0;
}

/* LEGACY_SIM_PROFILE's words, each a PROFILE word: 0, or -1. */
static int profile_env(struct profile *p)
{
	char copy[256], *words[32], *save = NULL;
	const char *env = getenv("LEGACY_SIM_PROFILE");
	int n = 0;
	if (!env || strlen(env) >= sizeof copy)
		return env ? -1 : 0;
	strcpy(copy, env);
	for (char *w = strtok_r(copy, " \t", &save); w && n < 31;
	     w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	words[n] = NULL;
	for (int i = 0; i < n; i++)
		if (profile_word(p, words, &i) < 0)
			return -1;
	return 0;
}

/*
 * Root installs the filter without no_new_privs: a jailed user running a
 * setuid mount(8) must gain root as on a legacy kernel. Anyone else needs
 * no_new_privs, which the kernel demands so a filter cannot fool setuid code.
 */
static int install(const struct profile *p)
{
	struct sock_filter prog[MAXPROG];
	struct sock_fprog fprog = { .len = (unsigned short)filter(prog, p),
				    .filter = prog };

	if (!SIM_HOST) {
		errno = ENOTSUP;
		return -1;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) == 0)
		return 0;
	if (errno != EACCES || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog);
}

/* Prove the filter answers: setns(-1) is EBADF without it, kcmp(0, 0, 99)
 * EINVAL, name_to_handle_at(-1) EBADF, process_vm_readv of nothing 0. */
static int check(const struct profile *p)
{
	if (syscall(__NR_setns, -1, 0) == 0 || errno != ENOSYS)
		return -1;
	if (p->abi32 && (syscall(__NR_kcmp, 0, 0, 99, 0, 0) == 0 ||
			 errno != ENOSYS))
		return -1;
	if (p->nofhandle && (syscall(__NR_name_to_handle_at, -1, "", NULL,
				     NULL, 0) == 0 || errno != EOPNOTSUPP))
		return -1;
	if (p->nocma && (syscall(__NR_process_vm_readv, getpid(), NULL, 0,
				 NULL, 0, 0) == 0 || errno != ENOSYS))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct profile p = { .abi32 = false };
	int first = 1, dashdash = 0;

	if (profile_env(&p) < 0)
		return fail(125, "LEGACY_SIM_PROFILE: not a profile",
			    getenv("LEGACY_SIM_PROFILE"));
	for (; first < argc && argv[first][0] == '-'; first++) {
		if (strcmp(argv[first], "--") == 0) {
			dashdash = ++first;
			break;
		}
		if (strcmp(argv[first], "--check") == 0)
			p.check = true;
		else if (profile_word(&p, argv, &first) < 0)
			break;
	}
	if (p.check ? first != argc || dashdash :
	    first >= argc || (!dashdash && argv[first][0] == '-'))
		return fail(125, "usage: legacy-sim [PROFILE...] [--] COMMAND "
			    "[ARGS...] | [PROFILE...] --check", NULL);
	if (install(&p) < 0)
		return fail(125, SIM_HOST ? "cannot install the seccomp filter"
				 : "only x86_64 is supported", strerror(errno));
	if (p.check)
		return check(&p) < 0 ? fail(125, "the seccomp filter does not "
					    "take effect", NULL) : 0;
	if (*p.hooks && setenv("LIBSHARE_LEGACY_SIM", p.hooks, 1) < 0)
		return fail(125, "setenv", strerror(errno));
	execvp(argv[first], argv + first);
	return fail(errno == ENOENT ? 127 : 126, argv[first], strerror(errno));
}
