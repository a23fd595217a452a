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
 * The holder process itself is holdproc.c's.  The mounts that recovery's
 * own moves cover (recmove.c) are kept here too, for the import alike.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "hold/holder.h"
#include "vec.h"

static struct holder the_holder = { .id_fd = -1, .lock_fd = -1 };

static int write_pidfile(const struct broker *b, const struct holder *h)
{
	char *path, line[96];
	int n = snprintf(line, sizeof line, "%d %d\n", (int)h->pid, h->id_fd);
	if (h->old > 0)
		n += snprintf(line + n, sizeof line - (size_t)n, "%d %d\n",
			      (int)h->old, h->old_fd);
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

static void end_holder(pid_t pid)
{
	if (pid > 0 && kill(pid, SIGKILL) == 0)
		for (int i = 0; i < 5000 && !pid_gone(pid); i++)
			usleep(200);
}

/* The previous broker's holder ends: its mounts are ours now.  Gone
 * before the first request: its descriptors would make the mounts it
 * kept look busy (busy.c). */
static void holder_retire(void)
{
	struct holder *h = &the_holder;
	end_holder(h->old);
	end_holder(h->stray);
	free(h->v);
	h->v = NULL;
	h->n = 0;
	h->old = h->stray = 0;
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
	/* ours is named before the previous one ends, beside it: a broker
	 * killed in between leaves a file naming both (find_old()) */
	int err = write_pidfile(b, h);
	if (h->old) {              /* a stray comes only with an old one */
		fault_holder();
		holder_retire();
		if (!err)
			err = write_pidfile(b, h);
	}
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

void holder_end(struct broker *b)
{
	struct holder *h = &the_holder;
	char *path;
	pid_t pid = h->pid;
	h->pid = 0;
	if (pid <= 0)
		return;
	end_holder(pid);
	waitpid(pid, NULL, 0);
	if (asprintf(&path, "%s/" HOLDER_PIDFILE, b->state_dir) >= 0) {
		unlink(path);      /* ours alone: we hold the lock */
		free(path);
	}
	log_msg(LOG_INFO, "final stop: holder %d ended, nothing kept for a "
		"next broker", (int)pid);
}

/* ---- a previous broker's holder ------------------------------------ */

/* Why process pid is not a holder of ours, or NULL: its name, our mount
 * namespace, and our state directory open at idfd (a pid the kernel gave
 * to another process since fails the last two). */
static const char *not_ours(const struct broker *b, int pid, int idfd)
{
	char path[64], comm[32], a[64], c[64];
	struct stat st, dir;
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return "gone";
	bool named = fgets(comm, sizeof comm, f) &&
		     strcmp(comm, HOLDER_NAME "\n") == 0;
	fclose(f);
	if (!named)
		return "not named " HOLDER_NAME;
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", pid);
	ssize_t na = readlink(path, a, sizeof a),
		nc = readlink("/proc/self/ns/mnt", c, sizeof c);
	if (na != nc || (na > 0 && memcmp(a, c, (size_t)na)))
		return "in another mount namespace";
	snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, idfd);
	if (stat(path, &st) < 0 || stat(b->state_dir, &dir) < 0 ||
	    st.st_dev != dir.st_dev || st.st_ino != dir.st_ino)
		return "not holding this state directory";
	return NULL;
}

/* The holder DIR/holder.pid names, if it is one (not_ours()): the
 * first of its lines ("PID FD") that does; one more that does is a stray,
 * ended with the previous holder (holder_spawn()). */
static void find_old(const struct broker *b, struct holder *h)
{
	char path[PATH_MAX];
	int pid, idfd;
	snprintf(path, sizeof path, "%s/" HOLDER_PIDFILE, b->state_dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (!h->stray && fscanf(f, "%d %d", &pid, &idfd) == 2) {
		const char *why = pid <= 1 || idfd < 0 ? "no pid" :
				  not_ours(b, pid, idfd);
		if (why)
			log_msg(LOG_INFO, "%s names holder %d: %s", path,
				pid, why);
		else if (h->old)
			h->stray = pid;
		else {
			h->old = pid;
			h->old_fd = idfd;
		}
	}
	fclose(f);
}

/* Without fdinfo's mnt_id (before Linux 3.15) the table alone cannot
 * tell which of two mounts of one filesystem stacked on one place a kept
 * descriptor is on (mntid.c).  So the broker writes down each handle's
 * number and mount id as it takes or drops it, in DIR/holder.ids, and
 * the next one reads there what its holder keeps (same numbers: it
 * shares the table).  Elsewhere the file is not written. */
static int ids_fd = -1;

void holder_note(int fd, int kid)
{
	char line[32];
	int n = snprintf(line, sizeof line, "%d %d\n", fd, kid);
	if (ids_fd >= 0 && fd >= 0 && write(ids_fd, line, (size_t)n) < 0) {
		log_msg(LOG_WARNING, "holder.ids: %s", strerror(errno));
		close(ids_fd);
		ids_fd = -1;
	}
}

/* The previous broker's last word on its descriptor num: a mount id, or
 * -1; then the file starts again, for this broker's. */
static void ids_read(const struct broker *b, struct holder *h)
{
	char path[PATH_MAX];
	int num, kid;
	snprintf(path, sizeof path, "%s/" HOLDER_IDS, b->state_dir);
	FILE *f = fopen(path, "re");
	while (f && fscanf(f, "%d %d", &num, &kid) == 2)
		for (size_t i = 0; i < h->n; i++)
			if (h->v[i].num == num)
				h->v[i].noted = kid;
	if (f)
		fclose(f);
	if (!fdinfo_has_mnt_id())
		ids_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
			      O_CLOEXEC, 0600);
}

void holder_adopt(struct broker *b)
{
	struct holder *h = &the_holder;
	char path[PATH_MAX];
	size_t cap = 0;
	int err = 0;
	find_old(b, h);
	if (!h->old) {
		log_msg(LOG_INFO, "no holder of a previous broker: mounts "
			"covered now stay out of reach");
		ids_read(b, h);
		return;
	}
	snprintf(path, sizeof path, "/proc/%d/fd", (int)h->old);
	DIR *d = opendir(path);
	for (struct dirent *e; d && !err && (e = readdir(d)); ) {
		struct held k = { .num = atoi(e->d_name), .noted = -1 };
		if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
		    k.num == h->old_fd)
			continue;
		snprintf(path, sizeof path, "/proc/%d/fdinfo/%d",
			 (int)h->old, k.num);
		long fl = proc_field(path, "flags:", 8);
		k.kid = fdinfo_mnt_id(path);
		if (fl >= 0 && (fl & O_PATH))
			err = VEC_PUSH(h->v, h->n, cap, k);
	}
	if (d)
		closedir(d);
	ids_read(b, h);
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
		/* the table's answer, or the previous broker's note: where
		 * it wrote one the table may not tell (a file's mount).  A
		 * noted descriptor was a handle, on its mount's root; another
		 * may be a place inside the mount (copy.c's, open when the
		 * broker died), with the mount's id: the root is asked.  No
		 * question for a noted one: mountinfo's answer (before 5.8)
		 * reads the descriptor's path, whose mntput() clears a
		 * sleeping mount's MNT_EXPIRE mark. */
		bool noted = h->v[i].noted == kid;
		if (h->v[i].kid != kid && !noted)
			continue;
		snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h->old,
			 h->v[i].num);
		int fd = open(path, O_PATH | O_CLOEXEC);
		if (fd >= 0 && (noted || (fd_mnt_id(fd) == kid &&
					  fd_at_root(fd, kid))) &&
		    fstat(fd, &st) == 0 && st.st_dev == dev)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

bool pid_gone(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	char *paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] == 'Z';
}

/* The mounts recovery's own moves covered (recmove.c), kept the same way
 * for the import, which takes them by their kernel ids (import.c). */
struct kept {
	int kid;
	dev_t dev;
	int fd;                /* O_PATH, on the mount's root */
};

static struct kept *kept;
static size_t nkept, capkept;

/* A mount about to be covered by recovery's move onto at: kept. */
void recover_keep(int at)
{
	struct stat st;
	struct kept k = { .kid = fd_mnt_id(at), .fd = -1 };
	if (k.kid < 0 || !fd_at_root(at, k.kid) || fstat(at, &st) < 0)
		return;        /* a directory in a mount: nothing covered */
	k.dev = st.st_dev;
	k.fd = fcntl(at, F_DUPFD_CLOEXEC, 0);
	if (k.fd < 0 || VEC_PUSH(kept, nkept, capkept, k) < 0) {
		log_msg(LOG_WARNING, "recovery: mount %d, covered now, is out "
			"of reach", k.kid);
		if (k.fd >= 0)
			close(k.fd);
	}
}

static int kept_find(int kid, dev_t dev)
{
	for (size_t i = nkept; i-- > 0; )
		if (kept[i].kid == kid && kept[i].dev == dev)
			return (int)i;
	return -1;
}

/* A copy of the descriptor kept on mount kid, the original staying
 * kept; -ENOENT when none is. */
int recover_kept(int kid, dev_t dev)
{
	int i = kept_find(kid, dev);
	return i < 0 ? -ENOENT : fcntl(kept[i].fd, F_DUPFD_CLOEXEC, 0);
}

int recover_take(int kid, dev_t dev)
{
	int i = kept_find(kid, dev), fd = i >= 0 ? kept[i].fd : -1;
	if (i >= 0)
		kept[i] = kept[--nkept];
	return fd;
}

void recover_forget(void)
{
	while (nkept)
		close(kept[--nkept].fd);
	free(kept);
	kept = NULL;
	capkept = 0;
}
