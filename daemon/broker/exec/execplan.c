/* execplan.c: a plan carried out step by step (exec.c does one step),
 * each step's progress written to the intent record (intent.c) as it
 * goes, and undone as far as the kernel lets when a step fails or the
 * result cannot be saved.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "exec/exec.h"
#include "hold/hold.h"
#include "persist/persist.h"

/* Undoes what can be undone of steps [0, n): new mounts go, moved ones
 * return to where the kernel last had them.  An unmount cannot be undone;
 * plans put the steps that can fail (a new mount) first. */
static void roll_back(struct broker *b, size_t n, char **was)
{
	char at[64];
	while (n-- > 0) {
		const struct step *s = &b->g.steps[n];
		struct mount *m = mount_by_id(&b->g, s->mnt);
		struct handle *h = m ? handle_of(b, m) : NULL;
		if (!h)
			continue;
		snprintf(at, sizeof at, "/proc/self/fd/%d", h->fd);
		if (s->kind == STEP_NEW || s->kind == STEP_BIND) {
			umount2(at, MNT_DETACH);
			handle_drop(b, h);
		} else if ((s->kind == STEP_MOVE || s->kind == STEP_PARK) &&
			   was[n]) {
			if (mount(at, was[n], NULL, MS_MOVE, NULL))
				log_msg(LOG_WARNING, "rollback: mount %u stays moved",
					   m->id);
		} else if (s->kind == STEP_UMOUNT) {
			log_msg(LOG_WARNING, "rollback: mount %u stays unmounted", m->id);
		}
	}
}

/* Where the kernel has m now, for a rollback of its move. */
static char *where(struct broker *b, const struct step *s)
{
	if (s->kind != STEP_MOVE && s->kind != STEP_PARK)
		return NULL;           /* only moves are undone by moving back */
	struct mount *m = mount_by_id(&b->g, s->mnt);
	struct handle *h = m ? handle_of(b, m) : NULL;
	return h ? fd_path(h->fd) : NULL;
}

static void failed(const struct step *s, size_t i, int err)
{
	log_msg(LOG_WARNING, "step %zu (%s of mount %u): %s", i,
		step_name(s->kind), s->mnt, strerror(-err));
}

/* Step *i carried out, its progress recorded, *i moved past it. */
static int exec_one(struct request *r, size_t *i, char **was)
{
	struct broker *b = r->b;
	const struct step *s = &b->g.steps[*i];
	struct mount *m = mount_by_id(&b->g, s->mnt);
	was[*i] = where(b, s);
	/* the record before the step, unless a copy's "P" brings it (make()
	 * writes it if the copy goes the staged way) */
	int err = s->kind == STEP_BIND && s->parent ? 0 : intent_flush(b);
	if (!err)
		err = exec_step(r, s);
	if (err) {
		failed(s, *i, err);
		return err;
	}
	/* the last step's "D" is left out where its "P" or "S" tells
	 * recovery as much (a copy found on its place, a mount made and
	 * held): it undoes that mount as a done one, until the journal's
	 * record names the plan, next (recover.c) */
	if (*i + 1 < b->g.nsteps ||
	    !(intent_marked(b, s, 'P') || intent_marked(b, s, 'S')))
		intent_step(b, s, 'D', m ? handle_of(b, m) : NULL);
	fault_step();
	(*i)++;
	return 0;
}

/* How many steps from i on are umounts of held mounts that may go at
 * once: none of them takes another along (step.alone, umount.c). */
static size_t umount_run(const struct broker *b, size_t i)
{
	size_t n = 0;
	for (; i + n < b->g.nsteps; n++) {
		const struct step *s = &b->g.steps[i + n];
		struct mount *m = mount_by_id(&b->g, s->mnt);
		if (s->kind != STEP_UMOUNT || !s->alone || !m || !handle_of(b, m))
			break;
	}
	return n;
}

/* Steps [*i, *i + n), such umounts, at once (umounts.c), then their
 * progress in one write, a kill point for each; *i moved past them, or
 * to the first that failed.
 * The record may then say less than the kernel did: recovery finishes
 * a plan any of whose umounts happened (recover.c). */
static int exec_umounts(struct request *r, size_t *i, size_t n)
{
	struct broker *b = r->b;
	int *fds = calloc(n, sizeof *fds), *errs = calloc(n, sizeof *errs);
	int err = fds && errs ? 0 : -ENOMEM;
	for (size_t k = 0; !err && k < n; k++)
		fds[k] = handle_of(b, mount_by_id(&b->g, b->g.steps[*i + k].mnt))->fd;
	if (!err)
		umount_all(fds, errs, n);
	size_t done = 0;
	for (; !err && done < n && !(err = errs[done]); done++) {
		const struct step *s = &b->g.steps[*i + done];
		const struct handle *h = handle_of(b, mount_by_id(&b->g, s->mnt));
		intent_mark(b, s, 'D', h->kid, h->dev);
	}
	intent_flush(b);           /* their "D" in one write, not one each */
	if (err && errs)
		failed(&b->g.steps[*i + done], *i + done, err);
	for (size_t k = 0; k < done; k++, (*i)++)
		fault_step();
	free(fds);
	free(errs);
	return err;
}

enum { BATCH = 64 };           /* copies whose progress goes in one write */

/* Whether step j may join the batch c[0, n): a copy made on its place,
 * under a parent none of c's has (a second copy on one place would go on
 * the first, not on the mount the record names as on top of it; one
 * under the other's copy has no handle to be prepared from). */
static bool joins(const struct broker *b, size_t j, const struct copy *c,
		  size_t n)
{
	if (j >= b->g.nsteps)
		return false;
	const struct step *s = &b->g.steps[j];
	if (s->kind != STEP_BIND || !s->parent)
		return false;
	for (size_t k = 0; k < n; k++)
		if (c[k].s->parent == s->parent)
			return false;
	return true;
}

/* c[0, n) bound in turn, their "P" written before the first in one
 * write and the "D" of those made after the last in another (a fan-out
 * spent two writes a copy on them).  Between two copies a kill point as
 * after a step: the record then says "P" for the batch, and recovery
 * looks for each copy (recover.c).  How many were made: *made. */
static int make_batch(struct request *r, struct copy *c, size_t n,
		      size_t *made)
{
	struct broker *b = r->b;
	int err = 0;
	for (size_t k = 0; k < n; k++)
		intent_mark(b, c[k].s, 'P', c[k].top, c[k].sh->dev);
	*made = 0;
	if ((err = intent_flush(b)))   /* the record, if it is the first */
		return err;
	for (*made = 0; *made < n && !(err = copy_make(r, &c[*made])); )
		if (++*made < n)
			fault_step();
	for (size_t k = 0; k < *made; k++) {
		const struct handle *h = handle_of(b, c[k].m);
		intent_mark(b, c[k].s, 'D', h->kid, h->dev);
	}
	intent_flush(b);
	if (!err)
		fault_step();
	return err;
}

/* Steps from *i on that are copies made on their places, up to BATCH,
 * made as one batch (make_batch()); *i moved past those made, or to the
 * first that failed.  -EAGAIN: step *i is not one, nothing done. */
static int exec_copies(struct request *r, size_t *i)
{
	struct broker *b = r->b;
	struct copy *c;
	size_t n = 0, made = 0;
	int err;
	if (!joins(b, *i, NULL, 0) || !joins(b, *i + 1, NULL, 0) ||
	    b->g.steps[*i].parent == b->g.steps[*i + 1].parent ||
	    !(c = malloc(BATCH * sizeof *c)))
		return -EAGAIN;    /* one copy alone goes the common way */
	while (n < BATCH && joins(b, *i + n, c, n) &&
	       copy_prepare(r, &b->g.steps[*i + n], &c[n]) == 0)
		n++;
	err = n ? make_batch(r, c, n, &made) : -EAGAIN;
	if (err && err != -EAGAIN)
		failed(c[made].s, *i + made, err);
	for (size_t k = 0; k < n; k++)
		copy_release(&c[k]);
	free(c);
	*i += made;
	return err;
}

/* Applies the open plan; on failure nothing of it stays (as far as the
 * kernel lets, see roll_back()) and the kernel's errno is returned.  What
 * exec_undo() needs stays in r until exec_forget(). */
int exec_plan(struct request *r)
{
	struct broker *b = r->b;
	struct graph *g = &b->g;
	char **was = calloc(g->nsteps + 1, sizeof *was);
	int err = was ? 0 : -ENOMEM;
	size_t i = 0, n;
	while (!err && i < g->nsteps)
		if ((n = umount_run(b, i)) > 1)
			err = intent_flush(b) ?: exec_umounts(r, &i, n);
		else if ((err = exec_copies(r, &i)) == -EAGAIN)
			err = exec_one(r, &i, was);
	if (err && was)            /* step i failed: undo [0, i) */
		roll_back(b, i, was);
	r->was = was;
	if (err)
		exec_forget(r);
	return err;
}

/* Undoes the whole plan exec_plan() carried out, when its result cannot
 * be kept (the state cannot be saved): for plan_undoable() plans. */
void exec_undo(struct request *r)
{
	if (r->was)
		roll_back(r->b, r->b->g.nsteps, r->was);
	exec_forget(r);
}

void exec_forget(struct request *r)
{
	exec_drop_parks(r->b);
	for (size_t j = 0; r->was && j < r->b->g.nsteps; j++)
		free(r->was[j]);
	free(r->was);
	r->was = NULL;
}

/* The plan happened: unmounted mounts lose their handles, the graph keeps
 * the change. */
void exec_commit(struct broker *b)
{
	struct graph *g = &b->g;
	for (size_t i = 0; i < g->ndead; i++) {
		struct handle *h = handle_known(b, g->dead[i]);
		if (h)
			handle_drop(b, h);
	}
	plan_commit(g);
}

/* The executed plan's result saved: or, when the state cannot be
 * written, undone with the save's errno, if it can be; a plan that
 * cannot be undone stays, its record kept as the state's only copy until
 * a later save works (intent.c). */
static int persist(struct request *r)
{
	struct broker *b = r->b;
	int err = state_save(b);   /* before the answer (principle 3) */
	if (!err) {
		b->intent.behind = false;
		return 0;
	}
	if (plan_undoable(&b->g)) {
		exec_undo(r);
		return err;
	}
	log_msg(LOG_WARNING, "the state cannot be saved (%s): it stays in "
		"%s/intent until a save works", strerror(-err), b->state_dir);
	b->intent.behind = true;
	return 0;
}

/* Executes the open plan and commits it, or abandons it: all or nothing,
 * recorded before it runs (intent.c) and saved before the answer.  Every
 * plan goes through here, a namespace's copy or end too (nslife.c): the
 * executor writes each step's progress into the record, and undoing
 * needs what exec_plan() keeps until exec_forget(). */
int apply_plan(struct request *r, int err)
{
	struct broker *b = r->b;
	bool recorded = false;
	phase(PHASE_EXECUTE);      /* the record is the executor's first step */
	fault_arm();               /* the tests' kill, for a plan of no step
				      too: its state save is one */
	if (!err && b->g.nsteps)   /* the executor holds what it changes */
		err = expiry_wake_plan(r);
	if (!err && b->g.nsteps)
		recorded = !(err = intent_begin(b));
	paths_plan(b);             /* what its steps move is read again */
	if (!err && !(err = exec_plan(r))) {
		paths_plan(b);     /* and what was read while they ran */
		phase(PHASE_PERSIST);
		err = persist(r);
	}
	exec_forget(r);
	if (err)
		plan_abandon(&b->g);
	else
		exec_commit(b);
	if (recorded)
		intent_end(b, !err);
	return err;
}
