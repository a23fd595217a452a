/* check_plan.c: proof that a plan's steps do what the graph says.
 *
 * As a plan begins, the checker snapshots the kernel's view of the table
 * (each mount's parent and mountpoint: all a table of private mounts
 * holds); before the plan is kept, it replays the steps on that snapshot
 * with the rules of plain mount(2)/umount2(2), then compares it with the
 * graph.  A plan that stacks a mount on an occupied place, unmounts a
 * mount with children without MNT_DETACH, or ends anywhere else than the
 * graph, fails.
 *
 * The snapshot borrows the mountpoint strings: an open plan frees none
 * (the journal keeps replaced ones until commit, the steps their own).
 */
#include <string.h>
#include "journal.h"

struct entry {
	unsigned parent;       /* 0: a namespace root; PARKED */
	const char *mp;
	bool live, doomed;
};

struct snap {
	struct entry *e;       /* indexed by mount id */
	size_t cap;
};

#define PARKED (~0u)

void plan_snapshot_free(struct graph *g)
{
	struct snap *t = g->snapshot;
	if (t)
		free(t->e);
	free(t);
	g->snapshot = NULL;
}

static struct entry *get(const struct snap *t, unsigned id)
{
	return id < t->cap && t->e[id].live ? &t->e[id] : NULL;
}

static int put(struct snap *t, unsigned id, unsigned parent, const char *mp)
{
	size_t old = t->cap;
	if (VEC_RESERVE(t->e, t->cap, (size_t)id + 1))
		return -ENOMEM;
	memset(t->e + old, 0, (t->cap - old) * sizeof *t->e);
	t->e[id] = (struct entry){ parent, mp ? mp : "/", true, false };
	return 0;
}

int plan_snapshot(struct graph *g)
{
	struct snap *t = eng_calloc(1, sizeof *t);
	int err = t ? 0 : -ENOMEM;
	plan_snapshot_free(g);
	g->snapshot = t;
	for (size_t id = 0; !err && id < g->capid; id++) {
		struct mount *m = g->by_id[id];
		if (m)
			err = put(t, m->id, m->parent ? m->parent->id : 0,
				  m->mp);
	}
	return err;
}

static bool occupied(const struct snap *t, unsigned parent, const char *mp)
{
	if (!parent)
		return false;
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].live && t->e[i].parent == parent &&
		    strcmp(t->e[i].mp, mp) == 0)
			return true;
	return false;
}

/* umount2(): m alone, which must have no children, or with MNT_DETACH
 * m and everything below it. */
static int drop(struct snap *t, struct entry *m, bool tree)
{
	m->doomed = true;
	for (bool more = true; more; ) {
		more = false;
		for (size_t i = 0; i < t->cap; i++) {
			struct entry *e = &t->e[i];
			struct entry *p = e->live && e->parent != PARKED ?
					  get(t, e->parent) : NULL;
			if (!e->doomed && p && p->doomed) {
				if (!tree)
					return -EBUSY;
				e->doomed = more = true;
			}
		}
	}
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].doomed)
			t->e[i] = (struct entry){ 0 };
	return 0;
}

static int replay(struct snap *t, const struct step *s)
{
	struct entry *e = get(t, s->mnt);
	switch (s->kind) {
	case STEP_NEW:
	case STEP_BIND:
		if (e || occupied(t, s->parent, s->dir) ||
		    (s->kind == STEP_BIND && !get(t, s->src)))
			return -EPROTO;
		return put(t, s->mnt, s->parent, s->dir);
	case STEP_PARK:
		if (!e || e->parent == PARKED)
			return -EPROTO;
		e->parent = PARKED;
		return 0;
	case STEP_MOVE:
		if (!e || occupied(t, s->parent, s->dir))
			return -EPROTO;
		return put(t, s->mnt, s->parent, s->dir);
	case STEP_UMOUNT:
		return e ? drop(t, e, s->flags & LS_MNT_DETACH) : -EPROTO;
	case STEP_REMOUNT:
	case STEP_REMOUNT_RO:
		return e ? 0 : -EPROTO;
	}
	return -EPROTO;
}

/* Replay the plan on the snapshot; the result must be the graph. */
int check_plan(struct graph *g)
{
	struct snap *t = g->snapshot;
	unsigned live = 0, left = 0;
	int err = t ? 0 : -EPROTO;

	for (size_t i = 0; !err && i < g->nsteps; i++)
		err = replay(t, &g->steps[i]);
	for (size_t id = 0; !err && id < g->capid; id++) {
		struct mount *m = g->by_id[id];
		struct entry *e = m && !m->dead ? get(t, m->id) : NULL;
		if (!m || m->dead)
			continue;
		live++;
		if (!e || e->parent != (m->parent ? m->parent->id : 0) ||
		    strcmp(e->mp, m->mp) != 0)
			err = -EPROTO;
	}
	for (size_t i = 0; !err && i < t->cap; i++)
		left += t->e[i].live;
	return err ?: left != live ? -EPROTO : 0;
}
