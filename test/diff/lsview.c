/*
 * lsview JAIL - print /proc/self/mountinfo as a process chrooted into JAIL
 * sees it (native side of the kernel-differential harness).
 *
 * /proc is opened (O_PATH) before the chroot, so the jail needs no /proc
 * mount of its own; the kernel renders the file relative to the reader's
 * root at open time (semantics.md 1.5.3), which is the jail.
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

	if (argc != 2) {
		fprintf(stderr, "usage: lsview JAIL\n");
		return 2;
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
