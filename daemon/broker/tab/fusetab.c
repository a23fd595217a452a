/* fusetab.c: the broker's own FUSE filesystem, from which it serves the
 * mount tables (issue 13 item 3).  Linux keeps an open mountinfo live: a
 * read from offset 0 shows the table as it is now, and poll, select and
 * epoll report POLLPRI|POLLERR after a change.  A file of a FUSE
 * filesystem can do both (FUSE_READ, FUSE_POLL and FUSE_NOTIFY_POLL);
 * a plain file, the broker's former snapshot, can do neither.
 *
 * The filesystem has a root and two files, "mountinfo" and "mounts".  It
 * is mounted on STATE/tab and detached at once (umount2 MNT_DETACH): the
 * broker keeps it alive by a descriptor of its root, so it never shows in
 * any mount table, the graph's import and sync never meet it, and the
 * kernel tears it down with the broker's last descriptor, a crash
 * included.  Only the broker's thread that is opening one for a caller
 * can open its files (it names the opener's root first, tabserve.c); a
 * descriptor it hands to a caller is a read-only regular file of a mount
 * nobody can walk to: no directory to fchdir to, no ".." out of a jail.
 * A reopen through /proc/self/fd is refused (EACCES), and so is any
 * write.
 *
 * Raw protocol, no libfuse: the kernel's FUSE 7.x ABI (fuse_abi.h).  This
 * file is the FUSE thread (see fusetab.h for the split with the main
 * thread); it answers whatever needs no graph and queues the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "tab/fuse_abi.h"
#include "tab/fusetab.h"
#include "tab/tab.h"

#define FUSE_SUPER_MAGIC 0x65735546
enum { MINOR = 23, FOREVER = 86400 * 365 };

/* One reply (or, with unique 0, a notification): header and two parts. */
int fuse_send(struct fusetab *t, uint64_t unique, int err, const void *p,
	      size_t n, const void *q, size_t m)
{
	struct fuse_out_header h = { (uint32_t)(sizeof h + n + m), err, unique };
	struct iovec v[3] = { { &h, sizeof h }, { (void *)p, n }, { (void *)q, m } };
	return writev(t->dev, v, 3) < 0 ? -errno : 0;
}

struct tabfile *tabfile_of(struct fusetab *t, uint64_t fh)
{
	struct tabfile *f;
	HASH_FIND(hh, t->files, &fh, sizeof fh, f);
	return f;
}

void tabfile_free(struct tabfile *f)
{
	if (f) {
		free(f->dir);
		free(f->snap);
		free(f);
	}
}

/* The part of f's rendering a read asks for: past the end, nothing (EOF). */
int reply_slice(struct fusetab *t, const struct tabread *r,
		const struct tabfile *f)
{
	size_t off = r->offset < f->nsnap ? (size_t)r->offset : f->nsnap;
	size_t n = f->nsnap - off < r->size ? f->nsnap - off : r->size;
	return fuse_send(t, r->unique, 0, f->snap ? f->snap + off : "", n,
			 NULL, 0);
}

/* The kernel's protocol version decides the size of the answers. */
static void do_init(struct fusetab *t, uint64_t unique, const void *in,
		    size_t n)
{
	const struct fuse_init_in *i = in;
	struct fuse_init_out o = { .major = 7, .max_write = 4096,
				   .time_gran = 1 };
	if (n < 8)
		return;
	t->minor = i->major > 7 ? MINOR : i->minor < MINOR ? i->minor : MINOR;
	o.minor = t->minor;
	o.max_readahead = n >= 12 ? i->max_readahead : 0;
	fuse_send(t, unique, 0, &o, t->minor < 5 ? FUSE_COMPAT_INIT_OUT_SIZE :
		  t->minor < 23 ? FUSE_COMPAT_22_INIT_OUT_SIZE : sizeof o, NULL, 0);
}

static void attr_of(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof *a);
	a->ino = node;
	a->mode = node == NODE_ROOT ? S_IFDIR | 0500 : S_IFREG | 0444;
	a->nlink = node == NODE_ROOT ? 2 : 1;
	a->blksize = 4096;     /* size 0, as /proc's files */
}

/* The names never change: the kernel may keep them and their attributes. */
static void do_lookup(struct fusetab *t, const struct fuse_in_header *h,
		      const char *name, size_t n)
{
	struct fuse_entry_out o = { .entry_valid = FOREVER,
				    .attr_valid = FOREVER };
	o.nodeid = !memchr(name, '\0', n) || h->nodeid != NODE_ROOT ? 0 :
		   strcmp(name, "mountinfo") == 0 ? NODE_MOUNTINFO :
		   strcmp(name, "mounts") == 0 ? NODE_MOUNTS : 0;
	if (!o.nodeid) {
		fuse_send(t, h->unique, -ENOENT, NULL, 0, NULL, 0);
		return;
	}
	attr_of(o.nodeid, &o.attr);
	fuse_send(t, h->unique, 0, &o, t->minor < 9 ?
		  FUSE_COMPAT_ENTRY_OUT_SIZE : sizeof o, NULL, 0);
}

static void do_getattr(struct fusetab *t, const struct fuse_in_header *h)
{
	struct fuse_attr_out o = { .attr_valid = FOREVER };
	if (h->nodeid < NODE_ROOT || h->nodeid > NODE_MOUNTS) {
		fuse_send(t, h->unique, -ENOENT, NULL, 0, NULL, 0);
		return;
	}
	attr_of(h->nodeid, &o.attr);
	fuse_send(t, h->unique, 0, &o, t->minor < 9 ?
		  FUSE_COMPAT_ATTR_OUT_SIZE : sizeof o, NULL, 0);
}

/* Only the open the main thread announced (tabserve.c): it carries the
 * root of the caller the descriptor is for.  Anyone else is refused, a
 * holder of a table reopening it through /proc/self/fd included: that
 * open would come with no root of its own. */
static void do_open(struct fusetab *t, const struct fuse_in_header *h,
		    const struct fuse_open_in *in, size_t n)
{
	struct fuse_open_out o = { .open_flags = FOPEN_DIRECT_IO };
	struct tabfile *f;
	int err = -EACCES;
	pthread_mutex_lock(&t->lock);
	f = t->pending;
	if (n >= sizeof *in && (in->flags & O_ACCMODE) == O_RDONLY && f &&
	    h->pid == (uint32_t)t->opener &&
	    h->nodeid == (f->info ? NODE_MOUNTINFO : NODE_MOUNTS)) {
		t->pending = NULL;
		f->fh = o.fh = ++t->next_fh;
		f->seen = t->event;
		HASH_ADD(hh, t->files, fh, sizeof f->fh, f);
		err = 0;
	}
	fuse_send(t, h->unique, err, &o, err ? 0 : sizeof o, NULL, 0);
	pthread_mutex_unlock(&t->lock);
}

/* Whether f's rendering answers a read at offset: the one made at open,
 * for the file's first read, while nothing that could change it has
 * happened since (it is then what the main thread would render now); past
 * offset 0, the one an earlier read made, which this read continues. */
static bool answers(struct fusetab *t, struct tabfile *f, uint64_t offset)
{
	if (f->fresh && f->gen == t->gen) {
		f->fresh = false;
		return true;
	}
	return offset > 0 && f->snap && !f->fresh;
}

/* A read that a rendering answers is answered from it (answers()); any
 * other waits for the main thread, which alone may read the graph.  Never
 * the broker's own read (by the thread that opens): it would wait for the
 * main thread, which may wait for it. */
static void do_read(struct fusetab *t, const struct fuse_in_header *h,
		    const struct fuse_read_in *in, size_t n)
{
	struct tabfile *f;
	struct tabread *r;
	int err = 0;
	pthread_mutex_lock(&t->lock);
	f = n >= sizeof *in ? tabfile_of(t, in->fh) : NULL;
	if (!f || h->pid == (uint32_t)t->opener || !f->dir) {
		err = f ? -EIO : -EBADF;   /* !dir: a spare, no caller's */
	} else if (answers(t, f, in->offset)) {
		struct tabread now = { h->unique, in->fh, in->offset, in->size,
					 NULL };
		reply_slice(t, &now, f);
	} else if (!(r = calloc(1, sizeof *r))) {
		err = -ENOMEM;
	} else {
		*r = (struct tabread){ h->unique, in->fh, in->offset, in->size,
				      NULL };
		*t->tail = r;
		t->tail = &r->next;
		/* a full pipe (EAGAIN) has woken the main thread already */
		ssize_t w = write(t->wake[1], "r", 1);
		(void)w;
	}
	if (err)
		fuse_send(t, h->unique, err, NULL, 0, NULL, 0);
	pthread_mutex_unlock(&t->lock);
}

/* Linux's mounts_poll: readable always; POLLERR|POLLPRI once per change,
 * to the first poll of each descriptor after it.  The kernel asks again
 * after every FUSE_NOTIFY_POLL the main thread sends (fusetab_changed). */
static void do_poll(struct fusetab *t, const struct fuse_in_header *h,
		    const struct fuse_poll_in *in, size_t n)
{
	struct fuse_poll_out o = { .revents = POLLIN | POLLRDNORM };
	struct tabfile *f;
	pthread_mutex_lock(&t->lock);
	f = n >= 20 ? tabfile_of(t, in->fh) : NULL;
	if (f && (in->flags & FUSE_POLL_SCHEDULE_NOTIFY))
		f->kh = in->kh;
	if (f && f->seen != t->event) {
		f->seen = t->event;
		o.revents |= POLLERR | POLLPRI;
	}
	fuse_send(t, h->unique, f ? 0 : -EBADF, &o, f ? sizeof o : 0, NULL, 0);
	pthread_mutex_unlock(&t->lock);
}

static void do_release(struct fusetab *t, const struct fuse_in_header *h,
		       const struct fuse_release_in *in, size_t n)
{
	struct tabfile *f;
	pthread_mutex_lock(&t->lock);
	if (n >= 8 && (f = tabfile_of(t, in->fh))) {
		HASH_DEL(t->files, f);
		tabfile_free(f);
	}
	pthread_mutex_unlock(&t->lock);
	fuse_send(t, h->unique, 0, NULL, 0, NULL, 0);
}

/* FLUSH and the rest: ENOSYS, which also tells the kernel to stop sending
 * FLUSH at every close. */
static void dispatch_fuse(struct fusetab *t, const struct fuse_in_header *h,
			  const char *in, size_t n)
{
	switch (h->opcode) {
	case FUSE_INIT: do_init(t, h->unique, in, n); break;
	case FUSE_LOOKUP: do_lookup(t, h, in, n); break;
	case FUSE_GETATTR: do_getattr(t, h); break;
	case FUSE_OPEN: do_open(t, h, (const void *)in, n); break;
	case FUSE_READ: do_read(t, h, (const void *)in, n); break;
	case FUSE_POLL: do_poll(t, h, (const void *)in, n); break;
	case FUSE_RELEASE: do_release(t, h, (const void *)in, n); break;
	case FUSE_FORGET: case FUSE_BATCH_FORGET: case FUSE_INTERRUPT:
		break;             /* no reply; the nodes are fixed */
	default:
		fuse_send(t, h->unique, -ENOSYS, NULL, 0, NULL, 0);
	}
}

/* The FUSE thread: until the connection ends with the broker. */
static void *fuse_thread(void *arg)
{
	static uint64_t buf[(65536 + 4096) / sizeof(uint64_t)];
	struct fusetab *t = arg;
	for (;;) {
		ssize_t n = read(t->dev, buf, sizeof buf);
		const struct fuse_in_header *h = (const void *)buf;
		if (n < 0 && (errno == EINTR || errno == EAGAIN ||
			      errno == ENOENT))
			continue;  /* ENOENT: a request interrupted */
		if (n < 0)
			return NULL;       /* ENODEV: the connection ended */
		if ((size_t)n >= sizeof *h && h->len == (size_t)n)
			dispatch_fuse(t, h, (const char *)(h + 1),
				      (size_t)n - sizeof *h);
	}
}

/* A FUSE mount a broker left on STATE/tab (killed between its mount and
 * the detach): gone before the import, which would take it in.  A dead
 * connection answers statfs ENOTCONN. */
void fusetab_clean(const char *state_dir)
{
	struct statfs s;
	char *dir;
	if (asprintf(&dir, "%s/tab", state_dir) < 0)
		return;
	if (statfs(dir, &s) == 0 ? s.f_type == FUSE_SUPER_MAGIC :
	    errno == ENOTCONN)
		umount2(dir, MNT_DETACH);
	free(dir);
}

/* Mounted, detached, and served by a thread that takes no signal (they
 * are the main thread's: SIGTERM must wake its poll). */
static int mount_detached(struct fusetab *t, const char *dir)
{
	char opts[128];
	pthread_t th;
	sigset_t all, old;
	int err;
	snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=0,group_id=0,"
		 "allow_other", t->dev);
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) ||
	    mount("libshare", dir, "fuse", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  opts) < 0)
		return -errno;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&th, NULL, fuse_thread, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err) {
		t->thread = true;
		pthread_detach(th);
		if ((t->root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			err = -errno;
	}
	umount2(dir, MNT_DETACH);
	return err;
}

/* /dev/fuse, which a kernel without FUSE has not (ENOENT: the legacy
 * simulation's hook stands for one). */
static int open_fuse(void)
{
	if (kernel_lacks("no-fuse")) {
		errno = ENOENT;
		return -1;
	}
	return open("/dev/fuse", O_RDWR | O_CLOEXEC);
}

/* b->tab, or NULL and a line in the log: without FUSE (no /dev/fuse, a
 * kernel without it) the tables are snapshot files, as before. */
void fusetab_start(struct broker *b)
{
	struct fusetab *t = calloc(1, sizeof *t);
	char *dir = NULL;
	int err = !t || asprintf(&dir, "%s/tab", b->state_dir) < 0 ? -ENOMEM : 0;
	if (!err) {
		pthread_mutex_init(&t->lock, NULL);
		t->tail = &t->reads;
		t->opener = getpid();      /* till an open says its thread */
		t->root = t->spare[0] = t->spare[1] = -1;
		if ((t->dev = open_fuse()) < 0 ||
		    pipe2(t->wake, O_CLOEXEC | O_NONBLOCK) < 0)
			err = -errno;
	}
	if (!err)
		err = mount_detached(t, dir);
	free(dir);
	if (!err) {
		b->tab = t;
		return;
	}
	log_msg(LOG_WARNING, "no FUSE (%s): open mount tables are snapshots that "
		   "never change or signal", strerror(-err));
	if (t && t->dev >= 0)
		close(t->dev);
	if (t && t->thread)
		return;            /* it has t until its read fails: ENODEV */
	if (t && t->wake[0] > 0) {
		close(t->wake[0]);
		close(t->wake[1]);
	}
	free(t);
}
