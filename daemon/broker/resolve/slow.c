/* slow.c: name lookups in filesystems whose server may never answer.
 *
 * A FUSE server that hangs, or an NFS server that went away, blocks every
 * lookup in its filesystem for as long as it likes, and the broker serves
 * one request at a time: one such lookup would stall every caller (issue:
 * one FUSE mount froze every jail).  So the walk (resolve.c) hands a
 * lookup in such a filesystem to a thread of its own and waits for it a
 * little.  If it has not answered by then, the request answers
 * -EINPROGRESS: server.c sets its connection aside and serves the others.
 * When the lookup ends, its thread wakes the loop, which serves the parked
 * requests again from their start; the walk, at the same step, takes the
 * answer the thread got.  So only the requests that need the stalled
 * filesystem wait, as their callers would wait on Linux.
 *
 * Answers are kept only while some request is parked (slow_forget()): a
 * fresh request looks its names up afresh, as the kernel would.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "resolve/resolve.h"

enum {
	WAIT_MS = 20,          /* what a lookup gets before its request parks */
	MAX_LOOKUPS = 32,      /* unfinished and kept answers, in all */
	PER_DEV = 4,           /* unfinished ones in one filesystem */
};

struct lookup {
	dev_t dev;             /* the directory: device, inode, mount */
	ino_t ino;
	int kid;
	char name[NAME_MAX + 1];
	int dir;               /* the thread's own descriptor of it */
	int fd, err;           /* the answer */
	bool done;
	int refs;              /* the table's and the thread's */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct lookup *v[MAX_LOOKUPS];
	int wake[2];           /* a byte per finished lookup */
	bool retrying;         /* answers may be taken (server.c) */
} slow = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 },
	   { -1, -1 }, false };

bool fs_may_stall(const struct fs *fs)
{
	static const char *const remote[] = {
		"fuse", "fuseblk", "nfs", "nfs4", "cifs", "smb3", "9p",
		"ceph", "afs", "virtiofs", "glusterfs", "lustre", "orangefs",
	};
	if (!fs || !fs->type)
		return false;
	if (strncmp(fs->type, "fuse.", 5) == 0)
		return true;
	for (size_t i = 0; i < sizeof remote / sizeof *remote; i++)
		if (strcmp(fs->type, remote[i]) == 0)
			return true;
	return false;
}

/* Whether a mount of the graph is on such a filesystem (quickwalk.c goes
 * only where none is).  Mounts join g.order at its end in seq order, so
 * those made since the last look are its tail; while one is known, any
 * change counts them all again, since that one may be what went. */
bool stall_anywhere(struct broker *b)
{
	struct graph *g = &b->g;
	struct stall_count *c = &b->stall;
	if (g->seq < c->seq || (c->n && (g->seq != c->seq ||
					 g->nmounts != c->mounts)))
		*c = (struct stall_count){ 0 };
	for (struct list *l = g->order.prev; l != &g->order; l = l->prev) {
		struct mount *m = list_entry(l, struct mount, order);
		if (m->seq <= c->seq)
			break;
		c->n += fs_may_stall(m->fs);
	}
	c->seq = g->seq;
	c->mounts = g->nmounts;
	return c->n > 0;
}

int slow_wake_fd(void)
{
	if (slow.wake[0] < 0 && pipe2(slow.wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	return slow.wake[0];
}

static void put(struct lookup *e)      /* under the lock */
{
	if (--e->refs)
		return;
	if (e->fd >= 0)
		close(e->fd);
	free(e);
}

static void *lookup_thread(void *arg)
{
	struct lookup *e = arg;
	int fd = openat(e->dir, e->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int err = fd < 0 ? -errno : 0;
	close(e->dir);
	pthread_mutex_lock(&slow.lock);
	e->fd = fd;
	e->err = err;
	e->done = true;
	pthread_cond_broadcast(&slow.cond);
	if (write(slow.wake[1], "", 1) < 0) {
		/* full: the loop has wake-ups enough to read */
	}
	put(e);
	pthread_mutex_unlock(&slow.lock);
	return NULL;
}

/* The slot of the lookup of name in the directory (dev, ino, kid), or of
 * a free place (*found false); -1 when there is none. */
static int slot(const struct lookup *key, bool *found, unsigned *in_dev)
{
	int free_at = -1;
	*found = false;
	*in_dev = 0;
	for (int i = 0; i < MAX_LOOKUPS; i++) {
		const struct lookup *e = slow.v[i];
		if (!e) {
			free_at = free_at < 0 ? i : free_at;
			continue;
		}
		*in_dev += !e->done && e->dev == key->dev;
		if (e->dev == key->dev && e->ino == key->ino &&
		    e->kid == key->kid && strcmp(e->name, key->name) == 0) {
			*found = true;
			return i;
		}
	}
	return free_at;
}

static int start(struct lookup *e, int dir)
{
	pthread_attr_t at;
	pthread_t th;
	sigset_t all, old;
	if ((e->dir = fcntl(dir, F_DUPFD_CLOEXEC, 0)) < 0)
		return -errno;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	sigfillset(&all);      /* signals stay the main thread's */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = -pthread_create(&th, &at, lookup_thread, e);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (err)
		close(e->dir);
	return err;
}

/* The answer of a finished lookup: a descriptor of its own, or -errno. */
static int answer_of(const struct lookup *e)
{
	if (e->err)
		return e->err;
	int fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

static int wait_for(struct lookup *e)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += WAIT_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!e->done && pthread_cond_timedwait(&slow.cond, &slow.lock,
						  &until) == 0)
		;
	return e->done ? answer_of(e) : -EINPROGRESS;
}

int slow_openat(int dir, const char *name)
{
	struct stat st;
	struct lookup key = { .kid = fd_mnt_id(dir) }, *e;
	bool found;
	unsigned in_dev;
	int err;
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	if (fd_stat(dir, &st) < 0 || slow_wake_fd() < 0)
		return -errno;
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	strcpy(key.name, name);
	pthread_mutex_lock(&slow.lock);
	int i = slot(&key, &found, &in_dev);
	if (found) {           /* finished: only a parked request may take it */
		e = slow.v[i];
		err = !e->done ? -EINPROGRESS : slow.retrying ? answer_of(e) : 1;
		if (err != 1)
			goto out;
		slow.v[i] = NULL;      /* an old answer: look again */
		put(e);
	}
	if (i < 0 || in_dev >= PER_DEV) {
		err = -EINPROGRESS;    /* no room: wait for a lookup to end */
		goto out;
	}
	err = -ENOMEM;
	if (!(e = malloc(sizeof *e)))
		goto out;
	*e = key;
	e->fd = -1;
	e->refs = 2;
	if ((err = start(e, dir))) {
		free(e);
		goto out;
	}
	slow.v[i] = e;
	err = wait_for(e);
out:
	pthread_mutex_unlock(&slow.lock);
	return err;
}

void slow_retrying(bool on)
{
	char buf[64];
	while (on && read(slow.wake[0], buf, sizeof buf) > 0)
		;
	pthread_mutex_lock(&slow.lock);
	slow.retrying = on;
	pthread_mutex_unlock(&slow.lock);
}

/* No request is parked: the answers kept for them go. */
void slow_forget(void)
{
	pthread_mutex_lock(&slow.lock);
	for (int i = 0; i < MAX_LOOKUPS; i++)
		if (slow.v[i] && slow.v[i]->done) {
			put(slow.v[i]);
			slow.v[i] = NULL;
		}
	pthread_mutex_unlock(&slow.lock);
}
