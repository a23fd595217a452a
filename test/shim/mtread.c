/* mtread: reads a mount table the ways programs do, for
 * test/shim/shim-mounttable.bats.  It prints what it read and exits 0, or
 * prints "OP: ENAME" and exits 1.
 *
 *   mtread [--chroot DIR] OP ARG...
 *
 * --chroot DIR: chroot(DIR) and chdir("/") first, through the shim as a
 * jailed program's own chroot (no spy in between).  OP ARG... is one of
 *
 *          open PATH | open64 PATH | open_2 PATH (glibc's fortified
 *          __open_2) | fopen PATH | fopen64 PATH | freopen PATH (on
 *          stdin) | setmntent PATH | sys-open PATH | sys-openat PATH
 *          openat DIR NAME     openat(open(DIR), NAME)
 *          chdir DIR NAME      open(NAME) after chdir(DIR)
 *          pid LEAF            open("/proc/<getpid()>/LEAF")
 *          tid LEAF            open("/proc/self/task/<gettid()>/LEAF")
 *          access PATH         access(PATH, R_OK)
 *          write PATH          open(PATH, O_WRONLY)
 *          cloexec PATH        whether open(PATH, O_CLOEXEC) and
 *                              open(PATH, 0) have FD_CLOEXEC: "1 0"
 *          mount-read SRC DIR  mount(SRC, DIR, tmpfs) then print
 *                              /proc/self/mountinfo
 */
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

int __open_2(const char *, int);

static int fail(const char *op)
{
	printf("%s: %s\n", op, strerrorname_np(errno) ? strerrorname_np(errno)
						      : "?");
	return 1;
}

static int dump_fd(int fd)
{
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
	return n < 0 ? fail("read") : 0;
}

static int dump_file(FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0)
		fputs(line, stdout);
	free(line);
	fclose(f);
	return 0;
}

/* The ops that open PATH as a program opens a file: what they print and
 * return, or -1 when op is none of them. */
static int by_open(const char *op, const char *p)
{
	FILE *f;
	int fd;
	if (!strcmp(op, "open"))
		return (fd = open(p, O_RDONLY)) < 0 ? fail(op) : dump_fd(fd);
	if (!strcmp(op, "open64"))
		return (fd = open64(p, O_RDONLY)) < 0 ? fail(op) : dump_fd(fd);
	if (!strcmp(op, "open_2"))
		return (fd = __open_2(p, O_RDONLY)) < 0 ? fail(op) : dump_fd(fd);
	if (!strcmp(op, "sys-open"))
		return (fd = (int)syscall(SYS_open, p, O_RDONLY)) < 0 ?
		       fail(op) : dump_fd(fd);
	if (!strcmp(op, "sys-openat"))
		return (fd = (int)syscall(SYS_openat, AT_FDCWD, p, O_RDONLY)) < 0 ?
		       fail(op) : dump_fd(fd);
	if (!strcmp(op, "fopen"))
		return (f = fopen(p, "re")) ? dump_file(f) : fail(op);
	if (!strcmp(op, "fopen64"))
		return (f = fopen64(p, "r")) ? dump_file(f) : fail(op);
	if (!strcmp(op, "freopen")) {
		return (f = freopen(p, "r", stdin)) ? dump_file(f) : fail(op);
	}
	if (!strcmp(op, "setmntent")) {
		struct mntent *m;
		if (!(f = setmntent(p, "r")))
			return fail(op);
		while ((m = getmntent(f)))
			printf("%s %s %s\n", m->mnt_fsname, m->mnt_dir,
			       m->mnt_type);
		endmntent(f);
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	char path[256];
	int fd;
	if (argc > 2 && !strcmp(argv[1], "--chroot")) {
		if (chroot(argv[2]) < 0 || chdir("/") < 0)
			return fail("chroot");
		argc -= 2;
		argv += 2;
	}
	const char *op = argc > 1 ? argv[1] : "", *p = argc > 2 ? argv[2] : "";
	if ((fd = by_open(op, p)) >= 0)
		return fd;
	if (!strcmp(op, "openat") && argc > 3) {
		int dir = open(p, O_RDONLY | O_DIRECTORY);
		if (dir < 0)
			return fail("open dir");
		return (fd = openat(dir, argv[3], O_RDONLY)) < 0 ? fail(op) :
		       dump_fd(fd);
	}
	if (!strcmp(op, "chdir") && argc > 3) {
		if (chdir(p) < 0)
			return fail("chdir");
		return (fd = open(argv[3], O_RDONLY)) < 0 ? fail(op) :
		       dump_fd(fd);
	}
	if (!strcmp(op, "pid") || !strcmp(op, "tid")) {
		if (!strcmp(op, "pid"))
			snprintf(path, sizeof path, "/proc/%d/%s", getpid(), p);
		else
			snprintf(path, sizeof path, "/proc/self/task/%d/%s",
				 gettid(), p);
		return (fd = open(path, O_RDONLY)) < 0 ? fail(op) : dump_fd(fd);
	}
	if (!strcmp(op, "access"))
		return access(p, R_OK) ? fail(op) : (puts("access: ok"), 0);
	if (!strcmp(op, "write"))
		return (fd = open(p, O_WRONLY)) < 0 ? fail(op) :
		       (puts("write: opened"), 0);
	if (!strcmp(op, "cloexec")) {
		int a = open(p, O_RDONLY | O_CLOEXEC), b = open(p, O_RDONLY);
		if (a < 0 || b < 0)
			return fail(op);
		printf("%d %d\n", !!(fcntl(a, F_GETFD) & FD_CLOEXEC),
		       !!(fcntl(b, F_GETFD) & FD_CLOEXEC));
		return 0;
	}
	if (!strcmp(op, "mount-read") && argc > 3) {
		if (mount(p, argv[3], "tmpfs", 0, NULL) < 0)
			return fail("mount");
		return (fd = open("/proc/self/mountinfo", O_RDONLY)) < 0 ?
		       fail(op) : dump_fd(fd);
	}
	fprintf(stderr, "mtread: bad usage\n");
	return 2;
}
