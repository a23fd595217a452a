/* import.c: the host's mount table as the broker's first graph, and the
 * handles that keep every mount reachable.
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
#include "holder.h"
#include "mtparse.h"

static struct entry *find(struct entry *v, size_t n, int id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return &v[i];
	return NULL;
}

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

/* A mount its path does not reach (covered, or under a covered one): the
 * previous broker's holder may still have it (holder.c). */
static int from_holder(struct broker *b, struct entry *e)
{
	int fd = e->guessed ? -1 : holder_take(e->id, entry_dev(e));
	if (fd >= 0 && fd < fd_room() && handle_add(b, e->m, fd) == 0) {
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
 * holder kept it.  Others stay out of reach (logged). */
static void hold(struct broker *b, struct entry *e)
{
	int fd = open(e->mp, O_PATH | O_CLOEXEC);
	if (fd >= 0 && fd >= fd_room()) {
		close(fd);             /* the last ones serve the requests */
		fd = -1;
		errno = EMFILE;
	}
	if (fd >= 0 && (e->guessed ? e->top : fd_mnt_id(fd) == e->id) &&
	    handle_add(b, e->m, fd) == 0)
		return;
	if (fd >= 0)
		close(fd);
	bool starved = fd < 0 && (errno == EMFILE || errno == ENFILE);
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

static struct fs *fs_of(struct broker *b, struct entry *v, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (v[j].m && strcmp(v[j].dev, v[i].dev) == 0)
			return v[j].m->fs;
	struct fs *fs = fs_new(&b->g, v[i].type, "");
	if (fs)                    /* NULL: graph_import() refuses it */
		fs_learn(fs, entry_dev(&v[i]), v[i].sbopts);
	return fs;
}

/* Attach every entry whose parent is in the graph, until none is left. */
static int build(struct broker *b, struct entry *v, size_t n)
{
	size_t done = 0;
	for (bool progress = true; progress && done < n; ) {
		progress = false;
		for (size_t i = 0; i < n; i++) {
			struct entry *p = find(v, n, v[i].parent);
			if (v[i].m || (p && !p->m) || (!p && done))
				continue;
			char *dir = p ? dir_in(p, v[i].mp) : NULL;
			v[i].m = graph_import(&b->g, b->ns, p ? p->m : NULL, dir,
					      fs_of(b, v, i), v[i].root,
					      v[i].source,
					      flags_named(&mnt_flag_table, v[i].opts));
			free(dir);
			if (!v[i].m)
				return -EINVAL;
			hold(b, &v[i]);
			done++;
			progress = true;
		}
	}
	return done == n ? 0 : -EINVAL;
}

/* Reads the kernel's table (mountinfo) into an empty graph.  A table in
 * which the kernel itself propagates is refused: kernel and broker must
 * never both propagate (docs/design.md, a kernel that already propagates). */
/* The kernel's table now, each entry with the graph's mount of its id
 * (NULL for one the graph lacks); the entries point into *lines.  NULL
 * (and no lines) when it cannot be read. */
static struct entry *read_table(struct broker *b, char ***lines, size_t *n)
{
	struct entry *v = NULL;
	if (read_lines("/proc/self/mountinfo", lines, n) == 0 &&
	    (v = calloc(*n ? *n : 1, sizeof *v)) == NULL)
		free_lines(*lines, *n);
	if (!v) {
		*lines = NULL;
		*n = 0;
	}
	for (size_t i = 0; v && i < *n; i++)
		if (mt_parse_line((*lines)[i], &v[i]) == 0)
			v[i].m = mount_of_kid(b, v[i].id);
	return v;
}

/* Mounts the kernel has at another place than the graph (moved behind
 * the broker's back): the graph follows, parents first (mountinfo's
 * order), each keeping its propagation.  Returns how many moved. */
static int follow_moves(struct broker *b, struct entry *v, size_t n)
{
	int moved = 0;
	for (size_t i = 0; i < n; i++) {
		struct entry *p = v[i].m ? find(v, n, v[i].parent) : NULL;
		if (!p || !p->m || !v[i].m->parent)
			continue;
		char *dir = dir_in(p, v[i].mp);
		if (dir && (p->m != v[i].m->parent ||
			    strcmp(dir, v[i].m->mp) != 0)) {
			log_msg(LOG_INFO, "mount %d moved behind the broker's "
				"back to %s: the graph follows", v[i].id,
				v[i].mp);
			moved += graph_relocate(&b->g, v[i].m, p->m, dir) == 0;
		}
		free(dir);
	}
	return moved;
}

/* Mounts made or unmounted behind the broker's back (a static binary, a
 * tool run without the shim): the graph follows the kernel's table before
 * it decides anything.  New mounts join as private mounts under their
 * parents; vanished ones leave with their subtrees.  Returns how many
 * changed. */
int sync_table(struct broker *b)
{
	char **lines;
	size_t n;
	int changed = 0;
	struct entry *v = read_table(b, &lines, &n);
	for (struct handle *h = b->by_seq, *next; v && h; h = next) {
		next = h->hh.next;
		if (!h->m->parent || find(v, n, h->kid))
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
	changed += follow_moves(b, v, n);
	for (bool more = true; v && more; ) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			struct entry *p = find(v, n, v[i].parent);
			if (v[i].m || !p || !p->m || v[i].propagates)
				continue;
			char *dir = dir_in(p, v[i].mp);
			struct fs *fs = fs_of_dev(b, entry_dev(&v[i]));
			if (!fs && (fs = fs_new(&b->g, v[i].type, "")))
				fs_learn(fs, entry_dev(&v[i]), v[i].sbopts);
			v[i].m = graph_import(&b->g, b->ns, p->m, dir, fs,
					      v[i].root, v[i].source,
					      flags_named(&mnt_flag_table, v[i].opts));
			free(dir);
			if (v[i].m)
				hold(b, &v[i]);
			more = changed += v[i].m != NULL;
		}
	}
	free(v);
	free_lines(lines, n);
	if (changed)               /* saved paths too: the next save is whole */
		b->st.valid = false;
	return changed;
}

/* The kernel flags a change of its mount table on an open mountinfo
 * (POLLPRI, since 2.6.15), once per reader: the broker keeps one open to
 * learn whether anyone else changed the table since its last request. */
bool table_changed(struct broker *b)
{
	struct pollfd p = { .fd = b->watch, .events = POLLPRI };
	return b->watch >= 0 && poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLPRI | POLLERR));
}

/* Directories renamed since the graph learned their names: the kernel
 * follows dentries, the graph keeps names.  Every held mount's root and
 * mountpoint are read again from mountinfo; returns how many changed.
 * Called only when a request met a stale name (EIO), so its cost, linear
 * in the table, is paid only then. */
int refresh_paths(struct broker *b)
{
	char **lines;
	size_t n;
	int changed = 0;
	struct entry *v = read_table(b, &lines, &n);
	for (size_t i = 0; v && i < n; i++)
		if (v[i].m && strcmp(v[i].m->root, v[i].root) != 0) {
			changed += mount_rename(&b->g, v[i].m, v[i].root,
						NULL) == 0;
		}
	for (size_t i = 0; v && i < n; i++) {
		struct entry *p = v[i].m ? find(v, n, v[i].parent) : NULL;
		char *dir = p && p->m && p->m == v[i].m->parent ?
			    dir_in(p, v[i].mp) : NULL;
		if (dir && strcmp(dir, v[i].m->mp) != 0) {
			changed += mount_rename(&b->g, v[i].m, v[i].m->root,
						dir) == 0;
		}
		free(dir);
	}
	free(v);
	free_lines(lines, n);
	if (changed)               /* saved paths too: the next save is whole */
		b->st.valid = false;
	return changed;
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
	int err = graph_reorder(&b->g, m, n);
	if (!err)
		handle_rekey(b);       /* the handles are keyed by seq */
	free(m);
	return err;
}

int import_table(struct broker *b, const char *mountinfo)
{
	fd_raise_limit();
	bool mounts = strcmp(strrchr(mountinfo, '/') ?: mountinfo, "/mounts") == 0;
	char **lines;
	size_t n;
	struct entry *v = NULL;
	int err = read_lines(mountinfo, &lines, &n);
	if (err)
		return err;
	v = calloc(n ? n : 1, sizeof *v);
	for (size_t i = 0; v && !err && i < n; i++)
		if ((err = mounts ? mt_parse_mounts_line(lines[i], &v[i], v, i) :
			   mt_parse_line(lines[i], &v[i])) == 0 && v[i].propagates) {
			fprintf(stderr, "sharebrokerd: the kernel already "
				"propagates mount %d (%s); run the broker where "
				"every mount is private (mount --make-rprivate /, "
				"or unshare -m --propagation private)\n",
				v[i].id, v[i].mp);
			err = -EEXIST;
		}
	if (!v)
		err = -ENOMEM;
	for (size_t i = 0; mounts && !err && i < n; i++) {
		v[i].top = true;
		for (size_t j = i + 1; j < n && v[i].top; j++)
			v[i].top = strcmp(v[i].mp, v[j].mp) != 0;
	}
	if (!err)
		err = build(b, v, n);
	if (!err)
		err = keep_order(b, v, n);
	free_lines(lines, n);
	free(v);
	return err;
}
