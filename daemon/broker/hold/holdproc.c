/* holdproc.c: the holder process (holder.c, docs/design.md "Restarts"):
 * it waits for the broker's death, then keeps only the covered mounts,
 * for as long as a next broker may come to take them: until one does
 * (it ends us), or no other process is left in our mount namespace.
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
#include <time.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "hold/holder.h"

/* How often a holder looks for a process beside it (ns_shared()). */
static const struct timespec recheck = { .tv_sec = 1 };

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

/* Whether a line of the kernel's table has id in field (1: the mount's
 * own id, 2: its parent's).  The table still has the mount (field 1): one
 * unmounted lazily is no one's to keep. */
static bool in_table(long id, int field)
{
	char buf[4096];
	bool found = false;
	int at = 1;            /* the field this byte is in */
	long num = 0;
	ssize_t n;
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && !found && (n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n && !found; i++) {
			char c = buf[i];
			if (at == field && c >= '0' && c <= '9')
				num = num * 10 + (c - '0');
			else if (c == ' ' && at++ == field)
				found = num == id;
			if (c == '\n') {
				at = 1;
				num = 0;
			}
		}
	if (fd >= 0)
		close(fd);
	return found;
}

/* The previous broker's last word on descriptor num in holder.ids
 * (holder.c: "num kid" a line, kid -1 once dropped): a mount id, or -1. */
static long noted(const struct holder *h, int num)
{
	char buf[4096];
	long v[2] = { 0, 0 }, kid = -1, sign = 1;
	int at = 0;
	ssize_t n;
	int fd = openat(h->id_fd, HOLDER_IDS, O_RDONLY | O_NOFOLLOW |
			O_CLOEXEC);
	while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];
			if (c >= '0' && c <= '9' && at < 2)
				v[at] = v[at] * 10 + (c - '0');
			else if (c == '-')
				sign = -1;
			else if (c == ' ' && at < 2)
				at++;
			else if (c == '\n') {
				if (at == 1 && v[0] == num)
					kid = sign * v[1];
				v[0] = v[1] = at = 0;
				sign = 1;
			}
		}
	if (fd >= 0)
		close(fd);
	return kid;
}

/* Without mnt_id, a file's descriptor whose path reaches that very file
 * may still be on a bind of it that another bind of it on the same place
 * covers (inode and device cannot tell the two apart): the broker's note
 * names its mount, and only its root can be mounted on, so it is covered
 * when a mount has it as parent. */
static bool covered_file(const struct holder *h, int fd)
{
	struct stat st;
	long kid;
	return fd_stat(fd, &st) == 0 && !S_ISDIR(st.st_mode) &&
	       (kid = noted(h, fd)) >= 0 && in_table(kid, 2);
}

/* While the broker has mounts marked to expire (expire.c), a mount with
 * a child may be beneath one stacked on its place, and a lookup of its
 * path would end on that one and clear the kernel's mark (mntput()): it
 * is kept without the lookup, as a covered one.  So is a descriptor whose
 * mount neither fdinfo (before 3.15) nor the broker's note names (a
 * sleeper's place, on its parent's root: expire.c).  At worst one its
 * path still reaches is kept too, until the next broker takes it. */
static bool beneath_sleeper(const struct holder *h, long id, int fd)
{
	if (faccessat(h->id_fd, EXPIRY_LIST, F_OK, 0) != 0)
		return false;
	long kid = id >= 0 ? id : noted(h, fd);
	return kid < 0 || in_table(kid, 2);
}

/* Whether fd is on a mount of the table that its path no longer reaches:
 * one only a descriptor still holds.  A kernel whose fdinfo has no mnt_id
 * (before 3.15) is asked the same without ids (mntid.c), and a mount
 * unmounted lazily may then be kept too. */
static bool must_keep(const struct holder *h, int fd)
{
	char link[64], path[PATH_MAX];
	proc_fd(link, "/proc/self/fdinfo/", fd);
	long id = proc_field(link, "mnt_id:", 10), top_id = -1;
	proc_fd(link, "/proc/self/fd/", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0 || path[0] != '/')
		return false;
	path[n] = '\0';
	if (beneath_sleeper(h, id, fd))
		return true;
	if (id < 0)
		return !fd_reached(fd, path) || covered_file(h, fd);
	int top = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (top >= 0) {
		proc_fd(link, "/proc/self/fdinfo/", top);
		top_id = proc_field(link, "mnt_id:", 10);
		close(top);
	}
	/* the table is read only for the few that are covered */
	return top_id != id && in_table(id, 1);
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
			if (fl >= 0 && (fl & O_PATH) && must_keep(h, fd))
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

/* Whether pid's /proc/PID/LEAF reads as want (n bytes). */
static bool proc_link_is(long pid, const char *leaf, const char *want,
			 ssize_t n)
{
	char path[64], got[64];
	proc_fd(path, "/proc/", (int)pid);
	strcat(strcat(path, "/"), leaf);
	return readlink(path, got, sizeof got) == n &&
	       memcmp(got, want, (size_t)n) == 0;
}

/* Whether pid is named as a holder: another broker's, no more able than
 * we are to start the next broker. */
static bool is_holder(long pid)
{
	char path[64], comm[32];
	proc_fd(path, "/proc/", (int)pid);
	int fd = open(strcat(path, "/comm"), O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, comm, sizeof comm);
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof HOLDER_NAME &&
	       memcmp(comm, HOLDER_NAME "\n", (size_t)n) == 0;
}

/* Whether a process other than a holder is in our mount namespace: one
 * that may yet start the next broker there, the only broker that could
 * adopt us (holder.c's not_ours()).  Alone, we pin a namespace nobody can
 * enter but through us.  *last, the one found before, is tried first (on
 * the host, pid 1 always is).  When it cannot tell, it says yes. */
static bool ns_shared(long *last)
{
	char me[64], buf[4096];
	ssize_t n = readlink("/proc/self/ns/mnt", me, sizeof me);
	if (n <= 0 || n == (ssize_t)sizeof me)
		return true;
	if (*last > 0 && proc_link_is(*last, "ns/mnt", me, n))
		return true;
	int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long got = 0, self = (long)getpid();
	bool shared = dir < 0;
	while (!shared && (got = syscall(SYS_getdents64, dir, buf,
					 sizeof buf)) > 0)
		for (long off = 0; off < got && !shared; ) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			long pid = atol(d->d_name);
			off += d->d_reclen;
			shared = pid > 0 && pid != self &&
				 proc_link_is(pid, "ns/mnt", me, n) &&
				 !is_holder(pid);
			if (shared)
				*last = pid;
		}
	if (got < 0)
		shared = true;
	if (dir >= 0)
		close(dir);
	return shared;
}

/* Field n (1-based, as proc(5) numbers them) of /proc/self/stat; 0. */
static unsigned long stat_field(int n)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	char *p = strrchr(buf, ')');
	for (int i = 2; p && i < n; i++)  /* p: the space before field i+1 */
		p = strchr(p + 1, ' ');
	return p ? strtoul(p + 1, NULL, 10) : 0;
}

/* Named as what it is, in comm (ps, pgrep) and in the command line (ps
 * -f, pgrep -f), which was the broker's: a holder found alive is not
 * taken for a broker, nor killed as one.  The name, then NULs up to the
 * last byte of the arguments' memory, a NUL already; written through
 * /proc/self/mem, which answers a write it cannot do with an error, never
 * with a fault that would lose the mounts kept. */
static void name_self(void)
{
	static const char zero[256];
	unsigned long at = stat_field(48), end = stat_field(49);
	prctl(PR_SET_NAME, HOLDER_NAME);
	int fd = at && end > at ? open("/proc/self/mem", O_WRONLY | O_CLOEXEC)
				: -1;
	const char *from = HOLDER_NAME;
	size_t len = sizeof HOLDER_NAME - 1;
	while (fd >= 0 && at + 1 < end) {
		if (len > end - 1 - at)
			len = end - 1 - at;
		if (pwrite(fd, from, len, (off_t)at) != (ssize_t)len)
			break;
		at += len;
		from = zero;
		len = sizeof zero;
	}
	if (fd >= 0)
		close(fd);
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
	name_self();
	prctl(PR_SET_PDEATHSIG, SIGUSR2);
	while (getppid() == h->broker)     /* it may be dead already */
		sigwait(&set, &sig);
	int kept = keep_covered(h);
	/* before the lock goes: the next broker, once it has the lock,
	 * writes a pid file of its own holder that must stay */
	if (!kept)
		unlink_own(h);
	close(h->lock_fd);
	/* kept while a process could start the next broker here; the
	 * next broker ends us once it has what we keep (holder_adopt()),
	 * a final stop at once (holder_end()) */
	for (long last = 0; kept && ns_shared(&last); )
		nanosleep(&recheck, NULL);
	if (kept)
		unlink_own(h);
	_exit(0);
}
