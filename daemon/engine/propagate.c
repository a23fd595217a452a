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

/* Pre-order walk of the mount tree below top, children in attach order. */
struct mount *next_in_tree(struct mount *m, struct mount *top)
{
	if (!list_empty(&m->mounts))
		return list_entry(m->mounts.next, struct mount, child);
	for (;;) {
		if (m == top)
			return NULL;
		if (m->child.next != &m->parent->mounts)
			return list_entry(m->child.next, struct mount, child);
		m = m->parent;
	}
}

void set_shared(struct graph *g, struct mount *m)
{
	if (!m->group)
		JSET(g, m->group, group_new(g));
	JSET(g, m->unbindable, false);
}

/* Propagation read back from sharebrokerd's state file, for a private m
 * (outside the graph's rules, inside a plan): a peer of `peer`, or of a
 * new group when shared without one; a slave of `master`, at the end of
 * its list; unbindable. */
void mount_restore(struct graph *g, struct mount *m, bool shared,
		   struct mount *peer, struct mount *master, bool unbindable)
{
	if (peer) {
		JSET(g, m->group, peer->group);
		jlist_add_tail(g, &m->share, &peer->share);
	} else if (shared) {
		set_shared(g, m);
	}
	if (master) {
		JSET(g, m->master, master);
		jlist_add_tail(g, &m->slave, &master->slaves);
	}
	JSET(g, m->unbindable, unbindable);
}

/* m's slaves now follow to, or nobody: they keep their order and go to
 * the head of to's list (6.18's transfer_propagation). */
void transfer_slaves(struct graph *g, struct mount *m, struct mount *to)
{
	for (struct list *l = m->slaves.next; l != &m->slaves; l = l->next)
		JSET(g, list_entry(l, struct mount, slave)->master, to);
	while (!list_empty(&m->slaves)) {
		struct list *l = m->slaves.prev;
		jlist_del_init(g, l);
		if (to)
			jlist_add(g, l, &to->slaves);
	}
}

/* The state change of one mount (2.2); type is one PROP_* bit.  A mount
 * leaving its group follows the next peer, or its master when it was the
 * last member, and hands its slaves to the same mount. */
void change_propagation(struct graph *g, struct mount *m, int type)
{
	struct mount *to = m->master;

	if (type == LS_MS_SHARED) {
		set_shared(g, m);
		return;
	}
	if (is_shared(m)) {
		if (list_empty(&m->share)) {
			group_release(g, m->group);
		} else {
			to = next_peer(m);
			jlist_del_init(g, &m->share);
		}
		JSET(g, m->group, 0);
		transfer_slaves(g, m, to);
	}
	jlist_del_init(g, &m->slave);
	if (type == LS_MS_SLAVE) {
		JSET(g, m->master, to);
		if (to)
			jlist_add(g, &m->slave, &to->slaves);
	} else {
		JSET(g, m->master, NULL);
		JSET(g, m->unbindable, type == LS_MS_UNBINDABLE);
	}
}

/* One clone of old rooted at root (4.2's table; 3.3 for the copies). */
static struct mount *clone_mount(struct graph *g, struct mount *old,
				 const char *root, int flags, struct ns *ns)
{
	struct mount *m = mount_new(g, old->fs, root, old->devname, old->flags, ns);
	m->src = old;
	m->file = old->file && strcmp(root, old->root) == 0;
	if (flags & CL_SLAVE) {
		jlist_add(g, &m->slave, &old->slaves);
		m->master = old;
	} else {
		m->group = old->group;
		if ((flags & CL_MAKE_SHARED) || is_shared(old))
			jlist_add(g, &m->share, &old->share);
		if (old->master)
			jlist_add(g, &m->slave, &old->slave);
		m->master = old->master;
	}
	/* the 6.18 oracle copies no unbindable bit, not even into a new
	 * namespace (semantics.md 8) */
	if (flags & CL_MAKE_SHARED)
		set_shared(g, m);
	return m;
}

/* Clone src's tree (or only src, without CL_RECURSIVE), rooted at root:
 * submounts outside root are left out, unbindable ones pruned with what
 * is under them unless CL_COPY_UNBINDABLE (4.2). */
struct mount *copy_tree(struct graph *g, struct mount *src, const char *root,
			int flags, struct ns *ns)
{
	struct mount *top = clone_mount(g, src, root, flags, ns);
	if (!(flags & CL_RECURSIVE))
		return top;
	struct mount *s = src, *dst = top;
	for (struct mount *p = next_in_tree(src, src); p; ) {
		if ((p->parent == src && !dir_under(p->mp, root)) ||
		    (p->unbindable && !(flags & CL_COPY_UNBINDABLE))) {
			struct mount *q = p;   /* skip p's whole subtree */
			while (q != src && q->child.next == &q->parent->mounts)
				q = q->parent;
			p = q == src ? NULL : list_entry(q->child.next,
							 struct mount, child);
			continue;
		}
		while (s != p->parent) {   /* climb back to p's parent */
			s = s->parent;
			dst = dst->parent;
		}
		struct mount *c = clone_mount(g, p, p->root, flags, ns);
		mount_attach(g, c, dst, p->mp);
		s = p;
		dst = c;
		p = next_in_tree(p, src);
	}
	return top;
}
