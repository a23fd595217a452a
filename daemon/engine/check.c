/* check.c: the invariants of semantics.md 1.1, verified after every
 * committed operation when graph.check is set (test builds and sharedry).
 * Costs a walk of the whole graph: never on by default in the broker.
 */
#include <errno.h>
#include <stdlib.h>
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
		    p->fs != m->fs || next_peer(p)->share.prev != &p->share)
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
		if (s->master != m || s->fs != m->fs)
			return -EPROTO;
	}
	if (m->unbindable && (m->group || m->master))
		return -EPROTO;
	return 0;
}

/* 6: the master chain ends. */
static int check_acyclic(const struct graph *g, const struct mount *m)
{
	unsigned n = HASH_CNT(hh, g->by_id);
	for (const struct mount *p = m->master; p; p = p->master)
		if (n-- == 0)
			return -EPROTO;
	return 0;
}

/* 5: one mount per (parent, mountpoint), and parents link their children. */
static int check_place(const struct graph *g, struct mount *m)
{
	if (!m->parent)
		return m->ns->root == m ? 0 : -EPROTO;
	if (mount_at(g, m->parent, m->mp) != m || m->parent->ns != m->ns)
		return -EPROTO;
	return 0;
}

/* A peer-group id names one ring: its members, counted once each. */
struct group_seen {
	unsigned group, ring, members;
	UT_hash_handle hh;
};

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

/* Each ring is walked once, at its first member; then every id must have
 * as many mounts as its ring has members. */
static int check_groups(const struct graph *g)
{
	struct group_seen *seen = NULL, *e, *tmp;
	struct mount *m, *t;
	int err = 0;

	HASH_ITER(hh, g->by_id, m, t) {
		if (!m->group)
			continue;
		HASH_FIND(hh, seen, &m->group, sizeof m->group, e);
		if (!e) {
			if ((err = check_ring(m)))
				break;
			e = calloc(1, sizeof *e);
			if (!e)
				abort();
			e->group = m->group;
			e->ring = ring_size(m);
			HASH_ADD(hh, seen, group, sizeof e->group, e);
		}
		e->members++;
	}
	HASH_ITER(hh, seen, e, tmp) {
		if (!err && e->members != e->ring)
			err = -EPROTO;
		HASH_DEL(seen, e);
		free(e);
	}
	return err;
}

int check_invariants(const struct graph *g)
{
	struct mount *m, *tmp;
	int err = 0;
	HASH_ITER(hh, g->by_id, m, tmp) {
		if ((!m->group && (err = check_ring(m))) ||
		    (err = check_slaves(m)) || (err = check_acyclic(g, m)) ||
		    (err = check_place(g, m)))
			return err;
	}
	return check_groups(g);
}
