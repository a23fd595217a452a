/* check.c: the invariants of semantics.md 1.1, and the checker that runs
 * them with check_plan.c's replay before every plan is kept.  The dry run
 * and the tests install it (graph.checker); it costs walks of the whole
 * graph, so the broker does not.
 *
 * The invariants are checked before the plan's dead mounts are freed:
 * they are skipped, and a live mount still pointing at one is an error.
 */
#include "journal.h"

static unsigned master_group(const struct mount *m)
{
	return m->master ? m->master->group : 0;
}

/* 1: one master group per peer group; 3: one filesystem; ring sane. */
static int check_ring(const struct mount *m)
{
	const struct mount *p = m;
	do {
		if (p->group != m->group || master_group(p) != master_group(m) ||
		    p->fs != m->fs || next_peer(p)->share.prev != &p->share ||
		    p->dead)
			return -EPROTO;
		p = next_peer(p);
	} while (p != m);
	return 0;
}

/* 2: only shared mounts have slaves; each slave points back; 3, 4. */
static int check_slaves(const struct mount *m)
{
	if (!list_empty(&m->slaves) && !m->group)
		return -EPROTO;
	for (const struct list *l = m->slaves.next; l != &m->slaves; l = l->next) {
		const struct mount *s = list_entry(l, struct mount, slave);
		if (s->master != m || s->fs != m->fs || s->dead)
			return -EPROTO;
	}
	if (m->unbindable && (m->group || m->master))
		return -EPROTO;
	return 0;
}

/* 6: the master chain ends, in live mounts. */
static int check_acyclic(const struct graph *g, const struct mount *m)
{
	unsigned n = g->nmounts;
	for (const struct mount *p = m->master; p; p = p->master)
		if (n-- == 0 || p->dead)
			return -EPROTO;
	return 0;
}

/* 5: one mount per (parent, mountpoint), and parents link their children. */
static int check_place(const struct graph *g, struct mount *m)
{
	if (!m->parent)
		return m->ns->root == m ? 0 : -EPROTO;
	if (m->parent->dead || mount_at(g, m->parent, m->mp) != m ||
	    m->parent->ns != m->ns)
		return -EPROTO;
	return 0;
}

static unsigned ring_size(const struct mount *m)
{
	unsigned n = 0;
	const struct mount *p = m;
	do {
		n++;
		p = next_peer(p);
	} while (p != m);
	return n;
}

static int by_group(const void *a, const void *b)
{
	unsigned x = (*(struct mount *const *)a)->group;
	unsigned y = (*(struct mount *const *)b)->group;
	return (x > y) - (x < y);
}

/* A peer-group id names one ring: sorted by id, the mounts of each id
 * must be as many as the ring of the first of them has members. */
static int check_groups(const struct graph *g)
{
	struct mount **v = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	for (size_t id = 0; !err && id < g->capid; id++) {
		struct mount *m = g->by_id[id];
		if (m && !m->dead && m->group)
			err = VEC_PUSH(v, n, cap, m);
	}
	if (!err && n)         /* qsort(NULL, 0): undefined (nonnull) */
		qsort(v, n, sizeof *v, by_group);
	for (size_t i = 0, j; !err && i < n; i = j) {
		for (j = i + 1; j < n && v[j]->group == v[i]->group; j++)
			;
		if (!(err = check_ring(v[i])) && j - i != ring_size(v[i]))
			err = -EPROTO;
	}
	free(v);
	return err;
}

int check_invariants(const struct graph *g)
{
	int err = 0;
	for (size_t id = 0; id < g->capid; id++) {
		struct mount *m = g->by_id[id];
		if (!m || m->dead)
			continue;
		if ((!m->group && (err = check_ring(m))) ||
		    (err = check_slaves(m)) || (err = check_acyclic(g, m)) ||
		    (err = check_place(g, m)))
			return err;
	}
	return check_groups(g);
}

static int verify(struct graph *g)
{
	return check_plan(g) ?: check_invariants(g);
}

const struct checker engine_checker = {
	.begin = plan_snapshot,
	.verify = verify,
	.end = plan_snapshot_free,
};
