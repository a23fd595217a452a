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
 * "S <kid> <dev>" made and held (NEW, BIND), "P <top> <dev>" a BIND
 * about to be made on its place, "to", on top of mount top (copy.c),
 * "D ..." done.  Copies bound in a batch (execplan.c) have their "P"
 * written together before the first is made, and their "D" together
 * after the last: one write each, of the record's bytes from the first
 * slot to the last (intent_mark(), intent_flush()), not two per copy.
 * A plan that cannot be undone (it unmounts) also carries what it
 * changes in the saved state ("delta", then the journal's operations
 * with "= ", stcache.c): as large as the change, not as the graph.
 * The last line is "end <serial>", the header's serial again: a record
 * without it was cut short before any step ran.  After it, one line is
 * appended for every mount the executor moves aside for the time of a
 * move (exec.c, move_to()), before it goes:
 *     aside <kid> <major:minor> <P|B> <was> <to>
 * P while it is away, B once it is back (written in place).  A NUL ends
 * the record and each aside appended.
 *
 * The file is not emptied between plans: a record goes by being written
 * over.  The NUL hides what an older, longer record left after it; a
 * write cut short shows the new header over the old record's tail, whose
 * "end" names another serial: cut short (recover.c).  A plan kept and
 * saved needs nothing more, the state names its serial (recover.c); one
 * undone has the first byte of its header overwritten ("-").  The
 * record is written whole before the first step changes anything, by
 * the first intent_flush(): a plan that starts with a copy bound on its
 * place writes it with that copy's "P" (or a batch's), one write.
 *
 * Durable means written to the file: the kernel keeps a write() across
 * the broker's death.  There is no fsync: a machine that crashes loses
 * every mount, and with them what the record is about.
 *
 * Fault injection (tests only): LIBSHARE_FAULT=step:K kills the broker
 * at its K-th kill point (after a step, or after a mount is moved aside
 * within one), save:K in the middle of its K-th write of the intent or
 * the state, fail:K makes that write fail with ENOSPC instead; file:PATH
 * reads such a spec from PATH when a plan starts (and removes PATH),
 * counting from there.
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
#include "base/base.h"
#include "base/log.h"
#include "hold/hold.h"
#include "persist/persist.h"

enum { SLOT = 32 };            /* width of a progress slot */

/* The record as written, kept while its plan runs: a batch of slots is
 * changed here and written as one span of the file (intent_flush()).
 * One broker per process, so one record. */
static struct {
	char *text;
	size_t len;
	size_t lo, hi;         /* the span changed since the last flush */
	bool unwritten;        /* not yet: with the first flush */
	bool written;          /* whole, in the file */
} rec;

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

/* m's park place (exec.c, park()) as the kernel's table will name it:
 * no symlink, no "..". */
static char *park_of(struct broker *b, const struct mount *m)
{
	char *p = NULL, *park = realpath(b->park, NULL);
	if (park && asprintf(&p, "%s/%llu", park,
			     (unsigned long long)m->seq) < 0)
		p = NULL;
	free(park);
	return p;
}

/* Where step i takes its mount: a park place, or its place in the graph
 * as the plan leaves it (a BIND's: where recovery looks for a copy made
 * in place, copy.c). */
static char *to_of(struct broker *b, const struct step *s)
{
	struct mount *m = mount_by_id(&b->g, s->mnt);
	if (s->kind == STEP_PARK && m)
		return park_of(b, m);
	if ((s->kind == STEP_MOVE || s->kind == STEP_BIND) && m)
		return kernel_path(b, m);
	return NULL;
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
		struct handle *h = m ? handle_known(b, m) : NULL;
		bool moves = s->kind == STEP_MOVE || s->kind == STEP_PARK;
		char *was = moves ? was_of(b, i, to) : NULL;
		to[i] = moves || s->kind == STEP_BIND ? to_of(b, s) : NULL;
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
	char *text;
	size_t len;
	int err = state_delta(b, true, &text, &len);
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
	fprintf(f, "end %llu\n", b->intent.serial);
	fputc('\0', f);           /* what an older record left is not read */
	for (size_t i = 0; i < g->nsteps; i++)
		free(to[i]);
	free(to);
	return err;
}

/* Before the open plan runs: its record, made (the first intent_flush()
 * writes it, above), or the errno that stops it (nothing done yet).  A
 * kept plan the state file still lacks is saved first: the record about
 * to be replaced is its only copy. */
int intent_begin(struct broker *b)
{
	struct intent *in = &b->intent;
	char *text = NULL;
	size_t len = 0;
	int err;
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
	in->end = err ? 0 : (off_t)len - 1;  /* asides go on the NUL */
	free(rec.text);            /* kept for the slots (intent_mark()) */
	rec.text = err ? NULL : text;
	rec.len = err ? 0 : len;
	rec.lo = rec.hi = 0;
	rec.unwritten = !err;
	rec.written = false;
	if (err) {
		free(text);
		log_msg(LOG_WARNING, "%s/intent: %s", b->state_dir,
			strerror(-err));
	}
	return err;
}

/* Step s's progress slot, changed in the kept record only; written by
 * intent_flush(), in place of bytes the file has: it needs no room. */
void intent_mark(struct broker *b, const struct step *s, char what,
		 int kid, dev_t dev)
{
	struct intent *in = &b->intent;
	size_t i = (size_t)(s - b->g.steps);
	char slot[SLOT + 1];
	if (in->fd < 0 || i >= in->nslot || !rec.text ||
	    (size_t)in->slot[i] + SLOT > rec.len)
		return;
	snprintf(slot, sizeof slot, "%c %d %u:%u", what, kid, major(dev),
		 minor(dev));
	memset(slot + strlen(slot), ' ', SLOT - strlen(slot));
	size_t at = (size_t)in->slot[i];
	memcpy(rec.text + at, slot, SLOT);
	if (rec.lo == rec.hi || at < rec.lo)
		rec.lo = at;
	if (at + SLOT > rec.hi)
		rec.hi = at + SLOT;
}

/* Whether step s's slot says what ('P': a copy bound on its place that
 * recovery finds by its place alone, recover.c). */
bool intent_marked(const struct broker *b, const struct step *s, char what)
{
	size_t i = (size_t)(s - b->g.steps);
	return rec.text && i < b->intent.nslot &&
	       (size_t)b->intent.slot[i] < rec.len &&
	       rec.text[b->intent.slot[i]] == what;
}

/* The record with the slots marked so far, durable, if it is not yet:
 * over the last record, without emptying the file first (a write cut
 * short leaves no "end" with our serial, above); its errno stops the
 * plan, nothing done.  Else the slots marked since the last flush, in
 * one write: the bytes between them are the record's own, written again
 * as they are (a failure is only said: they need no room). */
int intent_flush(struct broker *b)
{
	size_t n = rec.hi - rec.lo;
	int err;
	if (rec.unwritten) {
		if ((err = save_put(b->intent.fd, rec.text, rec.len, 0)) < 0) {
			log_msg(LOG_WARNING, "%s/intent: %s", b->state_dir,
				strerror(-err));
			return err;
		}
		rec.unwritten = false;
		rec.written = true;
	} else if (n && pwrite(b->intent.fd, rec.text + rec.lo, n,
			       (off_t)rec.lo) != (ssize_t)n)
		log_msg(LOG_WARNING, "%s/intent: progress: %s", b->state_dir,
			strerror(errno));
	rec.lo = rec.hi = 0;
	return 0;
}

static int put_slot(struct broker *b, const struct step *s, char what,
		    int kid, dev_t dev)
{
	intent_mark(b, s, what, kid, dev);
	return intent_flush(b);
}

/* Progress of step s: 'S' its new mount made (h), 'D' done. */
void intent_step(struct broker *b, const struct step *s, char what,
		 const struct handle *h)
{
	(void)put_slot(b, s, what, h ? h->kid : 0, h ? h->dev : 0);
}

/* A copy about to be bound on its place (copy.c): 'P', the mount on top
 * of the place and the source's superblock, from which recovery finds
 * the copy should the broker die before the step is done; with the
 * record, if it is the first step (intent_flush()'s errno). */
int intent_pending(struct broker *b, const struct step *s, int top,
		   dev_t dev)
{
	return put_slot(b, s, 'P', top, dev);
}

/* Before m, which covers the place of a move, goes to its park place:
 * its line (above), appended, or the errno that keeps it where it is
 * (an append needs room).  *slot: where intent_back() writes. */
int intent_aside(struct broker *b, const struct mount *m, off_t *slot)
{
	struct intent *in = &b->intent;
	struct handle *h = handle_of(b, m);
	char *text = NULL, *was = h ? fd_path(h->fd) : NULL;
	char *to = park_of(b, m);
	size_t len = 0;
	int err = in->fd < 0 ? -EBADF : !was || !to ? -EIO : 0;
	FILE *f = err ? NULL : open_memstream(&text, &len);
	if (!err && !f)
		err = -ENOMEM;
	if (f) {
		fprintf(f, "aside %d %u:%u ", h->kid, major(h->dev),
			minor(h->dev));
		fflush(f);
		*slot = in->end + ftello(f);
		fputc('P', f);
		put_path(f, was);
		put_path(f, to);
		fputc('\n', f);
		fputc('\0', f);
		if (fclose(f) != 0)
			err = -ENOMEM;
	}
	ssize_t n = err ? 0 : pwrite(in->fd, text, len, in->end);
	if (!err && n != (ssize_t)len)
		err = n < 0 ? -errno : -ENOSPC;
	if (!err)
		in->end += (off_t)len - 1;
	else
		log_msg(LOG_WARNING, "%s/intent: aside: %s", b->state_dir,
			strerror(-err));
	free(text);
	free(was);
	free(to);
	return err;
}

/* The mount intent_aside() recorded at slot is back in its place. */
void intent_back(struct broker *b, off_t slot)
{
	if (b->intent.fd >= 0 && pwrite(b->intent.fd, "B", 1, slot) != 1)
		log_msg(LOG_WARNING, "%s/intent: progress: %s", b->state_dir,
			strerror(errno));
}

/* The plan is over, saved (the state names its serial: the record is
 * left as it is, no call) or undone (its header is spoilt in place, one
 * byte that needs no room; emptied if even that fails; nothing if it
 * was never written whole), unless the state file still lacks it. */
void intent_end(struct broker *b, bool saved)
{
	int fd = b->intent.fd;
	bool written = rec.written;
	if (fd < 0 || b->intent.behind)
		return;
	free(rec.text);
	rec.text = NULL;
	rec.len = rec.lo = rec.hi = 0;
	rec.unwritten = rec.written = false;
	if (!saved && written && pwrite(fd, "-", 1, 0) != 1 &&
	    ftruncate(fd, 0) < 0)
		log_msg(LOG_WARNING, "%s/intent: %s", b->state_dir,
			strerror(errno));
}

/* Whether every step of the open plan can be undone: new mounts can go
 * and moved ones go back, an unmount or a remount cannot be taken back. */
bool plan_undoable(const struct graph *g)
{
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i].kind != STEP_NEW && g->steps[i].kind != STEP_BIND &&
		    g->steps[i].kind != STEP_MOVE && g->steps[i].kind != STEP_PARK)
			return false;
	return true;
}
