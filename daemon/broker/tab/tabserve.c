/* tabserve.c: the main thread's side of the served mount tables
 * (fusetab.h): a caller's descriptor, the renderings that reads from
 * offset 0 wait for, the change events, and the main loop's two other
 * sources: the kernel's table changing behind the broker's back, and
 * those waiting reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker.h"
#include "base/log.h"
#include "hold/hold.h"
#include "persist/persist.h"
#include "tab/fuse_abi.h"
#include "tab/fusetab.h"
#include "tab/tab.h"

enum { TABLES_MAX = 256 };      /* open at once for one uid */

/* How many tables uid holds open: each holds its rendering in the
 * broker's memory until its last descriptor closes (FUSE_RELEASE). */
static unsigned held_by(struct fusetab *t, uid_t uid)
{
	unsigned n = 0;
	pthread_mutex_lock(&t->lock);
	for (struct tabfile *f = t->files; f; f = f->hh.next)
		n += f->uid == uid;
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* The table as f's root sees it now; "" when that mount is gone. */
static char *draw(struct broker *b, const struct tabfile *f, size_t *n)
{
	struct handle *h;
	char *text = NULL;
	FILE *out = open_memstream(&text, n);
	if (!out)
		return NULL;
	HASH_FIND(hh, b->by_seq, &f->seq, sizeof f->seq, h);
	if (h) {
		struct loc root = { h->m, f->dir, f->file_root };
		(f->info ? render_mountinfo : render_mounts)(&b->g, h->m->ns, root,
							     out);
	}
	return fclose(out) == 0 ? text : (free(text), NULL);
}

static bool same_root(const struct tabfile *a, const struct tabfile *b)
{
	return a->seq == b->seq && a->info == b->info &&
	       a->file_root == b->file_root && a->dir && b->dir &&
	       strcmp(a->dir, b->dir) == 0;
}

/* draw(), or a copy of the last rendering when it was of the same root
 * and nothing that could change it has happened since (t->gen, which
 * changes only under the graph's lock, held here): a table is drawn once
 * per change, not once per read. */
static char *render(struct broker *b, const struct tabfile *f, size_t *n)
{
	struct tabfile *last = &b->tab->last;
	char *text, *keep, *dir;
	if (last->snap && last->gen == b->tab->gen && same_root(last, f)) {
		if ((text = malloc(last->nsnap + 1)))
			memcpy(text, last->snap, (*n = last->nsnap) + 1);
		return text;
	}
	if (!(text = draw(b, f, n)))
		return NULL;
	if ((keep = malloc(*n + 1)) && (dir = strdup(f->dir))) {
		free(last->snap);
		free(last->dir);
		*last = (struct tabfile){ .seq = f->seq, .dir = dir,
			.file_root = f->file_root, .info = f->info,
			.gen = b->tab->gen, .snap = memcpy(keep, text, *n + 1),
			.nsnap = *n };
	} else {
		free(keep);
	}
	return text;
}

/* A descriptor of f's file, opened by this thread (the main thread's
 * spares, a serving thread's for its caller): the FUSE thread's OPEN
 * takes the announced f (fusetab.c do_open), or f is freed.  The
 * descriptor, or -errno. */
static int open_announced(struct fusetab *t, struct tabfile *f)
{
	int fd, err;
	pthread_mutex_lock(&t->lock);
	t->pending = f;
	t->opener = gettid();      /* this thread (door/loop.c) */
	pthread_mutex_unlock(&t->lock);
	fd = openat(t->root, f->info ? "mountinfo" : "mounts", O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	pthread_mutex_lock(&t->lock);
	if (t->pending == f) {     /* not taken: refused, or never asked */
		t->pending = NULL;
		tabfile_free(f);
		if (!err) {
			close(fd);
			err = -EIO;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return err ? err : fd;
}

/* Whether the kernel sends no more FLUSH: a close of a file of ours
 * sends one and waits for its answer until the FUSE thread has answered
 * one ENOSYS (fusetab.c dispatch_fuse()).  Before the broker keeps a
 * descriptor, it opens and closes one: else its exit, which closes them
 * after the FUSE thread is gone, would wait for that answer forever. */
static bool flush_off(struct fusetab *t)
{
	struct tabfile *f;
	int fd;
	if (!t->flush_off && (f = calloc(1, sizeof *f))) {
		f->uid = REPLY_UNCOUNTED;
		if ((fd = open_announced(t, f)) >= 0 && close(fd) == 0)
			t->flush_off = true;
	}
	return t->flush_off;
}

/* A descriptor of each file opened ahead, with no root yet: a caller's
 * open then costs the main thread no FUSE round trip of its own.  Opened
 * again between requests (tab_loop_fds()), not after a failure until a
 * table has been served. */
static void open_spares(struct fusetab *t)
{
	if (t->spare_failed || !flush_off(t)) {
		t->spare_failed = true;
		return;
	}
	for (int k = 0; k < 2; k++) {
		struct tabfile *f;
		int fd;
		if (t->spare[k] >= 0 || t->spare_failed ||
		    !(f = calloc(1, sizeof *f)))
			continue;
		f->uid = REPLY_UNCOUNTED;      /* counted once it is a caller's */
		f->info = k;
		if ((fd = open_announced(t, f)) < 0) {
			t->spare_failed = true;
			continue;
		}
		t->spare[k] = fd;
		t->spare_f[k] = f;     /* the FUSE thread's files own it */
	}
}

/* f's root and rendering given to the spare descriptor of its file, which
 * is the caller's from now on (f's shell is freed), or -1 when there is
 * none.  Its event is taken now, as Linux takes it at the open. */
static int take_spare(struct fusetab *t, struct tabfile *f)
{
	int fd = t->spare[f->info];
	struct tabfile *s = t->spare_f[f->info];
	if (fd < 0)
		return -1;
	pthread_mutex_lock(&t->lock);
	s->uid = f->uid;
	s->seq = f->seq;
	s->dir = f->dir;
	s->file_root = f->file_root;
	s->snap = f->snap;
	s->nsnap = f->nsnap;
	s->fresh = f->fresh;
	s->gen = f->gen;
	s->seen = t->event;
	t->spare[f->info] = -1;    /* s is the FUSE thread's once unlocked */
	pthread_mutex_unlock(&t->lock);
	free(f);
	return fd;
}

/* A descriptor of the table for root, opened on the broker's filesystem
 * (a spare, or one opened now).  The root is kept as the graph's mount
 * and directory, not as a descriptor: one held by the broker would make
 * the kernel refuse its own umount of that mount (EBUSY).  The table is
 * rendered now, while the main thread has the graph at hand, for the FUSE
 * thread to answer the first read with unless something changed first
 * (fusetab_touched()): a read then costs no trip through the main thread.
 * One unprivileged uid holds at most TABLES_MAX. */
int fusetab_open(struct broker *b, struct loc root, bool info, uid_t uid,
		 int *pass)
{
	struct fusetab *t = b->tab;
	struct tabfile *f;
	int fd;
	if (uid != REPLY_UNCOUNTED && held_by(t, uid) >= TABLES_MAX) {
		log_msg(LOG_WARNING, "uid %u holds %d mount tables open: no "
			"more until it closes some", (unsigned)uid, TABLES_MAX);
		return -EMFILE;
	}
	if (!(f = calloc(1, sizeof *f)) || !(f->dir = strdup(root.dir))) {
		tabfile_free(f);
		return -ENOMEM;
	}
	f->uid = uid;
	f->seq = root.m->seq;
	f->file_root = root.file;
	f->info = info;
	f->snap = render(b, f, &f->nsnap);
	f->fresh = f->snap != NULL;
	f->gen = t->gen;           /* changed under the graph's lock only */
	t->spare_failed = false;
	if ((fd = take_spare(t, f)) < 0 && (fd = open_announced(t, f)) < 0)
		return fd;
	*pass = fd;
	return 0;
}

/* The next waiting read, and a copy of what its file renders (its dir
 * NULL when the file is gone). */
static struct tabread *next_read(struct fusetab *t, struct tabfile *want)
{
	struct tabread *r;
	struct tabfile *f;
	pthread_mutex_lock(&t->lock);
	if ((r = t->reads)) {
		if (!(t->reads = r->next))
			t->tail = &t->reads;
		if ((f = tabfile_of(t, r->fh))) {
			*want = *f;
			want->dir = strdup(f->dir);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}

/* Every read waiting for a rendering: rendered now, kept for the reads
 * that continue it, and answered. */
static void serve_reads(struct broker *b)
{
	struct fusetab *t = b->tab;
	char drain[64];
	struct tabread *r;
	struct tabfile want = { 0 }, *f;
	while (read(t->wake[0], drain, sizeof drain) > 0)
		;
	while ((r = next_read(t, &want))) {
		size_t n = 0;
		char *text = want.dir ? render(b, &want, &n) : NULL;
		pthread_mutex_lock(&t->lock);
		if ((f = tabfile_of(t, r->fh)) && text) {
			free(f->snap);
			f->snap = text;
			f->nsnap = n;
			f->fresh = false;
			text = NULL;
			reply_slice(t, r, f);
		} else {
			fuse_send(t, r->unique, f ? -ENOMEM : -EBADF, NULL, 0,
				  NULL, 0);
		}
		pthread_mutex_unlock(&t->lock);
		free(text);
		free(want.dir);
		want.dir = NULL;
		free(r);
	}
}

/* The mount table changed (semantics.md 1.5): every open table has an
 * event, and every one a poller waits on is woken.  Jails share the
 * broker's one namespace, and Linux wakes every poller of a namespace on
 * any change in it. */
void fusetab_changed(struct broker *b)
{
	struct fusetab *t = b->tab;
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->event++;
	t->gen++;
	for (struct tabfile *f = t->files; f; f = f->hh.next)
		if (f->kh) {
			struct fuse_notify_poll_wakeup_out o = { f->kh };
			fuse_send(t, 0, FUSE_NOTIFY_POLL, &o, sizeof o, NULL, 0);
		}
	pthread_mutex_unlock(&t->lock);
}

/* A request is about to be served: whatever it changes, a rendering made
 * before it may no longer be what a read would render (a propagation
 * change, for one, is no event).  Opens rendered from here on are not. */
void fusetab_touched(struct broker *b)
{
	struct fusetab *t = b->tab;
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->gen++;
	pthread_mutex_unlock(&t->lock);
}

/* Mounts made or gone behind the broker's back, seen on its watch: the
 * graph follows at once, not at the next request, so that pollers learn
 * of them. */
void follow_drift(struct broker *b)
{
	paths_moved(b);
	if (sync_table(b) > 0) {
		log_msg(LOG_WARNING, "mounts changed behind the broker's back: "
			   "the graph follows the kernel");
		state_save(b);
	}
	fusetab_changed(b);
}

/* The main loop's other descriptors, at most two, in p. */
size_t tab_loop_fds(struct broker *b, struct pollfd *p)
{
	size_t n = 0;
	int w = table_watch_fd(b); /* POLLPRI: the kernel's change event */
	if (b->tab)                /* before the loop sleeps */
		open_spares(b->tab);
	if (w >= 0)
		p[n++] = (struct pollfd){ .fd = w, .events = POLLPRI };
	if (b->tab)
		p[n++] = (struct pollfd){ .fd = b->tab->wake[0], .events = POLLIN };
	return n;
}

/* What they said.  poll() itself took the watch's event (the kernel's
 * mounts_poll reports it once): drift is followed here, not left to
 * table_changed().  The main thread's own watch (several serving
 * threads) says only that the table changed: drift if no request took
 * the event of the broker's watch, which is looked at now. */
void tab_loop_events(struct broker *b, const struct pollfd *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!p[i].revents)
			continue;
		if (p[i].fd != table_watch_fd(b))
			serve_reads(b);
		else if (p[i].fd == b->watch || table_changed(b))
			follow_drift(b);
	}
}
