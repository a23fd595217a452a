/* call: makes mount-family calls the ways programs make them, for the
 * shim's tests (the .bats files in test/shim/).
 *
 * usage: call OP [ARG...] [OP [ARG...]]...
 *
 * Each OP sets errno to 1234, makes its call and prints one line:
 *   "OP: ok"          success, errno still 1234 (the shim preserved it)
 *   "OP: ok errno=N"  success, but errno changed
 *   "OP: ENAME"       failure with that errno
 * The exit status is the errno of the last OP (0 when it succeeded; 255
 * when it succeeded but changed errno).  An argument "-" is a NULL pointer;
 * "=N" is a path of N bytes ("/aaa...").
 *
 *   mount SRC TGT TYPE FLAGS DATA, umount TGT, umount2 TGT FLAGS,
 *   chroot DIR              through the libc wrappers
 *   sys-mount SRC TGT TYPE FLAGS DATA, sys-umount2 TGT FLAGS,
 *   sys-pivot_root NEW OLD, sys-chroot DIR
 *                           through syscall()
 *   api NAME                the new mount API's glibc wrapper NAME (fsopen,
 *                           ...), found with dlsym: no glibc 2.36 needed
 *   sys NAME                syscall(SYS_NAME) for the same calls and for
 *                           statmount, listmount and open_tree_attr
 *   getpid                  syscall(SYS_getpid) == getpid()
 *   opens-zero              open("/dev/null") is descriptor 0 (after
 *                           closefds: the shim holds none of the lowest)
 *   badfd                   syscall(SYS_close, -1): EBADF, -1
 *   mmap6                   syscall(SYS_mmap) with six arguments, each
 *                           checked by what it maps
 *   access PATH             whether PATH exists (after a chroot)
 *   fork                    the rest runs in a child, then in the parent:
 *                           lines prefixed "child " and "parent "
 *   vfork OP ARG...         OP alone runs in a vfork child, which
 *                           _exit()s with its status; the parent reports
 *   closefds                closes every descriptor, stdout too: what
 *                           follows shows only in the exit status
 *   sockets                 "sockets: N", the descriptors that are sockets
 *                           (the shim's kept connection among them)
 *   exec PROG [ARG...]      the rest of the line is a program to execute
 *   cover FILE              FILE (created empty) put with dup2 over every
 *                           descriptor that is a socket (a program that
 *                           reuses the shim's number for its own file)
 *   covered                 "covered: N ok" when the N descriptors cover
 *                           put there are still FILE and FILE still empty
 *   wait FILE               waits until FILE exists
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLOBBERED 255
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

static const char *prefix = "";
static int clobbered;            /* errno after a CLOBBERED success */

static const char *arg(char *s)
{
	size_t n;
	char *p;
	if (strcmp(s, "-") == 0)
		return NULL;
	if (s[0] != '=')
		return s;
	n = strtoul(s + 1, NULL, 0);
	if (!(p = malloc(n + 1)))
		abort();
	memset(p, 'a', n);
	p[0] = '/';
	p[n] = '\0';
	return p;
}

static unsigned long num(const char *s)
{
	return strtoul(s, NULL, 0);
}

/* The new mount API, with arguments the kernel itself would accept or
 * answer with something other than ENOSYS. */
static const struct newapi {
	const char *name;
	long nr;
	long a[5];
} newapi[] = {
	{ "fsopen", 430, { (long)"tmpfs", 0 } },
	{ "fsconfig", 431, { -1, 0, 0, 0, 0 } },
	{ "fsmount", 432, { -1, 0, 0 } },
	{ "fspick", 433, { AT_FDCWD, (long)"/", 0 } },
	{ "move_mount", 429, { -1, (long)"", -1, (long)"", 0 } },
	{ "open_tree", 428, { AT_FDCWD, (long)"/", 0 } },
	{ "mount_setattr", 442, { -1, (long)"", 0, 0, 0 } },
	{ "statmount", 457, { 0, 0, 0, 0 } },
	{ "listmount", 458, { 0, 0, 0, 0 } },
	{ "open_tree_attr", 467, { AT_FDCWD, (long)"/", 0, 0, 0 } },
};

static const struct newapi *find_newapi(const char *name)
{
	for (size_t i = 0; i < sizeof newapi / sizeof *newapi; i++)
		if (strcmp(newapi[i].name, name) == 0)
			return &newapi[i];
	fprintf(stderr, "call: unknown call %s\n", name);
	exit(2);
}

/* All of them return int and take at most five integer or pointer
 * arguments. */
static long api(char **a)
{
	const struct newapi *c = find_newapi(a[0]);
	int (*f)(long, long, long, long, long) = dlsym(RTLD_DEFAULT, a[0]);
	if (!f) {
		errno = ENOENT;        /* no such wrapper: neither shim nor libc */
		return -1;
	}
	return f(c->a[0], c->a[1], c->a[2], c->a[3], c->a[4]);
}

static long sys(char **a)
{
	const struct newapi *c = find_newapi(a[0]);
	return syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4]);
}

static long op_mount(char **a)
{
	return mount(arg(a[0]), arg(a[1]), arg(a[2]), num(a[3]), arg(a[4]));
}

static long op_umount(char **a) { return umount(arg(a[0])); }
static long op_umount2(char **a) { return umount2(arg(a[0]), (int)num(a[1])); }
static long op_chroot(char **a) { return chroot(arg(a[0])); }
static long op_access(char **a) { return access(a[0], F_OK); }

static long op_sys_mount(char **a)
{
	return syscall(SYS_mount, arg(a[0]), arg(a[1]), arg(a[2]), num(a[3]),
		       arg(a[4]));
}

static long op_sys_umount2(char **a)
{
	return syscall(SYS_umount2, arg(a[0]), (int)num(a[1]));
}

static long op_sys_pivot_root(char **a)
{
	return syscall(SYS_pivot_root, arg(a[0]), arg(a[1]));
}

static long op_sys_chroot(char **a)
{
	return syscall(SYS_chroot, arg(a[0]));
}

static long op_getpid(char **a)
{
	(void)a;
	if (syscall(SYS_getpid) == getpid())
		return 0;
	errno = ESRCH;
	return -1;
}

static long op_opens_zero(char **a)
{
	(void)a;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd == 0)
		return close(fd);
	if (fd > 0)
		close(fd);
	errno = EMFILE;
	return -1;
}

static long op_badfd(char **a)
{
	(void)a;
	long r = syscall(SYS_close, -1);
	if (r == -1 && errno == EBADF)
		return -1;
	errno = EPROTO;
	return -1;
}

/* A shared mapping of the second page of a file whose pages start with
 * 'A' and 'B': a wrong length, protection, flag, descriptor or offset
 * fails or maps the wrong byte. */
static long op_mmap6(char **a)
{
	char page[4096];
	int fd = memfd_create("mmap6", 0);
	const char *p;
	(void)a;
	memset(page, 'A', sizeof page);
	if (fd < 0 || write(fd, page, sizeof page) != sizeof page ||
	    write(fd, "B", 1) != 1 || ftruncate(fd, 2 * sizeof page) < 0)
		return -1;
	p = (const char *)syscall(SYS_mmap, 0L, 4096L, (long)PROT_READ,
				  (long)MAP_SHARED, (long)fd, 4096L);
	close(fd);
	if (p == (const char *)-1)
		return -1;
	if (p[0] != 'B') {
		errno = EPROTO;
		return -1;
	}
	return munmap((void *)p, 4096);
}

static const struct op {
	const char *name;
	int nargs;
	long (*run)(char **a);
} ops[] = {
	{ "mount", 5, op_mount },
	{ "umount", 1, op_umount },
	{ "umount2", 2, op_umount2 },
	{ "chroot", 1, op_chroot },
	{ "sys-mount", 5, op_sys_mount },
	{ "sys-umount2", 2, op_sys_umount2 },
	{ "sys-pivot_root", 2, op_sys_pivot_root },
	{ "sys-chroot", 1, op_sys_chroot },
	{ "api", 1, api },
	{ "sys", 1, sys },
	{ "getpid", 0, op_getpid },
	{ "opens-zero", 0, op_opens_zero },
	{ "badfd", 0, op_badfd },
	{ "mmap6", 0, op_mmap6 },
	{ "access", 1, op_access },
};

static const struct op *find_op(const char *name)
{
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
		if (strcmp(ops[i].name, name) == 0)
			return &ops[i];
	fprintf(stderr, "call: unknown op %s\n", name);
	exit(2);
}

/* 0, the errno of a failure, or CLOBBERED. */
static int run(const struct op *o, char **a)
{
	long r;
	errno = 1234;
	r = o->run(a);
	if (r == -1)
		return errno;
	clobbered = errno;
	return errno == 1234 ? 0 : CLOBBERED;
}

static void report(const char *vforked, const char *name, int st)
{
	char both[64];
	if (vforked) {
		snprintf(both, sizeof both, "%s %s", vforked, name);
		name = both;
	}
	if (st == 0)
		printf("%s%s: ok\n", prefix, name);
	else if (st == CLOBBERED)
		printf("%s%s: ok errno=%d\n", prefix, name, clobbered);
	else
		printf("%s%s: %s\n", prefix, name, strerrorname_np(st) ?
		       strerrorname_np(st) : "?");
	fflush(stdout);
}

/* Runs one op in a vfork child, which may only call and _exit. */
static int run_vforked(const struct op *o, char **a)
{
	int st;
	pid_t pid = vfork();
	if (pid == 0)
		_exit(run(o, a));
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return EPROTO;
	return WEXITSTATUS(st);
}

static int cover_fd[64], ncover;

static void cover(const char *file)
{
	struct stat st;
	int f = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	for (int fd = 0; f >= 0 && fd < 1024 && ncover < 64; fd++)
		if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    dup2(f, fd) == fd)
			cover_fd[ncover++] = fd;
	if (f >= 0)
		close(f);
}

static void covered(void)
{
	struct stat st, first;
	int ok = ncover > 0 && fstat(cover_fd[0], &first) == 0;
	for (int i = 0; ok && i < ncover; i++)
		ok = fstat(cover_fd[i], &st) == 0 && st.st_ino == first.st_ino &&
		     st.st_dev == first.st_dev && st.st_size == 0;
	printf("%scovered: %d %s\n", prefix, ncover, ok ? "ok" : "SPOILED");
	fflush(stdout);
}

static int sockets(void)
{
	struct stat st;
	int n = 0;
	for (int fd = 0; fd < 1024; fd++)
		n += fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
	return n;
}

int main(int argc, char **argv)
{
	int st = 0;
	for (int i = 1; i < argc;) {
		const char *name = argv[i++];
		if (strcmp(name, "fork") == 0) {
			pid_t pid = fork();
			if (pid > 0 && waitpid(pid, NULL, 0) < 0)
				return 2;
			prefix = pid ? "parent " : "child ";
			continue;
		}
		if (strcmp(name, "sockets") == 0) {
			printf("%ssockets: %d\n", prefix, sockets());
			fflush(stdout);
			continue;
		}
		if (strcmp(name, "cover") == 0 && i < argc) {
			cover(argv[i++]);
			continue;
		}
		if (strcmp(name, "covered") == 0) {
			covered();
			continue;
		}
		if (strcmp(name, "wait") == 0 && i < argc) {
			while (access(argv[i], F_OK) < 0)
				usleep(10000);
			i++;
			continue;
		}
		if (strcmp(name, "exec") == 0 && i < argc) {
			execv(argv[i], argv + i);
			return 127;
		}
		if (strcmp(name, "closefds") == 0) {
			st = syscall(SYS_close_range, 0, ~0U, 0) ? errno : 0;
			continue;
		}
		int vforked = strcmp(name, "vfork") == 0;
		if (vforked && i < argc)
			name = argv[i++];
		const struct op *o = find_op(name);
		if (argc - i < o->nargs) {
			fprintf(stderr, "call: %s needs %d arguments\n", name,
				o->nargs);
			return 2;
		}
		st = vforked ? run_vforked(o, argv + i) : run(o, argv + i);
		report(vforked ? "vfork" : NULL, name, st);
		i += o->nargs;
	}
	return st;
}
