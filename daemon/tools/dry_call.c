/* dry_call.c: the dry run's system calls: each one engine operation in a
 * plan of its own, committed when the operation succeeds; and the path
 * arguments they look up.  Below the commands (dry.c, dry_mount.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dry.h"

/* Look up w[i] for the command's caller; the result's dir is in *buf.
 * util-linux looks its paths up (realpath, stat) before its call: a use
 * of the mount it ends on, whose MNT_EXPIRE mark goes (dry_use()). */
int dry_at(struct cmd *k, int i, struct loc *l, char **buf)
{
	int err = i < k->n ?
		  dry_lookup(k->d, k->c.root, k->w[i], LOOKUP, l, buf) : -EINVAL;
	if (!err)
		dry_use(l->m);
	return err;
}

/* The mount of p on a directory above dir, if any: the broker's
 * executor moves it aside to reach dir (exec.c, move_to()), a kill point
 * of its own that the crash tests look for (test/diff/fault-diff.sh).
 * As the plan leaves the graph, not as each step finds it. */
static const struct mount *covering(const struct graph *g,
				    const struct mount *p, const char *dir)
{
	const struct mount *c = NULL;
	/* the walk starts at p's root: what is mounted there covers no
	 * directory of it that the walk meets */
	size_t root = p && strcmp(p->root, "/") ? strlen(p->root) : 0;
	char *d = p && strlen(dir) > root ? strdup(dir) : NULL;
	for (char *x = d ? strchr(d + root + 1, '/') : NULL; x && !c;
	     x = strchr(x + 1, '/')) {
		*x = '\0';
		c = mount_at(g, p, d);
		*x = '/';
	}
	free(d);
	return c;
}

/* Whether no path reaches m as the plan leaves the graph: a mount on its
 * root or an ancestor's, or above its place.  A crash leaves such a mount
 * to the holder's descriptors (holder.c), which the crash tests must
 * try apart. */
static bool hidden(const struct graph *g, const struct mount *m)
{
	for (const struct mount *from = NULL; m; from = m, m = m->parent) {
		const struct mount *top = mount_at(g, m, m->root);
		if ((top && top != from) ||   /* not the way up: a cover */
		    (m->parent && covering(g, m->parent, m->mp)))
			return true;
	}
	return false;
}

static void trace_plan(const struct graph *g)
{
	for (size_t i = 0; i < g->nsteps; i++) {
		const struct step *s = &g->steps[i];
		const struct mount *c;
		printf("    step %s mount %u", step_name(s->kind), s->mnt);
		if (s->src)
			printf(" from %u", s->src);
		if (s->parent)
			printf(" on %u at %s", s->parent, s->dir);
		if (s->parent && (c = covering(g, mount_by_id(g, s->parent),
					       s->dir)))
			printf(" (under %u)", c->id);
		if (s->parent && hidden(g, mount_by_id(g, s->mnt)))
			printf(" (hidden)");
		printf("%s\n", s->flags & LS_MNT_DETACH ? " (lazy)" : "");
	}
}

/* One system call, through the tests' hook when they set one. */
int dry_call(struct cmd *k, dry_op op, const void *arg)
{
	return k->d->around ? k->d->around(k, op, arg) : dry_call_once(k, op, arg);
}

/* One system call as one plan: committed when the operation succeeds
 * (unless the tests ask for every plan to be abandoned). */
int dry_call_once(struct cmd *k, dry_op op, const void *arg)
{
	struct graph *g = &k->d->g;
	plan_begin(g);
	int err = op(k, arg);
	if (err || k->d->abandon) {
		plan_abandon(g);
		return err;
	}
	if (k->d->trace)
		trace_plan(g);
	err = plan_commit(g);
	if (err == -ENOMEM)        /* the checker's: the plan is abandoned */
		return err;
	if (err < 0) {
		fprintf(stderr, "sharedry: line %u: invariant broken\n",
			k->d->line);
		k->d->broken = true;
	}
	return 0;
}
