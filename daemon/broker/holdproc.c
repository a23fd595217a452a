/* holdproc.c: the holder process (holder.c, docs/design.md "Restarts"):
 * it waits for the broker's death, then keeps only the covered mounts.
 *
 * It runs after the broker's death in a copy of its memory, which another
 * thread may have left with malloc's lock taken: it calls no allocator,
 * no stdio, only system calls.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "broker.h"
#include "holder.h"

/* "/proc/self/fd/" or "/proc/self/fdinfo/" and the number, into buf. */
static void proc_fd(char *buf, const char *dir, int fd)
{
	char digits[16];
	int i = 0;
	do {
		digits[i++] = (char)('0' + fd % 10);
		fd /= 10;
	} while (fd);
	strcpy(buf, dir);
	buf += strlen(buf);
	while (i)
		*buf++ = digits[--i];
	*buf = '\0';
}

/* The value after "key" in a /proc text file (octal for "flags:"); -1. */
long proc_field(const char *path, const char *key, int base)
{
	char buf[1024];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *p = strstr(buf, key);
	if (strcmp(key, "mnt_id:") == 0 && kernel_lacks("no-fdinfo-mnt-id"))
		p = NULL;      /* the legacy simulation: before Linux 3.15 */
	return p ? strtol(p + strlen(key), NULL, base) : -1;
}

/* Whether the kernel's table still has mount id (a mount unmounted
 * lazily is no one's to keep). */
static bool in_table(long id)
{
	char buf[4096];
	bool start = true, found = false;
	long num = -1;
	ssize_t n;
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && !found && (n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n && !found; i++) {
			char c = buf[i];
			if (start && c >= '0' && c <= '9')
				num = (num < 0 ? 0 : num * 10) + (c - '0');
			else if (start) {
				found = num == id;
				start = false;
			}
			if (c == '\n') {
				start = true;
				num = -1;
			}
		}
	if (fd >= 0)
		close(fd);
	return found;
}

/* Whether fd is on a mount of the table that its path no longer reaches:
 * one only a descriptor still holds.  A kernel whose fdinfo has no mnt_id
 * (before 3.15) is asked the same without ids (mntid.c), and a mount
 * unmounted lazily may then be kept too. */
static bool must_keep(int fd)
{
	char link[64], path[PATH_MAX];
	proc_fd(link, "/proc/self/fdinfo/", fd);
	long id = proc_field(link, "mnt_id:", 10), top_id = -1;
	proc_fd(link, "/proc/self/fd/", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0 || path[0] != '/')
		return false;
	path[n] = '\0';
	if (id < 0)
		return !fd_reached(fd, path);
	int top = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (top >= 0) {
		proc_fd(link, "/proc/self/fdinfo/", top);
		top_id = proc_field(link, "mnt_id:", 10);
		close(top);
	}
	/* the table is read only for the few that are covered */
	return top_id != id && in_table(id);
}

/* The broker is gone: all but the covered mounts go, and the lock is
 * left to the caller, to close last (the next broker waits for it, and
 * then finds the socket free too).  How many are kept. */
static int keep_covered(const struct holder *h)
{
	char buf[4096];
	int kept = 0, dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY |
				 O_CLOEXEC);
	long n;
	while (dir >= 0 && (n = syscall(SYS_getdents64, dir, buf,
					sizeof buf)) > 0)
		for (long off = 0; off < n; ) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			int fd = atoi(d->d_name);
			off += d->d_reclen;
			if (d->d_name[0] < '0' || d->d_name[0] > '9' ||
			    fd == dir || fd == h->id_fd || fd == h->lock_fd)
				continue;
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0 && (fl & O_PATH) && must_keep(fd))
				kept++;
			else
				close(fd);
		}
	if (dir >= 0)
		close(dir);
	return kept;
}

/* Removes DIR/holder.pid if it still names this process (a broker that
 * started meanwhile has written its own holder's). */
static void unlink_own(const struct holder *h)
{
	char buf[64];
	int fd = openat(h->id_fd, HOLDER_PIDFILE, O_RDONLY | O_NOFOLLOW |
			O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (atoi(buf) == (int)getpid())
		unlinkat(h->id_fd, HOLDER_PIDFILE, 0);
}

int holder_main(void *arg)
{
	const struct holder *h = arg;
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* the broker's handlers are copies of no use here; a terminal's
	 * ^C or hangup is for the broker */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, HOLDER_NAME);
	prctl(PR_SET_PDEATHSIG, SIGUSR2);
	while (getppid() == h->broker)     /* it may be dead already */
		sigwait(&set, &sig);
	int kept = keep_covered(h);
	/* before the lock goes: the next broker, once it has the lock,
	 * writes a pid file of its own holder that must stay */
	if (!kept)
		unlink_own(h);
	close(h->lock_fd);
	if (!kept)
		_exit(0);
	for (;;)
		pause();
}
