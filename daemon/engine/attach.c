/* attach.c: new mounts, bind, rbind and move: the attach procedure of
 * semantics.md 3.2 with the propagated copies of 3.3.
 */
#include <errno.h>
#include <stdlib.h>
#include "journal.h"

/* One operation's propagated copies, made while walking the receivers
 * (3.2 step 4, 3.3): each copy, and the receiver it will be attached to. */
struct prop {
	struct graph *g;
	struct mount *t;       /* the tree being attached */
	const char *x;         /* its mountpoint */
	unsigned mark;         /* masters of receivers that got a copy */
	struct mount **copy, **dest;
	size_t n, cap;
};

static bool peers(const struct mount *a, const struct mount *b)
{
	return a->group && a->group == b->group;
}

/* fs.mount-max (9).  The planned mounts are counted in their namespaces
 * as they are made (mount_new()), so a namespace over the limit is one
 * the operation would fill too much. */
static int count(struct graph *g, struct ns *ns)
{
	return ns->count > g->max_mounts ? -ENOSPC : 0;
}

/* A receiver gets a copy only if the mountpoint is visible in it, and never
 * if this operation made it (3.2.4). */
static bool needs_copy(const struct prop *p, const struct mount *r)
{
	return r->seq <= p->g->seq0 && dir_under(p->x, r->root);
}

/* The copy the first copy of n's group is a slave of: the copy of the
 * nearest node above n that got one, found from the last copy made. */
static struct mount *find_master(struct prop *p, struct mount *n,
				 struct mount *last)
{
	struct mount *m = n, *q;
	for (;;) {
		q = m->master;
		if (!q || q->mark == p->mark)
			break;
		m = q;
	}
	while (!peers(last, p->t)) {
		struct mount *receiver = p->dest[last->copy_of];
		if (receiver->master == q) {
			if (!peers(receiver, m))
				last = last->master;
			break;
		}
		last = last->master;
	}
	return last;
}

static int add_copy(struct prop *p, struct mount *c, struct mount *n)
{
	size_t cap = p->cap;
	if (VEC_RESERVE(p->copy, cap, p->n + 1) ||
	    VEC_RESERVE(p->dest, p->cap, p->n + 1))
		return -ENOMEM;
	c->copy_of = p->n;
	p->copy[p->n] = c;
	p->dest[p->n++] = n;
	if (n->master)
		n->master->mark = p->mark;
	return count(p->g, n->ns);
}

/* Copies for every receiver of d, group by group, depth first: peers of d
 * get peers of the tree; the first receiver of each other group a slave
 * of the copy above it, in a new group if it is shared, the rest of its
 * group peers of that copy (the kernel's propagate_mnt). */
static int propagate(struct prop *p, struct mount *d)
{
	struct mount *copy = p->t, *n;
	int err = 0;

	if (d->master)
		d->master->mark = p->mark;
	for (struct mount *m = d; m && !err; m = next_group(m, d, p->g->seq0)) {
		int type;
		if (m == d) {
			copy = p->t;
			type = CL_MAKE_SHARED;
			if ((n = next_peer(m)) == m)
				continue;
		} else {
			type = CL_SLAVE;
			if (is_shared(m) && m->invented != p->mark)
				type |= CL_MAKE_SHARED;
			n = m;
		}
		do {
			if (!needs_copy(p, n))
				continue;
			if (type & CL_SLAVE)
				copy = find_master(p, n, copy);
			copy = copy_tree(p->g, copy, copy->root,
					 type | CL_RECURSIVE, n->ns);
			err = copy ? add_copy(p, copy, n) : -ENOMEM;
			type = CL_MAKE_SHARED;
		} while (!err && (n = next_peer(n)) != m);
	}
	return err;
}

/* One kernel step per mount of a planned tree (its copies' sources are
 * forgotten once planned); shared with op_copy_ns(). */
int plan_tree(struct graph *g, struct mount *t)
{
	int err = 0;
	for (struct mount *p = t; p && !err; p = next_in_tree(p, t)) {
		err = plan_step(g, p->src ? STEP_BIND : STEP_NEW, p, p->src,
				p->parent, p->mp, 0);
		p->src = NULL;
	}
	return err;
}

/* Attach a planned tree at (parent, mp): one kernel step per mount. */
static int graft_new(struct graph *g, struct mount *t, struct mount *parent,
		     const char *mp)
{
	return mount_attach(g, t, parent, mp) ?: plan_tree(g, t);
}

/* A copy lands at (r, x); whatever r already has there is tucked on top
 * of the copy's topmost overmount (3.2.6). */
static int place_copy(struct graph *g, struct mount *c, struct mount *r,
		      const char *x)
{
	struct mount *q = mount_at(g, r, x);
	int err = q ? plan_step(g, STEP_PARK, q, NULL, NULL, NULL, 0) ?:
		      mount_detach(g, q) : 0;
	err = err ?: graft_new(g, c, r, x);
	if (!err && q) {
		struct mount *top = topmost(g, c);
		err = mount_attach(g, q, top, top->root) ?:
		      plan_step(g, STEP_MOVE, q, NULL, top, top->root, 0);
	}
	return err;
}

/* Under a shared destination every mount of the tree gets a group before
 * the copies are made (1.3), but counts as shared only once they are: a
 * moved slave that receives a copy of itself gets a pure slave copy. */
static int invent_groups(struct prop *p, struct mount *t)
{
	unsigned id;
	for (struct mount *q = t; q; q = next_in_tree(q, t))
		if (!q->group) {
			int err = group_new(p->g, &id) ?: JSET(p->g, q->group, id);
			if (err)
				return err;
			q->invented = p->mark;
		}
	return 0;
}

static int share_tree(struct graph *g, struct mount *t)
{
	int err = 0;
	for (struct mount *q = t; q && !err; q = next_in_tree(q, t))
		err = set_shared(g, q);
	return err;
}

/* The attach procedure (3.2): t is a planned tree, or for a move the
 * attached tree being moved. */
static int attach(struct graph *g, struct mount *t, struct loc to, bool moving)
{
	struct prop p = { .g = g, .t = t, .x = to.dir, .mark = ++g->stamp };
	struct mount *d = to.m;
	int err = 0;

	if (!moving)
		err = count(g, d->ns);
	if (!err && is_shared(d))
		err = invent_groups(&p, t) ?: propagate(&p, d) ?:
		      share_tree(g, t);
	if (!err && moving)
		err = mount_detach(g, t) ?: mount_attach(g, t, d, to.dir) ?:
		      plan_step(g, STEP_MOVE, t, NULL, d, to.dir, 0);
	else if (!err)
		err = graft_new(g, t, d, to.dir);
	for (size_t i = 0; !err && i < p.n; i++)
		err = place_copy(g, p.copy[i], p.dest[i], to.dir);
	free(p.copy);
	free(p.dest);
	return err;
}

static int check_caller(const struct caller *c, const struct loc *to)
{
	if (!c->privileged)
		return -EPERM;
	return to->m->ns == c->ns ? 0 : -EINVAL;
}

/* A new filesystem instance, or another mount of an existing one (3.1);
 * ms: the mount(2) flags, options for a new instance's superblock. */
int op_mount_fs(struct graph *g, const struct caller *c, struct loc at,
		struct fs *fs, const char *devname, unsigned long ms)
{
	/* a new instance nobody mounted is the plan's: gone if it fails */
	if (!fs->refs) {
		int err = fs_adopt(g, fs);
		if (err) {
			fs_put(fs);
			return err;
		}
	}
	int err = check_caller(c, &at);
	if (!err && fs == at.m->fs && strcmp(at.dir, at.m->root) == 0)
		err = -EBUSY;
	if (!err && at.file)
		err = -ENOTDIR;
	if (err)
		return err;
	if (!fs->refs)
		fs->flags = sb_flags(ms, 0, ~0u);
	struct mount *m = mount_new(g, fs, "/", devname, mount_flags(ms, 0),
				    at.m->ns);
	return m ? attach(g, m, at, false) : -ENOMEM;
}

/* bind and rbind (4.1, 4.2): the clone of from.m rooted at from.dir. */
int op_bind(struct graph *g, const struct caller *c, struct loc from,
	    struct loc to, bool recursive)
{
	if (!c->privileged)
		return -EPERM;
	if (from.m->unbindable)
		return -EINVAL;
	int err = check_caller(c, &to);
	if (err)
		return err;
	if (from.m->ns != c->ns)
		return -EINVAL;
	if (from.file != to.file)
		return -ENOTDIR;
	struct mount *t = copy_tree(g, from.m, from.dir,
				    recursive ? CL_RECURSIVE : 0, to.m->ns);
	if (!t)
		return -ENOMEM;
	t->file = from.file;
	return attach(g, t, to, false);
}

static bool tree_has_unbindable(struct mount *t)
{
	for (struct mount *p = t; p; p = next_in_tree(p, t))
		if (p->unbindable)
			return true;
	return false;
}

/* move (6.1), checks in the kernel's order. */
int op_move(struct graph *g, const struct caller *c, struct loc from,
	    struct loc to)
{
	struct mount *m = from.m;

	if (!c->privileged)
		return -EPERM;
	if (m->ns != c->ns || !m->parent || to.m->ns != c->ns)
		return -EINVAL;
	if (is_shared(m->parent))
		return -EINVAL;
	if (strcmp(from.dir, m->root) != 0 || m->file != to.file)
		return -EINVAL;
	if (is_shared(to.m) && tree_has_unbindable(m))
		return -EINVAL;
	for (struct mount *p = to.m; p; p = p->parent)
		if (p == m)
			return -ELOOP;
	return attach(g, m, to, true);
}
