/* state.c: what must survive a restart of the broker (design.md principle
 * 3).  The kernel keeps the mounts; only the broker knows how they
 * propagate: peer groups, masters, unbindable.  After every change the
 * broker writes that down, before it answers, and reads it back when it
 * starts, after importing the table.
 *
 * A line per mount that propagates (a propagation tree's lines in
 * pre-order when the whole state is written, in any order after):
 *     <kernel mount id> <major:minor> <group> <master's mount id or 0>
 *     <unbindable 0|1> <root, escaped> <path, escaped>
 *     <the peer before it in its ring or 0> <the slave before it in its
 *     master's list or 0>
 * (the last two: ids of mounts that have lines; the load rebuilds the
 * rings and slave lists from them, stload.c, so that a change writes
 * only the lines of the mounts it changed, stdelta.c; format 2 lacked
 * them, and its trees' line order made the order)
 * then a line per mount whose children are listed in another order than
 * they were made (the table shows only the latter):
 *     children <kernel mount id> <its children's ids, in list order>
 * (escaped as in mountinfo, so that a line splits on its spaces)
 * then the namespace copies (nsstate.c), a line per namespace and one per
 * token handed out for it:
 *     ns <number> <root's kernel id> <major:minor> <root> <path>
 *        <root place's mount id> <root place, escaped>
 *     nstoken <number, 0: the broker's own> <socket inode> <member 0|1>
 *        <uid> <place's mount id> <place, escaped>
 * (a broker older than the ns lines skips them: its copies' mounts become
 * its own, as they did before these lines).
 * The lines are kept as a snapshot, "state" (the magic line, "# plan N":
 * the last plan it holds, recover.c; readers skip any line that is not a
 * mount's), and a journal of what each request changed since, "journal"
 * (stcache.c); a request's record is written by stdelta.c, a whole save
 * here.  A line is keyed by its first word, a number, or else its first
 * two words: a new kind of line ("<kind> <id> ...") journals unchanged.
 * A line whose mount id now names another mount (not the same superblock,
 * root and place) is dropped: that mount went while the broker was away,
 * and the kernel gave its id to another.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "base/mtparse.h"
#include "hold/hold.h"
#include "persist/persist.h"
#include "vec.h"

int kid_of(const struct broker *b, const struct mount *m)
{
	const struct handle *h = m ? handle_known(b, m) : NULL;
	return h ? h->kid : 0;
}

/* Where the kernel has the mount held by h now (or reached by its
 * place, asleep: expire.c). */
static int fds = -1;           /* /proc/self/fd, this process's */

/* A fork's child (the broker detaches after its first save) must not
 * read its parent's descriptors: it opens its own. */
static void forget_fds(void)
{
	if (fds >= 0)
		close(fds);
	fds = -1;
}

static bool where(const struct handle *h, char *buf, size_t size)
{
	static bool watched;
	char name[16];
	if (h->fd >= 0 && fds < 0 && (watched || (watched =
	    pthread_atfork(NULL, NULL, forget_fds) == 0)))
		fds = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (h->fd >= 0 && fds >= 0) {
		/* one name looked up, not fd_path()'s four: a save of a
		 * fan-out reads the place of each of its copies */
		snprintf(name, sizeof name, "%d", h->fd);
		ssize_t n = readlinkat(fds, name, buf, size - 1);
		if (n >= 0 && (size_t)n < size - 1)
			buf[n] = '\0';
		return n >= 0 && (size_t)n < size - 1;
	}
	char *path = h->fd >= 0 ? fd_path(h->fd) : sleeper_path(h);
	bool ok = path && strlen(path) < size;
	if (ok)
		strcpy(buf, path);
	free(path);
	return ok;
}

/* Whether m has a line: held, and not gone with the plan. */
bool has_line(const struct broker *b, const struct mount *m)
{
	return !m->dead && handle_known(b, m);
}

/* The mount with a line nearest before m in its ring (ring) or in its
 * master's slave list: its kernel id, 0 when none. */
static int line_before(const struct broker *b, const struct mount *m, bool ring)
{
	const struct list *head = ring ? &m->share : &m->master->slaves;
	const struct list *l = ring ? m->share.prev : m->slave.prev;
	for (; l != head; l = l->prev) {
		const struct mount *p = ring ?
			list_entry(l, struct mount, share) :
			list_entry(l, struct mount, slave);
		if (has_line(b, p))
			return kid_of(b, p);
	}
	return 0;
}

/* One line, as the operation that sets it (stcache.c): the path where
 * the kernel has m now, or with graph where the graph puts it (the state
 * as a plan not carried out yet will leave it, intent.c); false when
 * that path cannot be had (no line). */
bool put_mount(const struct broker *b, FILE *f, const struct mount *m,
	       bool graph)
{
	const struct handle *h = handle_known(b, m);
	/* a namespace copy's mounts, too, where the kernel will have them */
	char path[4096], *p = graph ? kernel_path(b, m) : NULL;
	bool ok = graph ? p && strlen(p) < sizeof path :
		  where(h, path, sizeof path);
	if (ok) {
		fprintf(f, "+ 0 %d %u:%u %u %d %d ", h->kid, major(h->dev),
			minor(h->dev), m->group, kid_of(b, m->master),
			m->unbindable);
		put_escaped(f, m->root);
		fputc(' ', f);
		put_escaped(f, p ? p : path);
		fprintf(f, " %d %d\n", m->group ? line_before(b, m, true) : 0,
			m->master ? line_before(b, m, false) : 0);
	}
	free(p);
	return ok;
}

/* Whether m's children are listed in another order than the kernel made
 * them (handle.c): the kernel's list is in order of attachment, which
 * the table does not show (a mount tucked under a stack, or moved, comes
 * after newer ones, and a plan's copies are made in the order of its
 * steps, not always the engine's). */
static bool reordered(const struct broker *b, const struct mount *m)
{
	uint64_t last = 0;
	for (const struct list *l = m->mounts.next; l != &m->mounts;
	     l = l->next) {
		const struct handle *h = handle_known(b, list_entry(l,
						      struct mount, child));
		if (h && h->made < last)
			return true;
		last = h ? h->made : last;
	}
	return false;
}

/* "children <kid> <kid>...": a parent and its children in list order,
 * when the import cannot guess that order (an older broker skips these
 * lines: they have not its 8 fields); false when m needs none. */
bool put_children_of(const struct broker *b, FILE *f, const struct mount *m,
		     const char *prefix)
{
	if (!handle_known(b, m) || m->dead || !reordered(b, m))
		return false;
	fprintf(f, "%schildren %d", prefix, kid_of(b, m));
	for (const struct list *c = m->mounts.next; c != &m->mounts;
	     c = c->next)
		fprintf(f, " %d", kid_of(b, list_entry(c, struct mount, child)));
	fputc('\n', f);
	return true;
}

/* The lines of top's propagation tree in pre-order, as the load puts
 * them (stload.c); its mounts are stamped seen. */
static void put_tree(struct broker *b, FILE *f, struct mount *top,
		     unsigned seen)
{
	for (struct mount *p = top; p; p = propagation_next(p, top)) {
		p->stamp = seen;
		if (has_line(b, p))
			put_mount(b, f, p, false);
	}
}

/* The namespaces' lines as operations (stcache.c): those saved go, the
 * graph's are set; nothing to do while there are none. */
void state_ns_ops(struct broker *b, FILE *f)
{
	for (const struct stline *l = b->st.lines; b->st.nns && l;
	     l = l->hh.next)
		if (state_part_line(l->line))
			fprintf(f, "- %s\n", l->line);
	state_part_put(b, f, "+ 0 ");
}

/* Every mount that propagates, each propagation tree whole, the
 * children lines and the namespaces'. */
static void put_all(struct broker *b, FILE *f)
{
	unsigned seen = ++b->g.stamp;
	for (struct list *l = b->g.order.next; l != &b->g.order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		if (m->stamp == seen || m->master ||
		    !(m->group || m->unbindable))
			continue;
		put_tree(b, f, m, seen);
	}
	for (struct list *l = b->g.order.next; l != &b->g.order; l = l->next) {
		put_children_of(b, f, list_entry(l, struct mount, order),
				"+ 0 ");
	}
	state_part_put(b, f, "+ 0 ");
}

/* The whole state written again from the graph, as the snapshot. */
int state_full(struct broker *b)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	put_all(b, f);
	cache_clear(&b->st);
	int err = fclose(f) == 0 ? cache_apply(&b->st, text, len) : -ENOMEM;
	free(text);
	b->st.serial = b->intent.serial;
	err = err ?: cache_snapshot(b);
	b->st.valid = !err;
	return err;
}

struct saved {
	int kid, master;
	unsigned maj, min, group;
	int unbindable;
	char root[4096], path[4096];
	struct mount *m;
};

/* The mount a saved line names, if the kernel still has it. */
static struct mount *still_there(struct broker *b, struct saved *s)
{
	/* -fanalyzer's NULL s: &v[i] for i < n, and v is NULL only when
	 * read_state() found no line (n is 0) */
	struct mount *m = mount_of_kid(b, s->kid);
	const struct handle *h = m ? handle_known(b, m) : NULL;
	char now[4096];
	unescape(s->root);
	unescape(s->path);
	if (!h || major(h->dev) != s->maj || minor(h->dev) != s->min ||
	    strcmp(m->root, s->root) != 0 || !where(h, now, sizeof now) ||
	    strcmp(now, s->path) != 0)
		return NULL;
	return m;
}

/* The propagation lines of the file, and its "children" lines (any
 * length: a parent may have thousands of children) and namespace lines
 * in *kids. */
static struct saved *read_state(FILE *f, size_t *n, char ***kids, size_t *nk)
{
	struct saved *v = NULL, one;
	char *line = NULL;
	size_t cap = 0, kcap = 0, size = 0;
	*n = *nk = 0;
	*kids = NULL;
	while (getline(&line, &size, f) > 0) {
		char *copy = NULL;
		if (strncmp(line, "children ", 9) == 0 ||
		    state_part_line(line)) {
			if (!(copy = strdup(line)) ||
			    VEC_PUSH(*kids, *nk, kcap, copy)) {
				free(copy);
				break;
			}
		} else if (sscanf(line, "%d %u:%u %u %d %d %4095s %4095s",
				  &one.kid, &one.maj, &one.min, &one.group,
				  &one.master, &one.unbindable, one.root,
				  one.path) == 8 && VEC_PUSH(v, *n, cap, one)) {
			break;
		}
	}
	free(line);
	/* -fanalyzer's leak of copy: pushed, it is (*kids)[i]; not, freed */
	return v;
}

/* A "children" line: the parent's list takes that order, when every mount
 * it names is still a child of it (graph_child_order()). */
static void restore_children(struct broker *b, char *line)
{
	struct mount **v = NULL, *parent = NULL;
	size_t n = 0, cap = 0;
	char *p = line + 9, *end;
	bool ok = true;
	for (long kid; ok && (kid = strtol(p, &end, 10), end != p); p = end) {
		struct mount *m = mount_of_kid(b, (int)kid);
		ok = m && !(parent && VEC_PUSH(v, n, cap, m));
		parent = parent ?: m;
	}
	if (ok && parent && n)
		graph_child_order(&b->g, parent, v, n);
	free(v);
}

/* The saved lines: the snapshot, then the journal's records (stcache.c),
 * as one text to read. */
static FILE *saved_lines(struct broker *b, char **text)
{
	size_t len = 0;
	FILE *f;
	cache_clear(&b->st);
	b->st.serial = 0;
	int r = cache_read_snapshot(b);
	if (r < 0 || journal_read(b, r != 1) < 0 ||
	    !(f = open_memstream(text, &len)))
		return NULL;
	b->st.found = r == 2 || b->st.jlen > 0;
	int err = state_ordered(b, f);
	if (fclose(f) != 0 || err)
		return NULL;
	cache_clear(&b->st);       /* state_full() follows */
	return fmemopen(*text, len ? len : 1, "r");
}

/* Reads the state back into the freshly imported graph: 1 when there was
 * one, 0 when none. */
int state_load(struct broker *b)
{
	size_t n;
	char *text = NULL;
	FILE *f = saved_lines(b, &text);
	if (!f) {
		free(text);
		return -ENOMEM;
	}
	char **kids;
	size_t nk;
	struct saved *v = read_state(f, &n, &kids, &nk);
	fclose(f);
	free(text);
	bool check = b->g.check;
	int err = 0;
	b->g.check = false;
	plan_begin(&b->g);
	for (size_t i = 0; i < n; i++) {
		struct mount *peer = NULL;
		/* -fanalyzer's NULL v: n is 0 then (still_there()) */
		if (!(v[i].m = still_there(b, &v[i])))
			continue;
		for (size_t j = 0; v[i].group && j < i && !peer; j++)
			if (v[j].m && v[j].group == v[i].group)
				peer = v[j].m;
		err = err ?: mount_restore(&b->g, v[i].m, v[i].group != 0,
					   peer, NULL, v[i].unbindable);
	}
	/* -fanalyzer's NULL v: as above */
	for (size_t i = 0; i < n; i++)
		if (v[i].m && v[i].master)
			err = err ?: mount_restore(&b->g, v[i].m, false, NULL,
						   mount_of_kid(b, v[i].master),
						   v[i].unbindable);
	/* A line no save writes (a mount its own master, a ring of masters:
	 * a damaged or hand-edited file) would make every walk over the
	 * propagation tree loop: the graph's invariants decide. */
	if (!err && check_invariants(&b->g)) {
		log_msg(LOG_ERR, "%s/state: its propagation breaks the "
			"graph's rules (a master loop?); none of it is loaded",
			b->state_dir);
		err = -EUCLEAN;
	}
	if (err)                   /* all of the saved propagation, or none */
		plan_abandon(&b->g);
	else
		plan_commit(&b->g);
	b->g.check = check;
	for (size_t i = 0; i < nk; i++)
		if (strncmp(kids[i], "children ", 9) == 0)
			restore_children(b, kids[i]);
	state_part_load(b, kids, nk);
	for (size_t i = 0; i < nk; i++)
		free(kids[i]);
	free(kids);
	free(v);
	return err ?: b->st.found;
}
