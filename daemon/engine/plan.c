/* plan.c: a plan is one operation's journal and its steps, the plain
 * mount(2)/umount2(2) calls that realise it (engine.h).
 *
 * A checker, when the caller installed one, is called through the graph's
 * pointers: the plan knows that something may verify it, not what.
 */
#include "journal.h"

static void clear_plan(struct graph *g)
{
	for (size_t i = 0; i < g->nsteps; i++)
		free(g->steps[i].dir);
	g->nsteps = g->ndead = 0;
}

static bool checking(const struct graph *g)
{
	return g->check && g->checker;
}

void plan_begin(struct graph *g)
{
	clear_plan(g);
	g->planning = true;
	g->seq0 = g->seq;
	g->check_err = checking(g) ? g->checker->begin(g) : 0;
}

void plan_abandon(struct graph *g)
{
	journal_rollback(g, 0);
	if (g->checker)
		g->checker->end(g);
	clear_plan(g);
	g->planning = false;
}

/* Keeps the plan.  A checker's -ENOMEM abandons it instead (the rule of
 * engine.h); any other verdict is returned with the plan kept. */
int plan_commit(struct graph *g)
{
	int err = g->check_err;
	if (!err && checking(g))
		err = g->checker->verify(g);
	if (err == -ENOMEM) {
		plan_abandon(g);
		return err;
	}
	for (size_t i = 0; i < g->ndead; i++)
		mount_free(g, g->dead[i]);
	g->ndead = 0;
	journal_commit(g);
	if (g->checker)
		g->checker->end(g);
	g->planning = false;
	return err;
}

int plan_step(struct graph *g, enum step_kind kind, const struct mount *m,
	      const struct mount *src, const struct mount *parent,
	      const char *dir, unsigned long flags)
{
	struct step s = {
		.kind = kind, .mnt = m->id, .src = src ? src->id : 0,
		.parent = parent ? parent->id : 0,
		.dir = dir ? eng_strdup(dir) : NULL, .flags = flags,
	};
	if ((dir && !s.dir) || VEC_PUSH(g->steps, g->nsteps, g->capsteps, s)) {
		free(s.dir);
		return -ENOMEM;
	}
	return 0;
}

const char *step_name(enum step_kind k)
{
	static const char *const names[] = {
		[STEP_NEW] = "new", [STEP_BIND] = "bind", [STEP_MOVE] = "move",
		[STEP_PARK] = "park", [STEP_UMOUNT] = "umount",
		[STEP_REMOUNT] = "remount", [STEP_REMOUNT_RO] = "remount-ro",
	};
	return names[k];
}
