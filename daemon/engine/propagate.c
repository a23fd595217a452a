/* propagate.c: peer rings, slave lists, and the walks over them
 * (semantics.md sections 0, 2.2 and 4.2; the shape of the kernel's pnode.c).
 */
#include "journal.h"

struct mount *next_peer(const struct mount *m)
{
	return list_entry(m->share.next, struct mount, share);
}

static struct mount *first_slave(const struct mount *m)
{
	return list_entry(m->slaves.next, struct mount, slave);
}

static struct mount *next_slave(const struct mount *m)
{
	return list_entry(m->slave.next, struct mount, slave);
}

bool is_shared(const struct mount *m)
{
	return m->group != 0;
}

static void group_put(struct graph *g, void *p, unsigned id)
{
	(void)p;
	id_put(&g->group_ids, id);
}

/* Group ids are taken at once and given back only at commit: an operation
 * never frees and then allocates, so smallest-free stays exact (1.3). */
int group_new(struct graph *g, unsigned *id)
{
	unsigned got;
	if (jreserve(g, 1) || id_get(&g->group_ids, &got))
		return -ENOMEM;
	jcall(g, group_put, NULL, NULL, got);
	*id = got;
	return 0;
}

int group_release(struct graph *g, unsigned id)
{
	return jcall(g, NULL, group_put, NULL, id);
}

/* Pre-order walk of origin's propagation tree: its peers, then slaves,
 * slaves of slaves...  Returns the mount after m, NULL at the end. */
struct mount *propagation_next(struct mount *m, struct mount *origin)
{
	if (!list_empty(&m->slaves))
		return first_slave(m);
	for (;;) {
		struct mount *master = m->master;
		if (master == origin->master) {
			struct mount *next = next_peer(m);
			return next == origin ? NULL : next;
		}
		if (m->slave.next != &master->slaves)
			return next_slave(m);
		m = master;
	}
}

/* The next peer group (or pure slave) of origin's propagation tree after
 * m's, depth first (App. A).  Peer groups lie contiguous in slave lists;
 * mounts made by the running operation are not descended into. */
struct mount *next_group(struct mount *m, struct mount *origin, uint64_t seq0)
{
	for (;;) {
		for (;;) {
			if (m->seq <= seq0 && !list_empty(&m->slaves))
				return first_slave(m);
			struct mount *next = next_peer(m);
			if (m->group == origin->group) {
				if (next == origin)
					return NULL;
			} else if (m->slave.next != &next->slave) {
				break;
			}
			m = next;
		}
		for (;;) {            /* m is the last peer of its group */
			struct mount *master = m->master;
			if (m->slave.next != &master->slaves)
				return next_slave(m);
			m = next_peer(master);
			if (master->group == origin->group ||
			    master->slave.next == &m->slave)
				break;
			m = master;
		}
		if (m == origin)
			return NULL;
	}
}

int set_shared(struct graph *g, struct mount *m)
{
	unsigned id;
	if (!m->group) {
		int err = group_new(g, &id) ?: JSET(g, m->group, id);
		if (err)
			return err;
	}
	return JSET(g, m->unbindable, false);
}

/* m's slaves now follow to, or nobody: they keep their order and go to
 * the head of to's list (6.18's transfer_propagation). */
int transfer_slaves(struct graph *g, struct mount *m, struct mount *to)
{
	int err = 0;
	for (struct list *l = m->slaves.next; !err && l != &m->slaves;
	     l = l->next)
		err = JSET(g, list_entry(l, struct mount, slave)->master, to);
	while (!err && !list_empty(&m->slaves)) {
		struct list *l = m->slaves.prev;
		err = jlist_del_init(g, l);
		if (!err && to)
			err = jlist_add(g, l, &to->slaves);
	}
	return err;
}

/* The state change of one mount (2.2); type is one PROP_* bit.  A mount
 * leaving its group follows the next peer, or its master when it was the
 * last member, and hands its slaves to the same mount. */
int change_propagation(struct graph *g, struct mount *m, int type)
{
	struct mount *to = m->master;
	int err = 0;

	if (type == LS_MS_SHARED)
		return set_shared(g, m);
	if (is_shared(m)) {
		if (list_empty(&m->share)) {
			err = group_release(g, m->group);
		} else {
			to = next_peer(m);
			err = jlist_del_init(g, &m->share);
		}
		err = err ?: JSET(g, m->group, 0) ?: transfer_slaves(g, m, to);
	}
	err = err ?: jlist_del_init(g, &m->slave);
	if (err)
		return err;
	if (type == LS_MS_SLAVE)
		return JSET(g, m->master, to) ?:
		       (to ? jlist_add(g, &m->slave, &to->slaves) : 0);
	return JSET(g, m->master, NULL) ?:
	       JSET(g, m->unbindable, type == LS_MS_UNBINDABLE);
}

/* One clone of old rooted at root (4.2's table; 3.3 for the copies). */
static struct mount *clone_mount(struct graph *g, struct mount *old,
				 const char *root, int flags, struct ns *ns)
{
	struct mount *m = mount_new(g, old->fs, root, old->devname, old->flags, ns);
	int err = 0;
	if (!m)
		return NULL;
	m->src = old;
	m->file = old->file && strcmp(root, old->root) == 0;
	if (flags & CL_SLAVE) {
		err = jlist_add(g, &m->slave, &old->slaves);
		m->master = old;
	} else {
		m->group = old->group;
		if ((flags & CL_MAKE_SHARED) || is_shared(old))
			err = jlist_add(g, &m->share, &old->share);
		if (!err && old->master)
			err = jlist_add(g, &m->slave, &old->slave);
		m->master = old->master;
	}
	/* the 6.18 oracle copies no unbindable bit, not even into a new
	 * namespace (semantics.md 8) */
	if (!err && (flags & CL_MAKE_SHARED))
		err = set_shared(g, m);
	return err ? NULL : m;
}

/* The mount after p's whole subtree in the walk below src, or NULL. */
static struct mount *skip_subtree(struct mount *p, struct mount *src)
{
	while (p != src && p->child.next == &p->parent->mounts)
		p = p->parent;
	return p == src ? NULL : list_entry(p->child.next, struct mount, child);
}

/* Clone src's tree (or only src, without CL_RECURSIVE), rooted at root:
 * submounts outside root are left out, unbindable ones pruned with what
 * is under them unless CL_COPY_UNBINDABLE (4.2).  NULL: out of memory. */
struct mount *copy_tree(struct graph *g, struct mount *src, const char *root,
			int flags, struct ns *ns)
{
	return copy_tree_skip(g, src, root, flags, ns, NULL, NULL);
}

/* The same, leaving out the submounts skip() names, with what is under
 * them (op_copy_view()). */
struct mount *copy_tree_skip(struct graph *g, struct mount *src,
			     const char *root, int flags, struct ns *ns,
			     busy_fn skip, void *ctx)
{
	struct mount *top = clone_mount(g, src, root, flags, ns);
	if (!top || !(flags & CL_RECURSIVE))
		return top;
	struct mount *s = src, *dst = top;
	for (struct mount *p = next_in_tree(src, src); p; ) {
		if ((p->parent == src && !dir_under(p->mp, root)) ||
		    (p->unbindable && !(flags & CL_COPY_UNBINDABLE)) ||
		    (skip && skip(ctx, p))) {
			p = skip_subtree(p, src);
			continue;
		}
		while (s != p->parent) {   /* climb back to p's parent */
			s = s->parent;
			dst = dst->parent;
		}
		struct mount *c = clone_mount(g, p, p->root, flags, ns);
		if (!c || mount_attach(g, c, dst, p->mp))
			return NULL;
		s = p;
		dst = c;
		p = next_in_tree(p, src);
	}
	return top;
}
