/* intent.c: the record of a plan, written before the plan runs, so that a
 * broker killed in the middle of it finds, when it starts again, what it
 * was doing and finishes or undoes it (recover.c; docs/design.md, "Crash
 * recovery").
 *
 * The record is <state dir>/intent, one line per step:
 *     <i> <kind> <kid> <major:minor> <progress> <was> <to>
 * kid the mount's kernel id (0 for a mount the step makes), was where a
 * moved mount is before its step, to where it goes; progress is a slot
 * of fixed width written in place as the step advances: "-" not begun,
 * "S <kid> <dev>" made and held (NEW, BIND), "D ..." done.  A plan that
 * cannot be undone (it unmounts) also carries what it changes in the
 * saved state ("delta", then the journal's operations with "= ",
 * stcache.c): as large as the change, not as the graph.  The last line
 * is "end": a record without it was cut short before any step ran.
 *
 * Durable means written to the file: the kernel keeps a write() across
 * the broker's death.  There is no fsync: a machine that crashes loses
 * every mount, and with them what the record is about.
 *
 * Fault injection (tests only): LIBSHARE_FAULT=step:K kills the broker
 * right after the K-th step it carries out, save:K in the middle of its
 * K-th write of the intent or the state, fail:K makes that write fail
 * with ENOSPC instead; file:PATH reads such a spec from
 * PATH when a plan starts (and removes PATH), counting from there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "broker.h"

enum { SLOT = 32 };            /* width of a progress slot */

/* Where a moved mount is when step i runs: where an earlier step of the
 * plan took it, else where the kernel has it now. */
static char *was_of(struct broker *b, size_t i, char **to)
{
	const struct step *s = &b->g.steps[i];
	for (size_t j = i; j-- > 0; )
		if (b->g.steps[j].mnt == s->mnt && to[j])
			return strdup(to[j]);
	struct mount *m = mount_by_id(&b->g, s->mnt);
	struct handle *h = m ? handle_of(b, m) : NULL;
	return h ? fd_path(h->fd) : NULL;
}

/* Where the graph has m, as the broker's kernel table names it: a
 * namespace copy's mounts lie under the place of its root (STATE/ns/ID,
 * ns.c), which no path from the broker's own root reaches in the graph. */
static char *kernel_path(struct broker *b, struct mount *m)
{
	struct ns *ns = m->ns ? m->ns : b->ns;
	struct handle *h = handle_of(b, ns->root);
	char *in = mount_path(m, mount_root(ns->root), NULL), *top, *p = NULL;
	if (!in || ns == b->ns)
		return in;
	top = h ? fd_path(h->fd) : NULL;
	if (top && asprintf(&p, "%s%s", top, strcmp(in, "/") ? in : "") < 0)
		p = NULL;
	free(top);
	free(in);
	return p;
}

/* Where step i takes its mount: a park place, or its place in the graph
 * as the plan leaves it. */
static char *to_of(struct broker *b, const struct step *s)
{
	struct mount *m = mount_by_id(&b->g, s->mnt);
	char *p = NULL, *park;
	/* as the kernel's table will name it: no symlink, no ".." */
	if (s->kind == STEP_PARK && m && (park = realpath(b->park, NULL))) {
		if (asprintf(&p, "%s/%llu", park, (unsigned long long)m->seq) < 0)
			p = NULL;
		free(park);
	}
	if (s->kind == STEP_MOVE && m)
		p = kernel_path(b, m);
	return p;
}

static void put_path(FILE *f, const char *p)
{
	fputc(' ', f);
	if (p)
		put_escaped(f, p);
	else
		fputc('-', f);
}

/* The steps' lines; to[i] is kept for the later steps' was_of(). */
static int put_steps(struct broker *b, FILE *f, char **to)
{
	struct graph *g = &b->g;
	for (size_t i = 0; i < g->nsteps; i++) {
		const struct step *s = &g->steps[i];
		struct mount *m = mount_by_id(g, s->mnt);
		struct handle *h = m ? handle_of(b, m) : NULL;
		bool moves = s->kind == STEP_MOVE || s->kind == STEP_PARK;
		char *was = moves ? was_of(b, i, to) : NULL;
		to[i] = moves ? to_of(b, s) : NULL;
		fprintf(f, "%zu %s %d %u:%u ", i, step_name(s->kind),
			h ? h->kid : 0, h ? major(h->dev) : 0,
			h ? minor(h->dev) : 0);
		fflush(f);
		b->intent.slot[i] = ftello(f);
		fprintf(f, "%-*s", SLOT, "-");
		put_path(f, was);
		put_path(f, to[i]);
		fputc('\n', f);
		bool lost = moves && (!was || !to[i]);
		free(was);
		if (lost)
			return -EIO;   /* a place the kernel cannot name */
	}
	return 0;
}

/* What the plan changes in the saved state (stdelta.c), each line "= "
 * and an operation: what recover.c appends to the journal if a crash
 * leaves the plan to be finished.  Paths are the graph's: the plan has
 * not run.  Only for plans whose mounts all exist before they run (no
 * NEW or BIND: their ids are the kernel's to give). */
static int put_delta(struct broker *b, FILE *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *d = open_memstream(&text, &len);
	if (!d)
		return -ENOMEM;
	int err = state_delta(b, d, true);
	if (fclose(d) != 0)
		err = err ?: -ENOMEM;
	for (char *p = text, *nl; !err && p && *p; p = nl + 1) {
		if (!(nl = strchr(p, '\n')))
			break;
		fprintf(f, "= %.*s\n", (int)(nl - p), p);
	}
	free(text);
	return err;
}

static int put_record(struct broker *b, FILE *f)
{
	struct graph *g = &b->g;
	char **to = calloc(g->nsteps + 1, sizeof *to);
	if (!to)
		return -ENOMEM;
	fprintf(f, "libshare-intent 1 %llu %zu\n", b->intent.serial, g->nsteps);
	int err = put_steps(b, f, to);
	if (!err && !plan_undoable(g)) {
		fputs("delta\n", f);
		err = put_delta(b, f);
	}
	fputs("end\n", f);
	for (size_t i = 0; i < g->nsteps; i++)
		free(to[i]);
	free(to);
	return err;
}

/* Before the open plan runs: its record, durable, or the errno that
 * stops it (nothing done yet).  A kept plan the state file still lacks
 * is saved first: the record about to be replaced is its only copy. */
int intent_begin(struct broker *b)
{
	struct intent *in = &b->intent;
	char *text = NULL;
	size_t len = 0;
	int err;
	fault_arm();
	if (in->fd < 0)
		return -EBADF;
	/* the record's delta is against the saved state: it must be the
	 * graph's before the plan (a save behind is written whole) */
	if ((in->behind || !b->st.valid) && (err = state_full(b)))
		return err;
	in->behind = false;
	if (b->g.nsteps > in->nslot) {
		off_t *v = realloc(in->slot, b->g.nsteps * sizeof *v);
		if (!v)
			return -ENOMEM;
		in->slot = v;
		in->nslot = b->g.nsteps;
	}
	if (!in->serial)
		in->serial = (unsigned long long)time(NULL) << 24;
	in->serial++;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	err = put_record(b, f);
	if (fclose(f) != 0)
		err = err ?: -ENOMEM;
	if (!err && (ftruncate(in->fd, 0) < 0 || lseek(in->fd, 0, SEEK_SET) < 0))
		err = -errno;
	if (!err && (err = save_put(in->fd, text, len)))
		intent_end(b);         /* a half record: nothing to recover */
	free(text);
	if (err)
		log_msg(LOG_WARNING, "%s/intent: %s", b->state_dir,
			strerror(-err));
	return err;
}

/* Progress of step s: 'S' its new mount made (h), 'D' done.  A write in
 * place of bytes the file has: it needs no room. */
void intent_step(struct broker *b, const struct step *s, char what,
		 const struct handle *h)
{
	struct intent *in = &b->intent;
	size_t i = (size_t)(s - b->g.steps);
	char slot[SLOT + 1];
	if (in->fd < 0 || i >= in->nslot)
		return;
	snprintf(slot, sizeof slot, "%c %d %u:%u", what, h ? h->kid : 0,
		 h ? major(h->dev) : 0, h ? minor(h->dev) : 0);
	memset(slot + strlen(slot), ' ', SLOT - strlen(slot));
	if (pwrite(in->fd, slot, SLOT, in->slot[i]) != SLOT)
		log_msg(LOG_WARNING, "%s/intent: progress: %s", b->state_dir,
			strerror(errno));
}

/* The plan is over (kept and saved, or undone): its record goes, unless
 * the state file still lacks it. */
void intent_end(struct broker *b)
{
	if (b->intent.fd >= 0 && !b->intent.behind &&
	    ftruncate(b->intent.fd, 0) < 0)
		log_msg(LOG_WARNING, "%s/intent: %s", b->state_dir,
			strerror(errno));
}
