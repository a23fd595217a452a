/* holder.c: the descriptors that outlive the broker (docs/design.md,
 * restarts).
 *
 * A mount covered by another on the same mountpoint cannot be opened by
 * its path: only a descriptor opened while it was still on top reaches it.
 * The broker has one (its handle), but a broker that stops or dies loses
 * it, and the next broker would find the mount out of reach.  So every
 * broker starts a holder: a child made by clone(CLONE_FILES), which shares
 * the broker's descriptor table (no descriptor is duplicated: it costs one
 * process, nothing per mount).  When the broker dies, however it dies, the
 * holder is left alone with the table: it closes everything that is not a
 * mount it must keep (the socket, clients, the lock, FUSE, and every mount
 * the next broker can open by its path), and exits if nothing is left.
 * The next broker finds it by DIR/holder.pid, verifies it, opens the
 * mounts it keeps through /proc/PID/fd/N, then ends it and starts its own
 * (s6-fdholderd's pattern, without a protocol).
 *
 * The alternative, moving what covers a mount aside for the import, shows
 * a changed table to every process meanwhile, and a crash in the middle
 * leaves it changed; the holder changes nothing in the mount table.
 *
 * The holder runs after the broker's death in a copy of its memory, which
 * another thread may have left with malloc's lock taken: it calls no
 * allocator, no stdio, only system calls.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "broker.h"
#include "holder.h"
#include "pidfile.h"
#include "vec.h"

struct kept {                  /* an O_PATH descriptor of an old holder */
	int kid, num;
};

struct holder {
	pid_t pid;             /* ours, or 0 */
	int id_fd;             /* the state directory: says whose it is */
	int lock_fd;           /* closed last: the next broker waits on it */
	pid_t broker;
	pid_t old;             /* the previous broker's, while importing */
	struct kept *v;
	size_t n;
};

static struct holder the_holder = { .id_fd = -1, .lock_fd = -1 };

/* ---- the holder process: system calls only ------------------------ */

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
static long proc_field(const char *path, const char *key, int base)
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
 * one only a descriptor still holds. */
static bool must_keep(int fd)
{
	char link[64], path[PATH_MAX];
	proc_fd(link, "/proc/self/fdinfo/", fd);
	long id = proc_field(link, "mnt_id:", 10), top_id = -1;
	proc_fd(link, "/proc/self/fd/", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (id < 0 || n <= 0 || path[0] != '/')
		return false;
	path[n] = '\0';
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

static int holder_main(void *arg)
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

/* ---- the broker's side --------------------------------------------- */

static int write_pidfile(const struct broker *b, const struct holder *h)
{
	char *path, line[64];
	int n = snprintf(line, sizeof line, "%d %d\n", (int)h->pid, h->id_fd);
	if (asprintf(&path, "%s/" HOLDER_PIDFILE, b->state_dir) < 0)
		return -ENOMEM;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		      O_CLOEXEC, 0600);
	int err = fd < 0 ? -errno : write(fd, line, (size_t)n) == n ? 0 : -EIO;
	if (fd >= 0)
		close(fd);
	free(path);
	return err;
}

/* The previous broker's holder ends: its mounts are ours now. */
static void holder_retire(void)
{
	struct holder *h = &the_holder;
	/* gone before the first request: its descriptors would make the
	 * mounts it kept look busy (busy.c) */
	if (h->old > 0 && kill(h->old, SIGKILL) == 0)
		for (int i = 0; i < 5000 && !pid_gone(h->old); i++)
			usleep(200);
	free(h->v);
	h->v = NULL;
	h->n = 0;
	h->old = 0;
}

int holder_spawn(struct broker *b, int lock_fd)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	struct holder *h = &the_holder;
	if (h->id_fd < 0)
		h->id_fd = open(b->state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (h->id_fd < 0)
		return -errno;
	h->lock_fd = lock_fd;
	h->broker = getpid();
	/* no CLONE_VM: a copy of our memory, as fork(), but one table */
	pid_t pid = clone(holder_main, stack + sizeof stack,
			  CLONE_FILES | SIGCHLD, h);
	if (pid < 0)
		return -errno;
	h->pid = pid;
	/* the previous one goes first: after a clean stop it may still be
	 * on its way out, and would remove the file we write */
	holder_retire();
	int err = write_pidfile(b, h);
	if (err)
		log_msg(LOG_WARNING, "%s/" HOLDER_PIDFILE ": %s: the next "
			"broker will not find covered mounts", b->state_dir,
			strerror(-err));
	return 0;
}

pid_t holder_pid(void)
{
	return the_holder.pid;
}

/* Our holder, if it died (killed by hand): reaped and started again. */
void holder_check(struct broker *b)
{
	struct holder *h = &the_holder;
	if (h->pid <= 0 || waitpid(h->pid, NULL, WNOHANG) != h->pid)
		return;
	log_msg(LOG_WARNING, "holder %d ended: starting another", (int)h->pid);
	h->pid = 0;
	int err = holder_spawn(b, h->lock_fd);
	if (err)
		log_msg(LOG_ERR, "cannot start a holder: %s", strerror(-err));
}

/* ---- a previous broker's holder ------------------------------------ */

/* The holder DIR/holder.pid names, if it is one: its name, our mount
 * namespace, and our state directory open at the number the file gives
 * (a pid the kernel gave to another process since fails the last two). */
static pid_t find_old(const struct broker *b, int *id_fd)
{
	char path[PATH_MAX], comm[32], a[64], c[64];
	int pid = 0, idfd = -1;
	struct stat st, dir;
	snprintf(path, sizeof path, "%s/" HOLDER_PIDFILE, b->state_dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%d %d", &pid, &idfd) != 2 || pid <= 1 || idfd < 0)
		pid = 0;
	fclose(f);
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	if (!pid || (f = fopen(path, "re")) == NULL)
		return 0;
	bool named = fgets(comm, sizeof comm, f) &&
		     strcmp(comm, HOLDER_NAME "\n") == 0;
	fclose(f);
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", pid);
	ssize_t na = readlink(path, a, sizeof a),
		nc = readlink("/proc/self/ns/mnt", c, sizeof c);
	snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, idfd);
	if (!named || na != nc || (na > 0 && memcmp(a, c, (size_t)na)) ||
	    stat(path, &st) < 0 || stat(b->state_dir, &dir) < 0 ||
	    st.st_dev != dir.st_dev || st.st_ino != dir.st_ino)
		return 0;
	*id_fd = idfd;
	return pid;
}

void holder_adopt(struct broker *b)
{
	struct holder *h = &the_holder;
	char path[PATH_MAX];
	size_t cap = 0;
	int err = 0, idfd = -1;
	if ((h->old = find_old(b, &idfd)) == 0) {
		log_msg(LOG_INFO, "no holder of a previous broker: mounts "
			"covered now stay out of reach");
		return;
	}
	snprintf(path, sizeof path, "/proc/%d/fd", (int)h->old);
	DIR *d = opendir(path);
	for (struct dirent *e; d && !err && (e = readdir(d)); ) {
		struct kept k = { .num = atoi(e->d_name) };
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || k.num == idfd)
			continue;
		snprintf(path, sizeof path, "/proc/%d/fdinfo/%d",
			 (int)h->old, k.num);
		long fl = proc_field(path, "flags:", 8);
		k.kid = (int)proc_field(path, "mnt_id:", 10);
		if (fl >= 0 && (fl & O_PATH) && k.kid >= 0)
			err = VEC_PUSH(h->v, h->n, cap, k);
	}
	if (d)
		closedir(d);
	log_msg(err ? LOG_WARNING : LOG_INFO, "holder %d of a previous broker "
		"keeps %zu descriptors%s", (int)h->old, h->n,
		err ? " (no memory to list them all)" : "");
}

int holder_take(int kid, dev_t dev)
{
	const struct holder *h = &the_holder;
	char path[64];
	struct stat st;
	for (size_t i = 0; h->old && i < h->n; i++) {
		if (h->v[i].kid != kid)
			continue;
		snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h->old,
			 h->v[i].num);
		int fd = open(path, O_PATH | O_CLOEXEC);
		if (fd >= 0 && fd_mnt_id(fd) == kid && fstat(fd, &st) == 0 &&
		    st.st_dev == dev && fd_at_root(fd))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

