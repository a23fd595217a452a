/* attach.c: new mounts, bind, rbind and move: the attach procedure of
 * semantics.md 3.2 with the propagated copies of 3.3.
 */
#include <errno.h>
#include <stdlib.h>
#include "journal.h"

/* A receiver and how its copy relates to an earlier copy (3.3). */
struct recv {
	struct mount *r;
	int from;              /* copy to clone from: index, or -1 for T */
	int flags;             /* CL_MAKE_SHARED: peer; CL_SLAVE[|MAKE_SHARED] */
};

struct recvs {
	struct recv *v;
	size_t n, cap;
	unsigned stamp;
	const char *x;
	uint64_t seq0;         /* mounts made after this are this operation's */
};

static int push(struct recvs *rv, struct mount *r, int from, int flags)
{
	if (rv->n == rv->cap) {
		rv->cap = rv->cap ? 2 * rv->cap : 16;
		rv->v = realloc(rv->v, rv->cap * sizeof *rv->v);
		if (!rv->v)
			abort();
	}
	rv->v[rv->n] = (struct recv){ r, from, flags };
	r->recv = (int)rv->n;
	return (int)rv->n++;
}

/* A receiver gets a copy only if the mountpoint is visible in it, and never
 * if this operation made it (3.2.4). */
static bool sees(const struct recvs *rv, const struct mount *r)
{
	return r->seq <= rv->seq0 && dir_under(rv->x, r->root);
}

static void visit(struct recvs *rv, struct mount *s, int anc);

/* Every slave of every member of first's group, members from first on.
 * A slave's copy follows the copy on its own master when there is one,
 * else anc, the copy of the nearest node above that got one. */
static void visit_slaves(struct recvs *rv, struct mount *first, int anc)
{
	struct mount *m = first;
	do {
		int from = m->recv >= 0 ? m->recv : anc;
		for (struct list *l = m->slaves.next; l != &m->slaves; l = l->next)
			visit(rv, list_entry(l, struct mount, slave), from);
		m = next_peer(m);
	} while (m != first);
}

static void mark_group(struct recvs *rv, struct mount *first)
{
	struct mount *m = first;
	do {
		m->stamp = rv->stamp;
		m->recv = -1;
		m = next_peer(m);
	} while (m != first);
}

/* Node s of the propagation tree: a pure slave, or a group entered at s.
 * anc is the copy of its nearest ancestor node that got one. */
static void visit(struct recvs *rv, struct mount *s, int anc)
{
	if (!is_shared(s)) {
		if (sees(rv, s))
			push(rv, s, anc, CL_SLAVE);
		return;
	}
	if (s->stamp == rv->stamp)
		return;
	mark_group(rv, s);
	int first = -1, last = -1;
	struct mount *m = s;
	do {
		if (!sees(rv, m))
			;
		else if (first < 0)
			first = last = push(rv, m, anc, CL_SLAVE | CL_MAKE_SHARED);
		else
			last = push(rv, m, last, CL_MAKE_SHARED);
		m = next_peer(m);
	} while (m != s);
	visit_slaves(rv, s, first >= 0 ? first : anc);
}

/* The receivers of an event at (d, x), in the kernel's order (App. A). */
static void collect(struct graph *g, struct recvs *rv, struct mount *d,
		    const char *x)
{
	rv->stamp = ++g->stamp;
	rv->x = x;
	rv->seq0 = g->seq0;
	mark_group(rv, d);
	int last = -1;   /* each peer copy is cloned from the one before */
	for (struct mount *n = next_peer(d); n != d; n = next_peer(n))
		if (sees(rv, n))
			last = push(rv, n, last, CL_MAKE_SHARED);
	visit_slaves(rv, d, -1);
}

static unsigned tree_size(struct mount *t)
{
	unsigned n = 0;
	for (struct mount *p = t; p; p = next_in_tree(p, t))
		n++;
	return n;
}

/* fs.mount-max (9): the tree in d's namespace, a copy in each receiver's. */
static int check_count(struct graph *g, const struct recvs *rv,
		       struct mount *t, struct mount *d, bool moving)
{
	unsigned size = tree_size(t);
	struct list *l;
	for (l = g->nss.next; l != &g->nss; l = l->next)
		list_entry(l, struct ns, link)->pending = 0;
	if (!moving)
		d->ns->pending += size;
	for (size_t i = 0; i < rv->n; i++)
		rv->v[i].r->ns->pending += size;
	for (l = g->nss.next; l != &g->nss; l = l->next) {
		struct ns *ns = list_entry(l, struct ns, link);
		if (ns->pending && ns->count + ns->pending > g->max_mounts)
			return -ENOSPC;
	}
	return 0;
}

/* Attach a planned tree at (parent, mp): one kernel step per mount. */
static void graft_new(struct graph *g, struct mount *t, struct mount *parent,
		      const char *mp)
{
	mount_attach(g, t, parent, mp);
	for (struct mount *p = t; p; p = next_in_tree(p, t)) {
		plan_step(g, p->src ? STEP_BIND : STEP_NEW, p, p->src,
			  p->parent, p->mp, 0);
		p->src = NULL;
	}
}

/* A copy lands at (r, x); whatever r already has there is tucked on top
 * of the copy's topmost overmount (3.2.6). */
static void place_copy(struct graph *g, struct mount *c, struct mount *r,
		       const char *x)
{
	struct mount *q = mount_at(g, r, x);
	if (q) {
		plan_step(g, STEP_PARK, q, NULL, NULL, NULL, 0);
		mount_detach(g, q);
	}
	graft_new(g, c, r, x);
	if (q) {
		struct mount *top = topmost(g, c);
		mount_attach(g, q, top, top->root);
		plan_step(g, STEP_MOVE, q, NULL, top, top->root, 0);
	}
}

/* The attach procedure (3.2): t is a planned tree, or for a move the
 * attached tree being moved. */
static int attach(struct graph *g, struct mount *t, struct loc to, bool moving)
{
	struct recvs rv = { 0 };
	struct mount *d = to.m, **copy = NULL;
	int err;

	if (is_shared(d))
		collect(g, &rv, d, to.dir);
	err = check_count(g, &rv, t, d, moving);
	if (err)
		goto out;
	if (is_shared(d))
		for (struct mount *p = t; p; p = next_in_tree(p, t))
			set_shared(g, p);
	copy = calloc(rv.n + 1, sizeof *copy);
	if (!copy)
		abort();
	for (size_t i = 0; i < rv.n; i++) {
		struct mount *from = rv.v[i].from < 0 ? t : copy[rv.v[i].from];
		copy[i] = copy_tree(g, from, from->root,
				    rv.v[i].flags | CL_RECURSIVE, rv.v[i].r->ns);
	}
	if (moving) {
		mount_detach(g, t);
		mount_attach(g, t, d, to.dir);
		plan_step(g, STEP_MOVE, t, NULL, d, to.dir, 0);
	} else {
		graft_new(g, t, d, to.dir);
	}
	for (size_t i = 0; i < rv.n; i++)
		place_copy(g, copy[i], rv.v[i].r, to.dir);
out:
	free(copy);
	free(rv.v);
	return err;
}

static int check_caller(const struct caller *c, const struct loc *to)
{
	if (!c->privileged)
		return -EPERM;
	return to->m->ns == c->ns ? 0 : -EINVAL;
}

/* A new filesystem instance, or another mount of an existing one (3.1). */
int op_mount_fs(struct graph *g, const struct caller *c, struct loc at,
		struct fs *fs, const char *devname, unsigned flags)
{
	int err = check_caller(c, &at);
	if (!err && fs == at.m->fs && strcmp(at.dir, at.m->root) == 0)
		err = -EBUSY;
	if (!err && at.file)
		err = -ENOTDIR;
	if (err) {
		if (!fs->refs) {
			free(fs->type);
			free(fs->opts);
			free(fs);
		}
		return err;
	}
	struct mount *m = mount_new(g, fs, "/", devname, flags, at.m->ns);
	return attach(g, m, at, false);
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
