/* apply.c: making the mounts a jailtab declares, through a backend (the
 * broker, or the engine in a dry run), idempotently.
 *
 * Idempotent because every step is decided from the table as it is now,
 * read again after each change: a line whose mount is in place (same
 * filesystem type and source for a new one; the same filesystem and
 * directory as its source for a bind), with the declared read-only state
 * and propagation, calls nothing.  A different mount at the target is a
 * conflict, reported and left alone: apply changes only what it declares.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "jailtab.h"
#include "mount_abi.h"

struct run {
	const struct backend *b;
	const struct jt_entry *e;
	const char *target;    /* canonical: as mountinfo names it */
	const char *source;    /* a bind's, canonical */
	FILE *out;
	unsigned changes;
};

/* The propagation of one mount, as mountinfo's optional fields say. */
struct pstate { bool shared, slave, unbindable; };

static struct pstate pstate_of(const struct mline *m)
{
	return (struct pstate){ m->group != 0, m->master != 0, m->unbindable };
}

/* What one --make-* does to a state (semantics.md 2.2).  A shared mount
 * made a slave is predicted to keep a master; one without peers becomes
 * private instead, which the next apply reads as done all the same,
 * since a slave of nothing is what "slave" leaves of it. */
static struct pstate pstate_after(struct pstate s, unsigned long prop)
{
	switch (prop & ~(unsigned long)LS_MS_REC) {
	case LS_MS_SHARED:
		return (struct pstate){ true, s.slave, false };
	case LS_MS_SLAVE:
		return (struct pstate){ false, s.slave || s.shared,
					s.unbindable };
	case LS_MS_UNBINDABLE:
		return (struct pstate){ false, false, true };
	default:
		return (struct pstate){ false, false, false };
	}
}

/* Whether the words of e leave mount m (top: the one at the target)
 * as it is. */
static bool prop_done(const struct jt_entry *e, const struct mline *m,
		      bool top)
{
	struct pstate now = pstate_of(m), s = now;
	for (int i = 0; i < e->nprop; i++)
		if (top || (e->prop[i] & LS_MS_REC))
			s = pstate_after(s, e->prop[i]);
	return s.shared == now.shared && s.slave == now.slave &&
	       s.unbindable == now.unbindable;
}

/* Whether the propagation words have anything to do at the target, or
 * under it for the r- forms. */
static bool prop_pending(const struct mtab *t, const struct jt_entry *e,
			 const struct mline *top)
{
	for (size_t i = 0; i < t->n; i++)
		if (&t->v[i] == top ? !prop_done(e, top, true)
				    : mtab_under(t->v[i].mp, top->mp) &&
				      !prop_done(e, &t->v[i], false))
			return true;
	return false;
}

/* Whether m, the mount at the target, is the one the line declares. */
static bool is_declared(struct run *r, const struct mtab *t,
			const struct mline *m)
{
	char *root = NULL;
	const struct mline *h;
	bool same;
	if (r->e->kind == JT_NEW)
		return strcmp(m->type, r->e->type) == 0 &&
		       strcmp(m->source, r->e->source) == 0;
	if (!(h = mtab_holder(t, r->source, &root)))
		return false;
	same = strcmp(h->dev, m->dev) == 0 && strcmp(root, m->root) == 0;
	free(root);
	return same;
}

/* One call through the backend, said on out; -errno on failure. */
static int call(struct run *r, const struct mcall *c, const char *what)
{
	int err = r->b->mount(r->b->ctx, r->e, c);
	if (err == 0) {
		r->changes++;
		fprintf(r->out, "%s:%u: %s%s\n", r->e->file, r->e->line,
			r->b->verb, what);
		if (r->b->note)
			r->b->note(r->b->ctx, r->out);
		fflush(r->out);
	}
	return err;
}

static int fetch(struct run *r, struct mtab *t)
{
	char *text = NULL;
	int err = r->b->table(r->b->ctx, &text);
	if (err < 0)
		return err;
	if ((err = mtab_parse(t, text)) < 0)
		mtab_free(t);
	return err;
}

/* The line's mount, then for a bind its flags, as mount(8) does it: the
 * bind, then MS_REMOUNT|MS_BIND with the flags. */
static int do_mount(struct run *r)
{
	const struct jt_entry *e = r->e;
	bool bind = e->kind == JT_BIND;
	unsigned long rec = e->recursive ? LS_MS_REC : 0;
	struct mcall c = { e->source, r->target, e->type, e->data, e->flags };
	const char *how = !bind ? "mount" : rec ? "rbind" : "bind";
	char *what;
	int err;
	if (bind)
		c = (struct mcall){ r->source, r->target, NULL, NULL,
				    LS_MS_BIND | rec };
	if (asprintf(&what, "%s %s on %s%s%s", how, c.source, r->target,
		     bind ? "" : " type ", bind ? "" : e->type) < 0)
		return -ENOMEM;
	err = call(r, &c, what);
	free(what);
	if (err || !bind || !e->flags)
		return err;
	c = (struct mcall){ "none", r->target, NULL, NULL,
			    LS_MS_REMOUNT | LS_MS_BIND | e->flags };
	return call(r, &c, e->flags & LS_MS_RDONLY ? "remount ro" : "remount");
}

/* A mount in place whose read-only state is not the declared one. */
static int do_ro(struct run *r, const struct mline *m)
{
	const struct jt_entry *e = r->e;
	bool ro = e->flags & LS_MS_RDONLY;
	struct mcall c = { "none", r->target, NULL, e->data,
			   LS_MS_REMOUNT | e->flags |
			   (e->kind == JT_BIND ? LS_MS_BIND : 0) };
	if (ro == mtab_ro(m))
		return 0;
	return call(r, &c, ro ? "remount ro" : "remount rw");
}

/* Each propagation word as its own call, in the order written. */
static int do_prop(struct run *r)
{
	for (int i = 0; i < r->e->nprop; i++) {
		struct mcall c = { "none", r->target, NULL, NULL,
				   r->e->prop[i] };
		char what[32];
		snprintf(what, sizeof what, "make %s", jt_prop_name(c.flags));
		int err = call(r, &c, what);
		if (err)
			return err;
	}
	return 0;
}

/* What is at the target, mounted first when nothing is; the table is
 * read again after a change. */
static int place(struct run *r, struct mtab *t, const struct mline **m)
{
	const struct jt_entry *e = r->e;
	int err;
	if (*m && !is_declared(r, t, *m)) {
		fprintf(stderr, "%s:%u: %s: %s (%s) is mounted there; "
			"left alone\n", e->file, e->line, r->target,
			(*m)->source, (*m)->type);
		return -EEXIST;
	}
	if (*m)
		return do_ro(r, *m);
	if ((err = do_mount(r)) < 0)
		return err;
	mtab_free(t);
	if ((err = fetch(r, t)) < 0)
		return err;
	*m = mtab_at(t, r->target);
	return *m ? 0 : -ENOENT;
}

static int apply_entry(struct run *r)
{
	struct mtab t;
	const struct mline *m;
	int err = fetch(r, &t);
	if (err < 0)
		return err;
	m = mtab_at(&t, r->target);
	if (r->e->kind != JT_CHANGE)
		err = place(r, &t, &m);
	else if (!m)
		err = -EINVAL;
	if (!err && prop_pending(&t, r->e, m))
		err = do_prop(r);
	mtab_free(&t);
	return err;
}

/* path as the broker will name it: symlinks resolved, as its walk does
 * from the host's root; as written when it does not exist (yet). */
static char *canonical(const char *path)
{
	char *p = realpath(path, NULL);
	return p ? p : strdup(path);
}

/* A jail's target must stay in the jail once its symlinks are followed:
 * a link planted in a jail must not carry a boot-time mount onto the
 * host (jailtab.c refuses what the letters alone show). */
static bool escapes(const struct jt_entry *e, const char *target)
{
	char *jail = e->jail ? canonical(e->jail) : NULL;
	bool out = jail && !mtab_under(target, jail);
	free(jail);
	return out;
}

static int apply_one(struct run *r)
{
	const struct jt_entry *e = r->e;
	char *target = canonical(e->target), *source = canonical(e->source);
	int err = -ENOMEM;
	if (target && source && escapes(e, target)) {
		fprintf(stderr, "%s:%u: %s: leads to %s, outside its jail %s\n",
			e->file, e->line, e->target, target, e->jail);
		err = -EXDEV;
	} else if (target && source) {
		r->target = target;
		r->source = source;
		err = apply_entry(r);
		if (err == -EINVAL && e->kind == JT_CHANGE)
			fprintf(stderr, "%s:%u: %s: not a mount point\n",
				e->file, e->line, target);
		else if (err < 0 && err != -EEXIST)
			fprintf(stderr, "%s:%u: %s%s: %s\n", e->file, e->line,
				target, e->nofail ? " (nofail)" : "",
				strerror(-err));
	}
	free(target);
	free(source);
	return err;
}

/* The lines of t in order (parents before children, as in fstab); a
 * failed line does not stop the others.  -1 when a line without nofail
 * failed; *changes counts the calls made. */
int jt_apply(const struct jt_tab *t, const struct backend *b, FILE *out,
	     unsigned *changes)
{
	struct run r = { .b = b, .out = out };
	int failed = 0;
	for (size_t i = 0; i < t->n; i++) {
		r.e = &t->v[i];
		if (!r.e->noauto && apply_one(&r) < 0 && !r.e->nofail)
			failed = -1;
	}
	*changes = r.changes;
	return failed;
}
