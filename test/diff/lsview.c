/*
 * lsview [-s] JAIL - print /proc/self/mountinfo as a process chrooted into
 * JAIL sees it (native side of the kernel-differential harness).
 *
 * /proc is opened (O_PATH) before the chroot, so the jail needs no /proc
 * mount of its own; the kernel renders the file relative to the reader's
 * root at open time (semantics.md 1.5.3), which is the jail.
 *
 * -s (through the shim, broker-run.sh's virtual views): chroot(2) into JAIL
 * (none for "/"), then a plain open("/proc/self/mountinfo") as any program
 * makes it, with no /proc descriptor of our own: run with libshare.so
 * preloaded, the shim's chroot tells the broker the new root and its open
 * serves the broker's table for it (a jail has no /proc: without the shim
 * the open fails).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

static int die(const char *what, const char *arg)
{
	fprintf(stderr, "lsview: %s %s: %s\n", what, arg, strerror(errno));
	return 1;
}

static int copy_out(int fd)
{
	char buf[1 << 16];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (fwrite(buf, 1, n, stdout) != (size_t)n)
			return -1;
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	int procfd, fd;
	int shim = argc == 3 && strcmp(argv[1], "-s") == 0;

	if (argc != 2 + shim) {
		fprintf(stderr, "usage: lsview [-s] JAIL\n");
		return 2;
	}
	if (shim) {
		if (strcmp(argv[2], "/") != 0 &&
		    (chroot(argv[2]) < 0 || chdir("/") < 0))
			return die("chroot", argv[2]);
		fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return die("open", "/proc/self/mountinfo");
		if (copy_out(fd) < 0 || fflush(stdout) != 0)
			return die("read", "/proc/self/mountinfo");
		return 0;
	}
	procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return die("open", "/proc");
	if (chroot(argv[1]) < 0 || chdir("/") < 0)
		return die("chroot", argv[1]);
	fd = openat(procfd, "self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return die("open", "/proc/self/mountinfo");
	if (copy_out(fd) < 0 || fflush(stdout) != 0)
		return die("read", "/proc/self/mountinfo");
	return 0;
}
