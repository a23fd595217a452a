/* stdelta.c: what the open plan changed in the saved state, as a record
 * of operations (stcache.c), so that a request's save costs what it
 * changed, not what the graph holds (issue 10 item 7).
 *
 * The engine's undo journal knows every place of the graph the plan
 * wrote (plan_writes()); a place inside a mount the broker holds names
 * that mount (found by address, never followed).  Those mounts, every
 * mount below one whose place changed (its path in the kernel's table
 * did too), and the mount with a line after each in its peer ring and
 * in its slave list (the line names the one before it, state.c) are the
 * touched ones.  Each touched mount's line is set again, or goes when it
 * propagates no more; and the children lines of each touched mount and
 * of its parent are set again, or go, when they differ from the saved
 * ones.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker.h"
#include "hold/hold.h"
#include "persist/persist.h"
#include "vec.h"

struct kid {
	int kid;
	UT_hash_handle hh;
};

struct delta {
	struct broker *b;
	struct mount **t;      /* touched */
	size_t nt, ct;
	struct mount **mv;     /* moved: the paths below them changed */
	size_t nm, cm;
	struct kid *parents;   /* children lines done */
	unsigned seen, lined;   /* stamps of the touched mounts */
	FILE *sets;            /* the operations that set lines */
	bool graph;
	int err;
};

/* The fields a plan writes: whether the paths below change with one
 * (moves), whether the mount's own line does (line: a line names the
 * mount before it in its ring and its slave list, not the one after,
 * nor children). */
#define LIST_AT(field, k, line) \
	{ offsetof(struct mount, field) + (k) * sizeof(void *), false, line }
static const struct { size_t off; bool moves, line; } fields[] = {
	{ offsetof(struct mount, group), false, true },
	{ offsetof(struct mount, master), false, true },
	{ offsetof(struct mount, unbindable), false, true },
	{ offsetof(struct mount, dead), false, true },
	{ offsetof(struct mount, root), true, true },
	{ offsetof(struct mount, parent), true, true },
	{ offsetof(struct mount, mp), true, true },
	{ offsetof(struct mount, ns), true, true },   /* kernel_path() */
	LIST_AT(share, 0, false), LIST_AT(share, 1, true),
	LIST_AT(slaves, 0, false), LIST_AT(slaves, 1, false),
	LIST_AT(slave, 0, false), LIST_AT(slave, 1, true),
	LIST_AT(mounts, 0, false), LIST_AT(mounts, 1, false),
	LIST_AT(child, 0, false), LIST_AT(child, 1, false),
};

/* Adds n to the set; whether it was new.  Out of memory: the error. */
static bool once(struct delta *d, struct kid **set, int n)
{
	struct kid *k;
	HASH_FIND_INT(*set, &n, k);
	if (k)
		return false;
	if (!(k = calloc(1, sizeof *k))) {
		d->err = -ENOMEM;
		return false;
	}
	k->kid = n;
	HASH_ADD_INT(*set, kid, k);
	return true;
}

static void forget(struct kid **set)
{
	struct kid *k, *tmp;
	HASH_ITER(hh, *set, k, tmp) {
		HASH_DEL(*set, k);
		free(k);
	}
}

/* m touched: its children lines looked at, and with line its own line
 * written again (stamped d->lined; d->seen: touched only). */
static void touch(struct delta *d, struct mount *m, bool line)
{
	if (m->stamp == d->lined || (m->stamp == d->seen && !line))
		return;
	bool known = m->stamp == d->seen;
	m->stamp = line ? d->lined : d->seen;
	if (!known && VEC_PUSH(d->t, d->nt, d->ct, m))
		d->err = -ENOMEM;
}

/* A write at off into m; a field not listed changes no line. */
static void found(struct delta *d, struct mount *m, size_t off)
{
	size_t i = 0, n = sizeof fields / sizeof *fields;
	while (i < n && fields[i].off != off)
		i++;
	touch(d, m, i < n && fields[i].line);
	if (i < n && fields[i].moves && VEC_PUSH(d->mv, d->nm, d->cm, m))
		d->err = -ENOMEM;
}

/* A place the plan wrote: the mount it lies in, if the broker holds it.
 * A plan writes a few mounts many times: the last few found are looked
 * at first, by address (a table lookup per field costs more; a look at
 * every one found, for a plan of a thousand copies, far more). */
enum { RECENT = 8 };

static void wrote(void *ctx, void *slot)
{
	struct delta *d = ctx;
	uintptr_t at = (uintptr_t)slot, g = (uintptr_t)&d->b->g;
	if (at >= g && at < g + sizeof d->b->g)
		return;                /* the graph's own (seq, order...) */
	for (size_t i = d->nt; i-- > 0 && i + RECENT >= d->nt; ) {
		uintptr_t m = (uintptr_t)d->t[i];
		if (at >= m && at < m + sizeof *d->t[i]) {
			found(d, d->t[i], at - m);
			return;
		}
	}
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
		struct mount *m = mount_at_ptr(d->b, (const void *)
				(at - fields[i].off));
		if (m) {
			found(d, m, fields[i].off);
			return;
		}
	}
}

/* The mount with a line next after m in the list at head, from at (m's
 * node in it), when its line may name m or what was before m: when
 * mounts without a line lie between, or m has none now.  (The lines
 * next to a mount that comes or goes are written: their nodes are.)
 * Only mounts touched before the first walk are walked from. */
static void next_line(struct delta *d, const struct mount *m,
		      const struct list *at, const struct list *head,
		      size_t off)
{
	bool skipped = !has_line(d->b, m);
	for (const struct list *l = at->next; l != head; l = l->next) {
		struct mount *p = (struct mount *)((char *)l - off);
		if (has_line(d->b, p)) {
			if (skipped)
				touch(d, p, true);
			return;
		}
		if (p->stamp == d->seen || p->stamp == d->lined)
			return;    /* touched: its own walk goes on from it */
		skipped = true;
	}
}

static void next_lines(struct delta *d, const struct mount *m)
{
	next_line(d, m, &m->share, &m->share, offsetof(struct mount, share));
	if (m->master)
		next_line(d, m, &m->slave, &m->master->slaves,
			  offsetof(struct mount, slave));
}

/* m's line set again when the plan changed it or made m (its kernel id
 * may be a gone mount's, whose line goes), or gone when m propagates no
 * more (or its path cannot be had). */
static void line_of(struct delta *d, FILE *f, const struct mount *m)
{
	char key[16];
	bool shares = m->group || m->master || m->unbindable;
	snprintf(key, sizeof key, "%d", kid_of(d->b, m));
	const struct stline *l = cache_get(&d->b->st, key);
	if (shares && has_line(d->b, m) && l && m->stamp != d->lined &&
	    m->seq <= d->b->g.seq0)
		return;
	if (shares && has_line(d->b, m) && put_mount(d->b, d->sets, m,
						     d->graph))
		return;
	if (l)
		fprintf(f, "- %s\n", key);
}

/* The handle of the child with one nearest c in its parent's list,
 * before c (prev) or after it; NULL when none. */
static const struct handle *sibling(const struct broker *b,
				    const struct mount *c, bool prev)
{
	const struct list *head = &c->parent->mounts, *l;
	for (l = prev ? c->child.prev : c->child.next; l != head;
	     l = prev ? l->prev : l->next) {
		const struct handle *o = handle_known(b, list_entry(l,
						   struct mount, child));
		if (o)
			return o;
	}
	return NULL;
}

/* Whether child c lies between its neighbours in the order the kernel
 * made them (reordered(), state.c). */
static bool in_order(const struct broker *b, const struct mount *c)
{
	const struct handle *h = handle_known(b, c), *p, *n;
	if (!h)
		return true;
	p = sibling(b, c, true);
	n = sibling(b, c, false);
	return (!p || p->made < h->made) && (!n || h->made < n->made);
}

/* m's children line, set again or gone when it is not the saved one.
 * With none saved, m's list was in the kernel's order: it still is when
 * c, the touched child (NULL: m itself), keeps it, and a line costs a
 * look at every child. */
static void children(struct delta *d, FILE *f, const struct mount *m,
		     const struct mount *c)
{
	char key[32], *text = NULL;
	size_t len = 0;
	if (!m || !handle_known(d->b, m))
		return;
	snprintf(key, sizeof key, "children %d", kid_of(d->b, m));
	const struct stline *l = cache_get(&d->b->st, key);
	/* -fanalyzer's leak: once()'s entry is in d->parents (uthash),
	 * freed by forget() */
	if ((!l && (!c || in_order(d->b, c))) ||
	    !once(d, &d->parents, kid_of(d->b, m)))
		return;
	FILE *s = open_memstream(&text, &len);
	bool has = s && put_children_of(d->b, s, m, "");
	if (!s || fclose(s) != 0)
		d->err = -ENOMEM;
	else if (has && (!l || strncmp(l->line, text, len - 1) ||
			 l->line[len - 1]))
		fprintf(f, "+ 0 %s", text);
	else if (!has && l)
		fprintf(f, "- %s\n", key);
	free(text);
}

static void write_delta(struct delta *d, FILE *f)
{
	plan_writes(&d->b->g, wrote, d);
	for (size_t i = 0; i < d->nm; i++)
		for (struct mount *p = next_in_tree(d->mv[i], d->mv[i]); p;
		     p = next_in_tree(p, d->mv[i]))
			if (handle_known(d->b, p))
				touch(d, p, true);
	for (size_t i = 0, n = d->nt; i < n; i++)
		next_lines(d, d->t[i]);
	for (size_t i = 0; i < d->nt; i++)
		line_of(d, f, d->t[i]);
	fflush(d->sets);
	for (size_t i = 0; i < d->nt; i++) {
		children(d, d->sets, d->t[i], NULL);
		if (!d->t[i]->dead)
			children(d, d->sets, d->t[i]->parent, d->t[i]);
	}
}

/* Lines go before lines are set, so that a kernel id the plan gave again
 * to a new mount ends with the new line. */
static int put_ops(struct broker *b, FILE *f, bool graph)
{
	struct delta d = { .b = b, .graph = graph };
	char *sets = NULL;
	size_t len = 0;
	if (!(d.sets = open_memstream(&sets, &len)))
		return -ENOMEM;
	d.seen = ++b->g.stamp;
	d.lined = ++b->g.stamp;
	write_delta(&d, f);
	if (fclose(d.sets) != 0)
		d.err = d.err ?: -ENOMEM;
	else
		fwrite(sets, 1, len, f);
	state_ns_ops(b, f);        /* few: written again whole */
	free(sets);
	free(d.t);
	free(d.mv);
	forget(&d.parents);
	return d.err ?: ferror(f) ? -EIO : 0;
}

/* The operations that take the saved state to the graph's, for the open
 * plan, as *text (malloc'ed, the caller's to free); with graph, paths as
 * the graph has them (the plan not carried out yet: intent.c). */
int state_delta(struct broker *b, bool graph, char **text, size_t *len)
{
	*text = NULL;
	*len = 0;
	FILE *f = open_memstream(text, len);
	if (!f)
		return -ENOMEM;
	int err = put_ops(b, f, graph);
	if (fclose(f) != 0)
		err = err ?: -ENOMEM;
	return err;
}

/* The state saved, before the answer (principle 3): what the open plan
 * changed as a record of the journal, or, outside a plan (drift) and
 * after a save that failed, the whole state.  A plan with steps always
 * leaves a record, empty or not: its serial says it was saved
 * (recover.c). */
int state_save(struct broker *b)
{
	char *text;
	size_t len;
	if (!b->g.planning || !b->st.valid || b->intent.behind)
		return state_full(b);
	int err = state_delta(b, false, &text, &len);
	if (!err && (len || b->g.nsteps))
		err = journal_append(b, text, len, b->intent.serial);
	if (!err && cache_apply(&b->st, text, len) < 0)
		b->st.valid = false;   /* written: the next save is whole */
	free(text);
	if (!err && journal_full(b) && cache_snapshot(b) < 0)
		b->st.valid = false;
	return err;
}
