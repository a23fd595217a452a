/* mtpoll: an open mount table as a monitor sees it (issue 13 item 3), for
 * test/shim/shim-mtpoll.bats and test/bench/run.sh.
 *
 *   mtpoll [-t MS] [-n N] HOW FILE [CMD ARGS...]
 *
 * Opens FILE (/proc/self/mountinfo: with libshare.so preloaded, the
 * broker's table) and reads it whole, then, with HOW (poll, select, epoll:
 * level-triggered on EPOLLPRI, epoll-et: EPOLLIN|EPOLLET as libmount's
 * monitor asks, after draining the first event as it does; libmount:
 * libmount's own monitor, mnt_monitor_enable_kernel and mnt_monitor_wait,
 * loaded with dlopen so that no libmount header is needed; its change is
 * printed as PRI):
 *   idle:  what HOW reports before any change ("none", or the events)
 *   armed  (flushed: a test may change the table now)
 *   spin: what N more asks of HOW with timeout 0 reported, one after
 *         another ("none": none of them reported anything), with -n
 * runs CMD, if any, and waits until HOW reports or MS (default 2000) ms
 * pass:
 *   event: EVENTS in T ms      (T from CMD's start, or from "armed")
 *   event: none
 *   again: what HOW reports right after (Linux: an event is reported once)
 * then reads the table from offset 0, both by pread and by lseek+read,
 * and prints "fresh: same" when they agree, and the table after "table:".
 * Exit 0, or 1 on a system error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int die(const char *what)
{
	fprintf(stderr, "mtpoll: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The events as names, "none" for 0. */
static const char *names(unsigned ev, char *buf, size_t size)
{
	static const struct { unsigned bit; const char *name; } t[] = {
		{ POLLIN, "IN" }, { POLLPRI, "PRI" }, { POLLERR, "ERR" },
		{ POLLHUP, "HUP" }, { POLLRDNORM, "RDNORM" },
	};
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (ev & t[i].bit)
			n += (size_t)snprintf(buf + n, size - n, "%s%s",
					      n ? "|" : "", t[i].name);
	return n ? buf : "none";
}

struct mon {
	const char *how;
	int fd, ep;
	void *mn;              /* libmount's struct libmnt_monitor */
	int (*wait)(void *mn, int timeout);
	int (*next)(void *mn, const char **file, int *type);
};

/* libmount's monitor of the kernel's table (what findmnt --poll and
 * systemd use); exits 77 without libmount.so.1. */
static void arm_libmount(struct mon *m)
{
	void *lib = dlopen("libmount.so.1", RTLD_NOW);
	void *(*new_monitor)(void);
	int (*enable_kernel)(void *, int);
	if (!lib) {
		printf("libmount: %s\n", dlerror());
		exit(77);
	}
	*(void **)&new_monitor = dlsym(lib, "mnt_new_monitor");
	*(void **)&enable_kernel = dlsym(lib, "mnt_monitor_enable_kernel");
	*(void **)&m->wait = dlsym(lib, "mnt_monitor_wait");
	*(void **)&m->next = dlsym(lib, "mnt_monitor_next_change");
	if (!new_monitor || !enable_kernel || !m->wait || !m->next ||
	    !(m->mn = new_monitor()) || enable_kernel(m->mn, 1) < 0 ||
	    m->wait(m->mn, 0) < 0)     /* creates its epoll, drains */
		die("libmount monitor");
}

/* A change libmount reports, with the file it names. */
static unsigned libmount_event(struct mon *m, int ms)
{
	const char *file = NULL;
	int n = m->wait(m->mn, ms);
	if (n < 0)
		die("mnt_monitor_wait");
	if (n == 0 || m->next(m->mn, &file, NULL) != 0)
		return 0;
	printf("libmount: %s changed\n", file ? file : "?");
	return POLLPRI;
}

/* What HOW reports within ms (0: now); the events, 0 for none.  epoll's
 * come in poll's bits (EPOLLPRI == POLLPRI and so on). */
static unsigned wait_event(struct mon *m, int ms)
{
	if (m->mn)
		return libmount_event(m, ms);
	if (strcmp(m->how, "poll") == 0) {
		struct pollfd p = { .fd = m->fd, .events = POLLPRI };
		int n = poll(&p, 1, ms);
		return n < 0 ? (unsigned)die("poll") : n ? (unsigned)p.revents : 0;
	}
	if (strcmp(m->how, "select") == 0) {
		fd_set ex;
		struct timeval tv = { ms / 1000, ms % 1000 * 1000 };
		FD_ZERO(&ex);
		FD_SET(m->fd, &ex);
		int n = select(m->fd + 1, NULL, NULL, &ex, &tv);
		return n < 0 ? (unsigned)die("select") :
		       n && FD_ISSET(m->fd, &ex) ? POLLPRI : 0;
	}
	struct epoll_event e;
	int n = epoll_wait(m->ep, &e, 1, ms);
	return n < 0 ? (unsigned)die("epoll_wait") : n ? e.events : 0;
}

/* epoll as asked; epoll-et drains the first event, as libmount does. */
static void arm(struct mon *m)
{
	struct epoll_event e = { .events = EPOLLPRI };
	bool et = strcmp(m->how, "epoll-et") == 0;
	if (strcmp(m->how, "libmount") == 0)
		arm_libmount(m);
	if (strncmp(m->how, "epoll", 5) != 0)
		return;
	if ((m->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		die("epoll_create1");
	if (et)
		e.events = EPOLLIN | EPOLLET;
	if (epoll_ctl(m->ep, EPOLL_CTL_ADD, m->fd, &e) < 0)
		die("epoll_ctl");
	while (et && wait_event(m, 0))
		;
}

/* The whole table from offset 0: by pread, or by lseek and read. */
static char *table(int fd, bool use_pread, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	ssize_t k;
	if (!buf || (!use_pread && lseek(fd, 0, SEEK_SET) != 0))
		die("lseek");
	for (;;) {
		if (n == cap && !(buf = realloc(buf, cap *= 2)))
			die("realloc");
		k = use_pread ? pread(fd, buf + n, cap - n, (off_t)n) :
				read(fd, buf + n, cap - n);
		if (k < 0)
			die("read");
		if (k == 0)
			break;
		n += (size_t)k;
	}
	*len = n;
	return buf;
}

static double run(char **cmd)
{
	double t0 = now_ms();
	pid_t pid;
	if (!cmd[0])
		return t0;
	if ((pid = fork()) < 0)
		die("fork");
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	return t0;
}

/* N asks with timeout 0, as a loop woken by other descriptors makes
 * them: what they reported, all of them together. */
static void spin(struct mon *m, long n)
{
	unsigned ev = 0;
	char buf[64];
	for (long i = 0; i < n; i++)
		ev |= wait_event(m, 0);
	printf("spin: %s\n", names(ev, buf, sizeof buf));
}

int main(int argc, char **argv)
{
	struct mon m = { .ep = -1 };
	int ms = 2000, o, c;
	long spins = -1;
	char buf[64];
	size_t n1, n2;
	while ((c = getopt(argc, argv, "+t:n:")) != -1)
		if (c == 't')
			ms = atoi(optarg);
		else if (c == 'n')
			spins = atol(optarg);
		else
			return 2;
	if (argc < (o = optind) + 2) {
		fprintf(stderr, "usage: mtpoll [-t MS] [-n N] poll|select|epoll|"
			"epoll-et|libmount FILE [CMD ARGS...]\n");
		return 2;
	}
	m.how = argv[o];
	if ((m.fd = open(argv[o + 1], O_RDONLY | O_CLOEXEC)) < 0)
		die(argv[o + 1]);
	free(table(m.fd, false, &n1));
	arm(&m);
	printf("idle: %s\narmed\n", names(wait_event(&m, 0), buf, sizeof buf));
	if (spins >= 0)
		spin(&m, spins);
	fflush(stdout);
	double t0 = run(argv + o + 2);
	unsigned ev = wait_event(&m, ms);
	double t = now_ms() - t0;
	if (ev)
		printf("event: %s in %.1f ms\n", names(ev, buf, sizeof buf), t);
	else
		printf("event: none\n");
	printf("again: %s\n", names(wait_event(&m, 0), buf, sizeof buf));
	char *a = table(m.fd, true, &n1), *b = table(m.fd, false, &n2);
	printf("fresh: %s\ntable:\n", n1 == n2 && !memcmp(a, b, n1) ?
	       "same" : "differ");
	fwrite(a, 1, n1, stdout);
	return 0;
}
