/* check_plan.c: proof that a plan's steps do what the graph says.
 *
 * When graph.check is set, plan_begin() snapshots the kernel's view of the
 * table (each mount's parent and mountpoint: all a table of private mounts
 * holds), and plan_commit() replays the steps on that snapshot with the
 * rules of plain mount(2)/umount2(2), then compares it with the graph.
 * A plan that stacks a mount on an occupied place, unmounts a mount with
 * children without MNT_DETACH, or ends anywhere else than the graph, fails.
 */
#include <errno.h>
#include <stdlib.h>
#include "journal.h"

struct entry {
	unsigned id, parent;   /* parent 0: a namespace root; PARKED */
	char *mp;
	bool doomed;
	UT_hash_handle hh;
};

static void forget(struct entry **t, struct entry *e)
{
	HASH_DEL(*t, e);
	free(e->mp);
	free(e);
}

void plan_snapshot_free(struct graph *g)
{
	struct entry *e, *tmp, *t = g->snapshot;
	HASH_ITER(hh, t, e, tmp)
		forget(&t, e);
	g->snapshot = NULL;
}

static struct entry *put(struct entry **t, unsigned id, unsigned parent,
			 const char *mp)
{
	struct entry *e;
	HASH_FIND(hh, *t, &id, sizeof id, e);
	if (!e) {
		e = calloc(1, sizeof *e);
		if (!e)
			abort();
		e->id = id;
		HASH_ADD(hh, *t, id, sizeof e->id, e);
	}
	free(e->mp);
	e->parent = parent;
	e->mp = strdup(mp ? mp : "/");
	if (!e->mp)
		abort();
	return e;
}

void plan_snapshot(struct graph *g)
{
	struct mount *m, *tmp;
	struct entry *t = NULL;
	plan_snapshot_free(g);
	HASH_ITER(hh, g->by_id, m, tmp)
		put(&t, m->id, m->parent ? m->parent->id : 0, m->mp);
	g->snapshot = t;
}

#define PARKED (~0u)

static struct entry *get(struct entry *t, unsigned id)
{
	struct entry *e;
	HASH_FIND(hh, t, &id, sizeof id, e);
	return e;
}

static bool occupied(struct entry *t, unsigned parent, const char *mp)
{
	struct entry *e, *tmp;
	if (!parent)
		return false;
	HASH_ITER(hh, t, e, tmp)
		if (e->parent == parent && strcmp(e->mp, mp) == 0)
			return true;
	return false;
}

/* umount2(): m alone, which must have no children, or with MNT_DETACH
 * m and everything below it. */
static int drop(struct entry **t, struct entry *m, bool tree)
{
	struct entry *e, *tmp;
	m->doomed = true;
	for (bool more = true; more; ) {
		more = false;
		HASH_ITER(hh, *t, e, tmp) {
			struct entry *p = e->parent != PARKED ? get(*t, e->parent)
							       : NULL;
			if (!e->doomed && p && p->doomed) {
				if (!tree)
					return -EBUSY;
				e->doomed = more = true;
			}
		}
	}
	HASH_ITER(hh, *t, e, tmp)
		if (e->doomed)
			forget(t, e);
	return 0;
}

static int replay(struct entry **t, const struct step *s)
{
	struct entry *e = get(*t, s->mnt);
	switch (s->kind) {
	case STEP_NEW:
	case STEP_BIND:
		if (e || occupied(*t, s->parent, s->dir) ||
		    (s->kind == STEP_BIND && !get(*t, s->src)))
			return -EPROTO;
		put(t, s->mnt, s->parent, s->dir);
		return 0;
	case STEP_PARK:
		if (!e || e->parent == PARKED)
			return -EPROTO;
		e->parent = PARKED;
		return 0;
	case STEP_MOVE:
		if (!e || occupied(*t, s->parent, s->dir))
			return -EPROTO;
		put(t, s->mnt, s->parent, s->dir);
		return 0;
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
	struct entry *t = g->snapshot, *e;
	struct mount *m, *tmp;
	unsigned live = 0;
	int err = 0;

	for (size_t i = 0; !err && i < g->nsteps; i++)
		err = replay(&t, &g->steps[i]);
	HASH_ITER(hh, g->by_id, m, tmp) {
		if (err || m->dead)
			continue;
		live++;
		e = get(t, m->id);
		if (!e || e->parent != (m->parent ? m->parent->id : 0) ||
		    strcmp(e->mp, m->mp) != 0)
			err = -EPROTO;
	}
	if (!err && HASH_COUNT(t) != live)
		err = -EPROTO;
	g->snapshot = t;
	plan_snapshot_free(g);
	return err;
}
