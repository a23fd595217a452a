/* stdelta.c: what the open plan changed in the saved state, as a record
 * of operations (stcache.c), so that a request's save costs what it
 * changed, not what the graph holds (issue 10 item 7).
 *
 * The engine's undo journal knows every place of the graph the plan
 * wrote (plan_writes()); a place inside a mount the broker holds names
 * that mount (found by address, never followed).  Those mounts, and every
 * mount below one whose place changed (its path in the kernel's table
 * did too), are the touched ones.  For each, its propagation tree now and
 * the tree its line was saved with are written again whole (their order
 * makes the peer rings and slave lists at load); a line saved before
 * that no tree gives now goes; and the children lines of each touched
 * mount and of its parent are set again, or go, when they differ from
 * the saved ones.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker.h"
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
	char **old;            /* keys of the lines of the trees saved */
	size_t no, co;
	struct kid *set, *trees, *parents;  /* kids written, tags, done */
	unsigned seen;
	FILE *sets;            /* the operations that set lines */
	bool graph;
	int err;
};

#define LIST_AT(field, k) \
	{ offsetof(struct mount, field) + (k) * sizeof(void *), false }
static const struct { size_t off; bool moves; } fields[] = {
	{ offsetof(struct mount, group), false },
	{ offsetof(struct mount, master), false },
	{ offsetof(struct mount, unbindable), false },
	{ offsetof(struct mount, dead), false },
	{ offsetof(struct mount, root), true },
	{ offsetof(struct mount, parent), true },
	{ offsetof(struct mount, mp), true },
	LIST_AT(share, 0), LIST_AT(share, 1), LIST_AT(slaves, 0),
	LIST_AT(slaves, 1), LIST_AT(slave, 0), LIST_AT(slave, 1),
	LIST_AT(mounts, 0), LIST_AT(mounts, 1), LIST_AT(child, 0),
	LIST_AT(child, 1),
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

static void touch(struct delta *d, struct mount *m)
{
	if (m->stamp == d->seen)
		return;
	m->stamp = d->seen;
	struct handle *h = handle_of(d->b, m);
	if (h)
		h->touched = d->seen;
	if (VEC_PUSH(d->t, d->nt, d->ct, m))
		d->err = -ENOMEM;
}

static void found(struct delta *d, struct mount *m, size_t off)
{
	touch(d, m);
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
		if (fields[i].off == off && fields[i].moves &&
		    VEC_PUSH(d->mv, d->nm, d->cm, m))
			d->err = -ENOMEM;
}

/* A place the plan wrote: the mount it lies in, if the broker holds it.
 * A plan writes a few mounts many times: those found already are looked
 * at first, by address (a table lookup per field costs more). */
static void wrote(void *ctx, void *slot)
{
	struct delta *d = ctx;
	uintptr_t at = (uintptr_t)slot, g = (uintptr_t)&d->b->g;
	if (at >= g && at < g + sizeof d->b->g)
		return;                /* the graph's own (seq, order...) */
	for (size_t i = d->nt; i-- > 0; ) {
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

/* m's propagation tree written whole, unless it is already. */
static void tree_of(struct delta *d, struct mount *m)
{
	if (m->dead || !(m->group || m->master || m->unbindable))
		return;
	struct mount *top = m;
	while (top->master)
		top = top->master;
	if (top->stamp == d->seen)
		return;
	/* from the oldest peer of the top group, as a whole save begins
	 * it (put_all()): the load numbers groups in line order */
	struct mount *first = top;
	for (struct mount *p = next_peer(first); p != first; p = next_peer(p))
		if (p->seq < top->seq && !p->dead)
			top = p;
	put_tree(d->b, d->sets, top, d->graph, d->seen);
	for (struct mount *p = top; p; p = propagation_next(p, top))
		if (!p->dead && handle_of(d->b, p))
			once(d, &d->set, kid_of(d->b, p));
}

/* A line of a tree as saved: its mount's tree now, and its key kept. */
static void saved_member(void *ctx, const struct stline *l)
{
	struct delta *d = ctx;
	struct mount *m = mount_of_kid(d->b, atoi(l->key));
	char *key = strdup(l->key);
	if (!key || VEC_PUSH(d->old, d->no, d->co, key)) {
		free(key);
		d->err = -ENOMEM;
	}
	if (m && handle_of(d->b, m))
		tree_of(d, m);
}

static void trees(struct delta *d, struct mount *m)
{
	char key[16];
	snprintf(key, sizeof key, "%d", kid_of(d->b, m));
	const struct stline *l = cache_get(&d->b->st, key);
	if (l && (!l->tag || once(d, &d->trees, (int)l->tag))) {
		if (l->tag)
			cache_tree(&d->b->st, l->tag, saved_member, d);
		else
			saved_member(d, l);
	}
	tree_of(d, m);
}

/* m's children line, set again or gone when it is not the saved one. */
static void children(struct delta *d, FILE *f, const struct mount *m)
{
	char key[32], *text = NULL;
	size_t len = 0;
	if (!m || !handle_of(d->b, m) || !once(d, &d->parents, kid_of(d->b, m)))
		return;
	snprintf(key, sizeof key, "children %d", kid_of(d->b, m));
	const struct stline *l = cache_get(&d->b->st, key);
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
			if (handle_of(d->b, p))
				touch(d, p);
	d->b->st.reuse = d->graph ? 0 : d->seen;
	d->seen = ++d->b->g.stamp;     /* from here: trees written */
	for (size_t i = 0; i < d->nt; i++)
		trees(d, d->t[i]);
	d->b->st.reuse = 0;
	for (size_t i = 0; i < d->no; i++)
		if (once(d, &d->set, atoi(d->old[i])))
			fprintf(f, "- %s\n", d->old[i]);
	fflush(d->sets);
	for (size_t i = 0; i < d->nt; i++) {
		children(d, d->sets, d->t[i]);
		if (!d->t[i]->dead)
			children(d, d->sets, d->t[i]->parent);
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
	write_delta(&d, f);
	if (fclose(d.sets) != 0)
		d.err = d.err ?: -ENOMEM;
	else
		fwrite(sets, 1, len, f);
	state_ns_ops(b, f);        /* few: written again whole */
	free(sets);
	for (size_t i = 0; i < d.no; i++)
		free(d.old[i]);
	free(d.old);
	free(d.t);
	free(d.mv);
	forget(&d.set);
	forget(&d.trees);
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
