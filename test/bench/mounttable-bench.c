/*
 * mounttable-bench - the measuring half of test/bench/run.sh (issue 4 item
 * 5); run.sh sets up the jail and the broker, alternates the variants and
 * prints the ratios.  A benchmark, not a test: it only prints.
 *
 *   mounttable-bench open N [FILE]     open(FILE)+close N times (default
 *                                      /etc/hostname); with or without
 *                                      libshare.so preloaded, as run.sh says
 *   mounttable-bench mkjail DIR N      a tmpfs on DIR and N-1 tmpfs below
 *                                      it (DIR/m0..): a jail of N mounts
 *   mounttable-bench read N JAIL HOW   chroot into JAIL, then N full reads of
 *                                      /proc/self/mountinfo; HOW is
 *     kernel  the kernel's own, through a /proc descriptor opened before the
 *             chroot (the jail has no /proc)
 *     shim    a plain open("/proc/self/mountinfo"): with libshare.so
 *             preloaded the shim serves the broker's virtual table
 *     broker  LS_OP_MOUNTTABLE asked of the broker directly (socket
 *             LIBSHARE_SOCKET), the descriptor it hands back read whole:
 *             the broker's share of the shim's cost, measurable before the
 *             shim serves the table
 *   mounttable-bench io N              N preads of /etc/hostname, N
 *                                      polls and N epoll_waits (timeout 0)
 *                                      of a pipe: descriptors that are not
 *                                      a mount table, whose cost the shim
 *                                      must not change (issue 13 item 3)
 *   mounttable-bench poll N JAIL HOW   chroot into JAIL (HOW as for read:
 *                                      kernel or shim), open mountinfo,
 *                                      read it, then N poll(2) and N
 *                                      epoll_wait calls for POLLPRI,
 *                                      timeout 0, while nothing changes;
 *                                      with BENCH_BROKER_PID, the
 *                                      broker's CPU time during each
 *                                      loop (its threads', all of them)
 *   mounttable-bench notify N DIR      N mounts and umounts of a tmpfs on
 *                                      DIR, each timed from the call to the
 *                                      event (EPOLLPRI) on an open
 *                                      /proc/self/mountinfo, then the table
 *                                      read again from offset 0, as a
 *                                      monitor does: the kernel's, or with
 *                                      libshare.so preloaded the broker's
 *
 * Output: one line "ns/op T" (read: "ns/op T lines L bytes B", L and B of the
 * last read; io: "ns/op T read R poll P epoll E", T their mean; poll:
 * "ns/op T poll P epoll E broker_poll W broker_epoll V", T poll's, W and
 * V the broker's CPU time per call (ns), -1 without the pid; notify:
 * "ns/op T call C missed M", T to the event, C the call alone, M events
 * not seen within a second).  Times are CLOCK_MONOTONIC over the whole
 * loop.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "libshare_proto.h"
#include "libshare_wire.h"

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int die(const char *what)
{
	fprintf(stderr, "mounttable-bench: %s: %s\n", what, strerror(errno));
	return 1;
}

static int bench_open(long n, const char *file)
{
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return die(file);
		close(fd);
	}
	printf("ns/op %.1f\n", (now_ns() - t0) / n);
	return 0;
}

static int mkjail(const char *dir, long n)
{
	char path[4096];

	if (mount("jail", dir, "tmpfs", 0, NULL) < 0)
		return die(dir);
	for (long i = 1; i < n; i++) {
		snprintf(path, sizeof path, "%s/m%ld", dir, i);
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return die(path);
		if (mount("m", path, "tmpfs", 0, NULL) < 0)
			return die(path);
	}
	return 0;
}

/* The caller's mountinfo from the broker: LS_OP_MOUNTTABLE, one
 * descriptor back (see libshare_proto.h), or -1 with errno set. */
static int broker_table(void)
{
	static const char field[] = "mountinfo";
	const struct ls_req_view q = { .op = LS_OP_MOUNTTABLE,
		.field = { NULL, field }, .len = { 0, sizeof field - 1 } };
	struct ls_req_out o;
	struct ls_rep_in in;
	struct ls_rep_view r;
	struct sockaddr_un sa;
	socklen_t len;
	char text[256];
	ssize_t n = -1;
	int s = -1, err;

	if ((err = ls_address(ls_socket_name(getenv(LS_SOCKET_ENV)), &sa,
			      &len)) == 0 &&
	    (err = ls_req_encode(&o, &q)) == 0 &&
	    (s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) >= 0 &&
	    connect(s, (struct sockaddr *)&sa, len) == 0 &&
	    sendmsg(s, &o.mh, MSG_NOSIGNAL) == (ssize_t)o.size) {
		ls_rep_expect(&in, text, sizeof text);
		n = recvmsg(s, &in.mh, LS_REP_RECV_FLAGS);
	}
	if (s >= 0)
		close(s);
	if (n <= 0) {
		errno = err ? -err : errno;
		return -1;
	}
	err = ls_rep_decode(&in, (size_t)n, LS_OP_MOUNTTABLE, &r);
	for (int i = 0; i < in.nfd; i++)
		if (err || r.error || in.fds[i] != r.fd)
			close(in.fds[i]);
	if (err || r.error || r.fd < 0) {
		errno = err ? -err : r.error ? r.error : EIO;
		return -1;
	}
	return r.fd;
}

static int bench_read(long n, const char *jail, const char *how)
{
	static char buf[1 << 16];
	int procfd = -1, fd;
	long lines = 0, bytes = 0;
	double t0;
	ssize_t k;

	if (strcmp(how, "kernel") == 0 &&
	    (procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return die("/proc");
	if (chroot(jail) < 0 || chdir("/") < 0)
		return die(jail);
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		if (procfd >= 0)
			fd = openat(procfd, "self/mountinfo", O_RDONLY | O_CLOEXEC);
		else if (strcmp(how, "broker") == 0)
			fd = broker_table();
		else
			fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return die(how);
		lines = bytes = 0;
		while ((k = read(fd, buf, sizeof buf)) > 0) {
			bytes += k;
			for (char *p = buf; (p = memchr(p, '\n', buf + k - p)); p++)
				lines++;
		}
		close(fd);
		if (k < 0)
			return die("read");
	}
	printf("ns/op %.1f lines %ld bytes %ld\n", (now_ns() - t0) / n, lines,
	       bytes);
	return 0;
}

static int bench_io(long n)
{
	struct epoll_event e = { .events = EPOLLIN };
	int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC), p[2], ep;
	char buf[256];
	double t[4];
	if (fd < 0 || pipe2(p, O_CLOEXEC) < 0 ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e) < 0)
		return die("io setup");
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	t[0] = now_ns();
	for (long i = 0; i < n; i++)
		if (pread(fd, buf, sizeof buf, 0) < 0)
			return die("pread");
	t[1] = now_ns();
	for (long i = 0; i < n; i++)
		poll(&pf, 1, 0);
	t[2] = now_ns();
	for (long i = 0; i < n; i++)
		epoll_wait(ep, &e, 1, 0);
	t[3] = now_ns();
	printf("ns/op %.1f read %.1f poll %.1f epoll %.1f\n",
	       (t[3] - t[0]) / n / 3, (t[1] - t[0]) / n, (t[2] - t[1]) / n,
	       (t[3] - t[2]) / n);
	return 0;
}

/* The CPU time of the broker's threads so far, in us, or -1 without
 * BENCH_BROKER_PID: what a FUSE request costs its FUSE thread, and
 * anything else the broker does meanwhile (in clock ticks: a loop must
 * last long enough to count). */
static double broker_cpu(int task)
{
	char path[300], line[1024], *p;
	unsigned long long ut, st, sum = 0;
	DIR *d;
	struct dirent *t;
	if (task < 0 || !(d = fdopendir(dup(task))))
		return -1;
	rewinddir(d);
	while ((t = readdir(d))) {
		ssize_t k;
		int fd;
		snprintf(path, sizeof path, "%s/stat", t->d_name);
		if (t->d_name[0] == '.' ||
		    (fd = openat(task, path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		k = read(fd, line, sizeof line - 1);
		close(fd);
		line[k > 0 ? k : 0] = '\0';
		/* after the name: state, then utime and stime are 12th, 13th */
		if ((p = strrchr(line, ')')) &&
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			   "%llu %llu", &ut, &st) == 2)
			sum += ut + st;
	}
	closedir(d);
	return sum * 1e6 / sysconf(_SC_CLK_TCK);
}

/* /proc/BENCH_BROKER_PID/task, opened before a chroot, or -1. */
static int broker_tasks(void)
{
	const char *pid = getenv("BENCH_BROKER_PID");
	char path[64];
	if (!pid)
		return -1;
	snprintf(path, sizeof path, "/proc/%s/task", pid);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* N polls of an open mountinfo while nothing changes: poll(2), then
 * epoll_wait on an epoll set that holds it; the table's descriptor is
 * opened as read opens it, before the chroot for the kernel's. */
static int bench_poll(long n, const char *jail, const char *how)
{
	static char buf[1 << 16];
	struct epoll_event e = { .events = EPOLLPRI };
	int procfd = -1, fd, ep, task = broker_tasks();
	double t[4], w[3];
	if (strcmp(how, "kernel") == 0 &&
	    (procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return die("/proc");
	if (chroot(jail) < 0 || chdir("/") < 0)
		return die(jail);
	fd = procfd >= 0 ? openat(procfd, "self/mountinfo", O_RDONLY | O_CLOEXEC)
			 : open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof buf) < 0 ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0)
		return die("poll setup");
	struct pollfd pf = { .fd = fd, .events = POLLPRI };
	w[0] = broker_cpu(task);
	t[0] = now_ns();
	for (long i = 0; i < n; i++)
		if (poll(&pf, 1, 0) != 0)
			return die("poll: an event, or an error");
	t[1] = now_ns();
	w[1] = broker_cpu(task);
	t[2] = now_ns();
	for (long i = 0; i < n; i++)
		if (epoll_wait(ep, &e, 1, 0) != 0)
			return die("epoll_wait: an event, or an error");
	t[3] = now_ns();
	w[2] = broker_cpu(task);
	printf("ns/op %.1f poll %.1f epoll %.1f broker_poll %.1f "
	       "broker_epoll %.1f\n", (t[1] - t[0]) / n, (t[1] - t[0]) / n,
	       (t[3] - t[2]) / n, w[0] < 0 ? -1 : (w[1] - w[0]) * 1e3 / n,
	       w[0] < 0 ? -1 : (w[2] - w[1]) * 1e3 / n);
	return 0;
}

/* The whole table again from offset 0, as a monitor reads it after an
 * event. */
static void reread(int fd)
{
	static char buf[1 << 16];
	off_t off = 0;
	ssize_t k;
	while ((k = pread(fd, buf, sizeof buf, off)) > 0)
		off += k;
}

static int bench_notify(long n, const char *dir)
{
	struct epoll_event e = { .events = EPOLLPRI };
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC), ep;
	double call = 0, seen = 0;
	long missed = 0;
	if (fd < 0 || (ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0)
		return die("notify setup");
	for (long i = 0; i < 2 * n; i++) {
		double t0 = now_ns();
		int r = i % 2 ? umount(dir) : mount("bench", dir, "tmpfs", 0, NULL);
		double t1 = now_ns();
		if (r < 0)
			return die(dir);
		if (epoll_wait(ep, &e, 1, 1000) != 1)
			missed++;
		seen += now_ns() - t0;
		call += t1 - t0;
		reread(fd);
	}
	printf("ns/op %.1f call %.1f missed %ld\n", seen / (2 * n),
	       call / (2 * n), missed);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "open") == 0)
		return bench_open(atol(argv[2]), argc > 3 ? argv[3] : "/etc/hostname");
	if (argc == 4 && strcmp(argv[1], "mkjail") == 0)
		return mkjail(argv[2], atol(argv[3]));
	if (argc == 5 && strcmp(argv[1], "read") == 0)
		return bench_read(atol(argv[2]), argv[3], argv[4]);
	if (argc == 3 && strcmp(argv[1], "io") == 0)
		return bench_io(atol(argv[2]));
	if (argc == 5 && strcmp(argv[1], "poll") == 0)
		return bench_poll(atol(argv[2]), argv[3], argv[4]);
	if (argc == 4 && strcmp(argv[1], "notify") == 0)
		return bench_notify(atol(argv[2]), argv[3]);
	fprintf(stderr, "usage: mounttable-bench open N [FILE] | mkjail DIR N | "
		"read N JAIL kernel|shim|broker | io N | poll N JAIL kernel|shim | "
		"notify N DIR\n");
	return 2;
}
