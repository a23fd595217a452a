/* import.c: the host's mount table as the broker's first graph (each
 * mount held, handle.c: by its path, or through a descriptor the previous
 * broker's holder or recovery kept), and the graph kept in step with the
 * table.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "base/mtparse.h"
#include "hold/hold.h"
#include "hold/holder.h"
#include "vec.h"

/* The directory of parent's filesystem that the path mp is on. */
static char *dir_in(const struct entry *parent, const char *mp)
{
	const char *rel = mp + strlen(parent->mp);
	char *d;
	if (strcmp(parent->mp, "/") == 0)
		rel = strcmp(mp, "/") == 0 ? "" : mp;
	if (asprintf(&d, "%s%s", strcmp(parent->m->root, "/") == 0 && *rel ?
		     "" : parent->m->root, rel) < 0)
		return NULL;
	return d;
}

/* The graph's filesystem of e's superblock: the one a mount already
 * imported is on (fs_of_dev(): a mount of a superblock met before shares
 * it, as in the kernel), else a new one; NULL, which graph_import()
 * refuses, without memory. */
static struct fs *fs_for(struct broker *b, const struct entry *e)
{
	dev_t dev = entry_dev(e);
	struct fs *fs = fs_of_dev(b, dev);
	if (!fs && (fs = fs_new(&b->g, e->type, "")))
		fs_learn(fs, dev, e->sbopts);
	return fs;
}

/* Attach every entry whose parent is in the graph, until none is left. */
static int attach_all(struct broker *b, struct table *t)
{
	struct entry *v = t->v, **ix = t->ix;
	size_t done = 0, n = t->n;
	int err = 0;
	for (bool progress = true; progress && done < n && !err; ) {
		progress = false;
		for (size_t i = 0; i < n && !err; i++) {
			struct entry *p = entry_find(ix, n, v[i].parent);
			if (v[i].m || (p && !p->m) || (!p && done))
				continue;
			char *dir = p ? dir_in(p, v[i].mp) : NULL;
			v[i].m = graph_import(&b->g, b->ns, p ? p->m : NULL, dir,
					      fs_for(b, &v[i]),
					      v[i].root, v[i].source,
					      flags_named(&mnt_flag_table, v[i].opts));
			free(dir);
			if (!v[i].m) {
				err = -EINVAL;
				break;
			}
			handle_import(b, t, &v[i], expiry_above(ix, n, &v[i]));
			done++;
			progress = true;
		}
	}
	return err ? err : done == n ? 0 : -EINVAL;
}

/* The kernel's table now (mtparse.c), each entry with the graph's mount
 * of its id (NULL for one the graph lacks). */
static int read_table(struct broker *b, struct table *t)
{
	int err = table_read_watched(t);
	for (size_t i = 0; !err && i < t->n; i++)
		t->v[i].m = mount_of_kid(b, t->v[i].id);
	return err;
}

/* Mounts the kernel has at another place than the graph (moved behind
 * the broker's back): the graph follows, parents first (mountinfo's
 * order), each keeping its propagation.  Returns how many moved. */
static int follow_moves(struct broker *b, const struct table *t)
{
	int moved = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct entry *e = &t->v[i];
		struct entry *p = e->m ? table_find(t, e->parent) : NULL;
		if (!p || !p->m || !e->m->parent)
			continue;
		char *dir = dir_in(p, e->mp);
		if (dir && (p->m != e->m->parent ||
			    strcmp(dir, e->m->mp) != 0)) {
			log_msg(LOG_INFO, "mount %d moved behind the broker's "
				"back to %s: the graph follows", e->id, e->mp);
			moved += graph_relocate(&b->g, e->m, p->m, dir) == 0;
		}
		free(dir);
	}
	return moved;
}

/* Held mounts the kernel no longer has leave the graph with their
 * subtrees.  Returns how many went. */
static int forget_gone(struct broker *b, const struct table *t)
{
	int changed = 0;
	for (struct handle *h = b->by_seq, *next; h; h = next) {
		next = h->hh.next;
		if (!h->m->parent || table_find(t, h->kid))
			continue;
		struct mount *gone = h->m;
		for (struct mount *q = gone; q; q = next_in_tree(q, gone)) {
			struct handle *qh;
			HASH_FIND(hh, b->by_seq, &q->seq, sizeof q->seq, qh);
			if (qh && qh == next)
				next = qh->hh.next;
			if (qh)
				handle_drop(b, qh);
		}
		changed += graph_forget(&b->g, gone) == 0;
		next = b->by_seq;      /* the table changed under the walk */
	}
	return changed;
}

/* New mounts join as private mounts under their parents, parents first.
 * Returns how many joined. */
static int take_new(struct broker *b, struct table *t)
{
	int changed = 0;
	for (bool more = true; more; ) {
		more = false;
		for (size_t i = 0; i < t->n; i++) {
			struct entry *e = &t->v[i];
			struct entry *p = table_find(t, e->parent);
			if (e->m || !p || !p->m || e->propagates)
				continue;
			char *dir = dir_in(p, e->mp);
			e->m = graph_import(&b->g, b->ns, p->m, dir, fs_for(b, e),
					    e->root, e->source,
					    flags_named(&mnt_flag_table, e->opts));
			free(dir);
			if (e->m)
				handle_import(b, t, e, false);
			more = changed += e->m != NULL;
		}
	}
	return changed;
}

/* Mounts made, moved or unmounted behind the broker's back (a static
 * binary, a tool run without the shim): the graph follows the kernel's
 * table before it decides anything.  Returns how many changed. */
int sync_table(struct broker *b)
{
	struct table t;
	if (read_table(b, &t) < 0)
		return 0;
	int changed = forget_gone(b, &t);
	changed += follow_moves(b, &t);
	changed += take_new(b, &t);
	table_free(&t);
	if (changed)               /* saved paths too: the next save is whole */
		b->st.valid = false;
	return changed;
}

/* The kernel flags a change of its mount table on an open mountinfo
 * (POLLPRI, since 2.6.15), once per reader: the broker keeps one open to
 * learn whether anyone else changed the table since its last request.
 * A poll takes the event.  Where several threads serve (door/loop.c), the
 * main thread waits on one of its own (also), whose event every look of
 * a request takes too: the main thread then wakes for what no request
 * took, and looks again under the graph's lock. */
static int also = -1;

void table_watch_also(int fd)
{
	also = fd;
}

int table_watch_fd(const struct broker *b)
{
	return also >= 0 ? also : b->watch;
}

bool table_changed(struct broker *b)
{
	struct pollfd p[2] = { { .fd = b->watch, .events = POLLPRI },
			       { .fd = also, .events = POLLPRI } };
	return b->watch >= 0 && poll(p, 2, 0) > 0 &&
	       (p[0].revents & (POLLPRI | POLLERR));
}

/* Directories renamed since the graph learned their names: the kernel
 * follows dentries, the graph keeps names.  Every held mount's root and
 * mountpoint are read again from mountinfo; returns how many changed.
 * Called only when a request met a stale name (EIO, or names_fresh()
 * before an rbind), so its cost, linear in the table, is paid only then. */
int refresh_paths(struct broker *b)
{
	struct table t;
	int changed = 0;
	if (read_table(b, &t) < 0)
		return 0;
	for (size_t i = 0; i < t.n; i++)
		if (t.v[i].m && strcmp(t.v[i].m->root, t.v[i].root) != 0) {
			changed += mount_rename(&b->g, t.v[i].m, t.v[i].root,
						NULL) == 0;
		}
	for (size_t i = 0; i < t.n; i++) {
		struct entry *e = &t.v[i];
		struct entry *p = e->m ? table_find(&t, e->parent) : NULL;
		char *dir = p && p->m && p->m == e->m->parent ?
			    dir_in(p, e->mp) : NULL;
		if (dir && strcmp(dir, e->m->mp) != 0)
			changed += mount_rename(&b->g, e->m, e->m->root,
						dir) == 0;
		free(dir);
	}
	table_free(&t);
	log_msg(changed ? LOG_INFO : LOG_DEBUG, "names read again from the "
		"kernel's table: %d mount(s) renamed behind the broker's back",
		changed);
	if (changed)               /* saved paths too: the next save is whole */
		b->st.valid = false;
	return changed;
}

static int by_seq(const void *x, const void *y)
{
	const struct mount *p = *(struct mount *const *)x,
			   *q = *(struct mount *const *)y;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* Each parent's children in the table's order: build() attaches a child
 * the table lists before its parent (one moved or tucked under a newer
 * mount) in a later pass, after its younger siblings.  The state's
 * "children" lines (state.c) say where the kernel's list differs from
 * the order of creation, so the import must start from that order. */
static int children_by_creation(struct broker *b)
{
	struct mount **v = NULL;
	size_t n, cap = 0;
	int err = 0;
	for (struct list *l = b->g.order.next; !err && l != &b->g.order;
	     l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		n = 0;
		for (struct list *c = m->mounts.next; !err && c != &m->mounts;
		     c = c->next)
			err = VEC_PUSH(v, n, cap, list_entry(c, struct mount,
							    child));
		bool sorted = true;
		/* -fanalyzer's NULL v: n > 1 means two VEC_PUSH()es
		 * worked */
		for (size_t i = 1; !err && i < n; i++)
			sorted = sorted && v[i - 1]->seq < v[i]->seq;
		if (err || sorted)
			continue;
		qsort(v, n, sizeof *v, by_seq);
		err = graph_child_order(&b->g, m, v, n);
	}
	free(v);
	return err;
}

/* The graph's creation order is the table's, not the order in which
 * build() could attach the mounts (a parent first). */
static int keep_order(struct broker *b, struct entry *v, size_t n)
{
	struct mount **m = malloc((n ? n : 1) * sizeof *m);
	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		m[i] = v[i].m;
	int err = graph_reorder(&b->g, m, n) ?: children_by_creation(b);
	if (!err)
		handle_rekey(b);       /* the handles are keyed by seq */
	free(m);
	return err;
}

/* The kernel's own table answers the import's questions of mount ids too
 * (mntid_within(): one read, not one per mount); another file may not be
 * the kernel's table now, and a question of it reads the kernel's. */
int import_table(struct broker *b, const char *mountinfo)
{
	fd_raise_limit();
	bool mounts = strcmp(strrchr(mountinfo, '/') ?: mountinfo, "/mounts") == 0;
	bool own = strcmp(mountinfo, "/proc/self/mountinfo") == 0;
	struct table t = { .watch = own ? table_watch() : -1 };
	int tail = own ? fs_learn_tail() : -1;
	int err = tail >= 0 ? fd_read_lines(tail, &t.lines, &t.n) :
		  read_lines(mountinfo, &t.lines, &t.n);
	struct entry *v = err ? NULL : (t.v = calloc(t.n ? t.n : 1, sizeof *t.v));
	size_t n = t.n;
	if (!err && !v)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		if ((err = mounts ? mt_parse_mounts_line(t.lines[i], &v[i], v, i) :
			   mt_parse_line(t.lines[i], &v[i])) == 0 && v[i].propagates) {
			fprintf(stderr, "sharebrokerd: the kernel already "
				"propagates mount %d (%s); run the broker where "
				"every mount is private (mount --make-rprivate /, "
				"or unshare -m --propagation private)\n",
				v[i].id, v[i].mp);
			err = -EEXIST;
		}
	for (size_t i = 0; mounts && !err && i < n; i++) {
		v[i].top = true;
		for (size_t j = i + 1; j < n && v[i].top; j++)
			v[i].top = strcmp(v[i].mp, v[j].mp) != 0;
	}
	if (!err && !(t.ix = entry_index(v, n)))
		err = -ENOMEM;
	if (!err)
		err = attach_all(b, &t);
	if (!err)
		err = keep_order(b, v, n);
	table_free(&t);
	return err;
}

/* A mount its path does not reach (covered, or under a covered one): the
 * previous broker's holder may still have it (holder.c), or recovery,
 * whose moves covered it (recmove.c). */
static int from_holder(struct broker *b, struct entry *e)
{
	int fd = e->guessed ? -1 : recover_take(e->id, entry_dev(e));
	if (fd < 0 && !e->guessed)
		fd = holder_take(e->id, entry_dev(e));
	/* recover_take() and holder_take() checked the id: an older kernel
	 * may not say it twice (mntid.c) */
	if (fd >= 0 && fd < fd_room() &&
	    handle_take(b, e->m, fd, e->id) == 0) {
		log_msg(LOG_DEBUG, "mount %d on %s is covered: reached through "
			"the previous broker's holder", e->id, e->mp);
		return 0;
	}
	if (fd >= 0)
		close(fd);
	return -ENOENT;
}

/* A mount the broker can reach by its path gets a handle: the top of its
 * stack, when nothing covers it; a covered one, if the previous broker's
 * holder kept it.  Others stay out of reach (logged).  Beneath a mount
 * marked to expire (above), its path is not looked up: the lookup would
 * end on the marked one and clear its mark. */
void handle_import(struct broker *b, struct table *t, struct entry *e,
		   bool above)
{
	if (expiry_import(b, e) == 0)
		return;        /* marked to expire: no lookup (expire.c) */
	int fd = above ? -1 : open(e->mp, O_PATH | O_CLOEXEC);
	if (fd >= 0 && fd >= fd_room()) {
		close(fd);             /* the last ones serve the requests */
		fd = -1;
		errno = EMFILE;
	}
	if (fd >= 0 && (e->guessed ? e->top : mntid_within(t, fd) == e->id) &&
	    handle_take(b, e->m, fd, e->guessed ? mntid_within(t, fd) :
			e->id) == 0)
		return;
	if (fd >= 0)
		close(fd);
	bool starved = fd < 0 && !above &&
		       (errno == EMFILE || errno == ENFILE);
	if (!starved && from_holder(b, e) == 0)
		return;
	if (starved) {
		if (!b->fd_starved++)
			log_msg(LOG_WARNING, "the descriptor limit (%d) is "
				"reached: mount %d on %s and any after it are "
				"out of the broker's reach (it holds one "
				"descriptor per mount)", fd_room() + FD_SPARE,
				e->id, e->mp);
	} else {
		log_msg(LOG_WARNING, "mount %d on %s is covered: out of the "
			"broker's reach; requests that would unmount it, move "
			"it or propagate to or from it fail with EIO until "
			"what covers it goes", e->id, e->mp);
	}
	handle_put(b, e->m, -1, e->id, entry_dev(e));
}
