/* nscall: the mount-namespace calls made the ways programs make them, for
 * test/shim/shim-ns.bats.  Steps run in order, one output line each:
 * "STEP: ok", "STEP: ENAME", or "STEP = VALUE".
 *
 *   unshare | sys-unshare FLAGS   unshare(2) by libc / syscall(); FLAGS:
 *                                 names joined by "," (ns fs files user
 *                                 uts pid net ipc) or a number
 *   setns PATH TYPE | sys-setns PATH TYPE
 *                                 open PATH, setns(fd, TYPE) (TYPE as
 *                                 FLAGS; PATH pidfd: pidfd_open(getpid()),
 *                                 pidfd:PID: pidfd_open(PID))
 *   clone STEPS... ;              the steps in a child of clone(CLONE_NEWNS)
 *                                 (glibc's wrapper), then "clone: exit N"
 *   sys-clone STEPS... ;          the same through syscall(SYS_clone)
 *   sys-clone3                    syscall(SYS_clone3) with CLONE_NEWNS
 *   fork STEPS... ;               the same with fork() and no namespace
 *   readlink PATH | stat PATH | lstat PATH (st_ino) | fstat PATH (opened)
 *   mount SRC TGT TYPE FLAGS      FLAGS: names (bind rec private shared
 *                                 slave unbindable) or a number
 *   umount TGT | chroot DIR | chdir DIR | cwd | ls DIR | sleep SECONDS
 *   pivot NEW OLD                 syscall(SYS_pivot_root, NEW, OLD)
 *   waitfor FILE                  until FILE exists (10 s at most)
 *   touch FILE                    create FILE (a signal to another process)
 *   hold PATH                     open PATH and keep it (the held descriptor)
 *   setns-held TYPE               setns(held descriptor, TYPE)
 *   close-held                    close it
 *   fds                           "fds = N": how many descriptors are open
 *   closefds                      close every descriptor above 2 (as
 *                                 closefrom(3) does): a membership too
 *   exit N | _exit N | _Exit N | exit_group N | kill
 *                                 end here: exit(3) (atexit handlers and
 *                                 destructors run), _exit(2), _Exit(3),
 *                                 the system call itself (no wrapper
 *                                 sees it), SIGKILL
 *   rmdir DIR                     rmdir(2) once
 *   rmdir-wait DIR                rmdir(2) until it succeeds (5 s at
 *                                 most): "rmdir-wait = US", the
 *                                 microseconds it took, or the last errno
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "nscall.h"

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static const struct { const char *name; unsigned long v; } names[] = {
	{ "ns", CLONE_NEWNS }, { "fs", CLONE_FS }, { "files", CLONE_FILES },
	{ "user", CLONE_NEWUSER }, { "uts", CLONE_NEWUTS },
	{ "pid", CLONE_NEWPID }, { "net", CLONE_NEWNET },
	{ "ipc", CLONE_NEWIPC }, { "bind", MS_BIND }, { "rec", MS_REC },
	{ "private", MS_PRIVATE }, { "shared", MS_SHARED },
	{ "slave", MS_SLAVE }, { "unbindable", MS_UNBINDABLE },
	{ "move", MS_MOVE }, { "0", 0 },
};

static unsigned long flags_of(const char *s)
{
	unsigned long v = 0;
	char *copy = strdup(s), *save, *w;
	if (s[0] >= '1' && s[0] <= '9')
		return strtoul(s, NULL, 0);
	for (w = strtok_r(copy, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof names / sizeof *names; i++)
			if (strcmp(names[i].name, w) == 0)
				break;
		if (i == sizeof names / sizeof *names) {
			fprintf(stderr, "nscall: unknown flag %s\n", w);
			exit(2);
		}
		v |= names[i].v;
	}
	free(copy);
	return v;
}

const char *prefix = "";
static int held = -1;

void result(const char *step, long r)
{
	if (r < 0)
		printf("%s%s: %s\n", prefix, step, strerrorname_np(errno));
	else
		printf("%s%s: ok\n", prefix, step);
	fflush(stdout);
}

/* A setns type: the flags' names (ns, ipc, uts, net, user, pid, joined
 * by ","), or a number. */
static int nstype(const char *s)
{
	return (int)flags_of(s);
}

static long do_setns(char **a, int raw)
{
	int fd = strncmp(a[0], "pidfd", 5) == 0 ?
		 (int)syscall(SYS_pidfd_open, a[0][5] == ':' ? atoi(a[0] + 6) :
			      getpid(), 0) :
		 open(a[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long r = raw ? syscall(SYS_setns, fd, nstype(a[1])) :
		 setns(fd, nstype(a[1]));
	int saved = errno;
	close(fd);
	errno = saved;
	return r;
}

static int run(char **a, int n);

struct job { char **a; int n; };

static int clone_start(void *p)
{
	struct job *j = p;
	prefix = "child ";
	return run(j->a, j->n);
}

/* The steps up to ";" run in the child; returns how many words it took. */
static int child(char **a, int n, const char *how)
{
	int end = 0;
	while (end < n && strcmp(a[end], ";") != 0)
		end++;
	static char stack[256 * 1024] __attribute__((aligned(16)));
	struct job job = { a, end };
	pid_t pid;
	if (strcmp(how, "clone") == 0) {
		pid = clone(clone_start, stack + sizeof stack,
			    CLONE_NEWNS | SIGCHLD, &job);
	} else {
		pid = strcmp(how, "fork") == 0 ? fork() :
		      (pid_t)syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0,
				     0);
		if (pid == 0) {
			prefix = "child ";
			fflush(stdout);
			_exit(run(a, end));
		}
	}
	if (pid < 0) {
		result(how, -1);
	} else {
		int st = 0;
		waitpid(pid, &st, __WALL);
		printf("%s: exit %d\n", how,
		       WIFEXITED(st) ? WEXITSTATUS(st) : 128);
		fflush(stdout);
	}
	return end + (end < n);
}

static int one(char **a, int n, int *used);

static int run(char **a, int n)
{
	for (int i = 0, used; i < n; i += used)
		if (one(a + i, n - i, &used))
			return 2;
	return 0;
}

/* The namespace steps; 1 when s is none of them. */
static int ns_step(char **a, int n, int *used)
{
	const char *s = a[0];
	int rc = file_step(a, n, used);
	if (rc > 0)
		rc = end_step(a, n, used);
	if (rc <= 0)
		return rc;
	if (!strcmp(s, "unshare") || !strcmp(s, "sys-unshare")) {
		NEED(1);
		unsigned long f = flags_of(a[1]);
		result(s, s[0] == 's' ? syscall(SYS_unshare, f) :
		       unshare((int)f));
	} else if (!strcmp(s, "setns") || !strcmp(s, "sys-setns")) {
		NEED(2);
		result(s, do_setns(a + 1, s[0] == 's'));
	} else if (!strcmp(s, "clone") || !strcmp(s, "sys-clone") ||
		   !strcmp(s, "fork")) {
		*used = 1 + child(a + 1, n - 1, s);
	} else if (!strcmp(s, "hold")) {
		NEED(1);
		result(s, held = open(a[1], O_RDONLY | O_CLOEXEC));
	} else if (!strcmp(s, "setns-held")) {
		NEED(1);
		result(s, setns(held, nstype(a[1])));
	} else if (!strcmp(s, "close-held")) {
		NEED(0);
		result(s, close(held));
		held = -1;
	} else if (!strcmp(s, "fds")) {
		NEED(0);
		DIR *d = opendir("/proc/self/fd");
		int k = -3;            /* ".", ".." and the directory's own */
		while (d && readdir(d))
			k++;
		if (d)
			closedir(d);
		printf("%sfds = %d\n", prefix, k);
	} else if (!strcmp(s, "closefds")) {
		NEED(0);
		result(s, syscall(SYS_close_range, 3, ~0U, 0));
	} else if (!strcmp(s, "sys-clone3")) {
		NEED(0);
		unsigned long long args[11] = { CLONE_NEWNS, 0, 0, 0, SIGCHLD };
		long r = syscall(SYS_clone3, args, sizeof args);
		if (r == 0)
			_exit(0);
		result(s, r);
	} else {
		return 1;
	}
	fflush(stdout);
	return 0;
usage:
	fprintf(stderr, "nscall: bad step %s\n", s);
	return -1;
}

/* The other steps. */
static int one(char **a, int n, int *used)
{
	const char *s = a[0];
	char buf[4096];
	int rc = ns_step(a, n, used);
	if (rc <= 0)
		return -rc;
	if (!strcmp(s, "mount")) {
		NEED(4);
		result(s, mount(strcmp(a[1], "-") ? a[1] : NULL, a[2],
				strcmp(a[3], "-") ? a[3] : NULL, flags_of(a[4]),
				NULL));
	} else if (!strcmp(s, "pivot")) {
		NEED(2);
		result(s, syscall(SYS_pivot_root, a[1], a[2]));
	} else if (!strcmp(s, "umount")) {
		NEED(1);
		result(s, umount2(a[1], 0));
	} else if (!strcmp(s, "chroot")) {
		NEED(1);
		result(s, chroot(a[1]) ?: chdir("/"));
	} else if (!strcmp(s, "chdir")) {
		NEED(1);
		result(s, chdir(a[1]));
	} else if (!strcmp(s, "cwd")) {
		NEED(0);
		if (!getcwd(buf, sizeof buf))
			result(s, -1);
		else
			printf("%scwd = %s\n", prefix, buf);
	} else if (!strcmp(s, "ls")) {
		NEED(1);
		show_dir(a[1]);
	} else if (!strcmp(s, "sleep")) {
		NEED(1);
		usleep((useconds_t)(atof(a[1]) * 1e6));
	} else if (!strcmp(s, "waitfor")) {
		NEED(1);
		for (int i = 0; i < 1000 && access(a[1], F_OK) != 0; i++)
			usleep(10000);
	} else if (!strcmp(s, "touch")) {
		NEED(1);
		int fd = open(a[1], O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	} else {
		goto usage;
	}
	fflush(stdout);
	return 0;
usage:
	fprintf(stderr, "nscall: bad step %s\n", s);
	return 1;
}

int main(int argc, char **argv)
{
	return run(argv + 1, argc - 1);
}
