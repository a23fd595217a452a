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

/* A remaining peer to follow: one with the same root if there is one. */
static struct mount *peer_to_follow(struct mount *m)
{
	for (struct mount *p = next_peer(m); p != m; p = next_peer(p))
		if (strcmp(p->root, m->root) == 0)
			return p;
	return next_peer(m);
}

/* detach-from-group (2.2): m leaves its peer group; its slaves are handed
 * to the mount m now follows, or lose their master when there is none. */
static void make_slave(struct graph *g, struct mount *m)
{
	struct mount *master;

	if (list_empty(&m->share)) {
		if (is_shared(m)) {
			group_release(g, m->group);
			JSET(g, m->group, 0);
		}
		master = m->master;
		if (!master) {
			while (!list_empty(&m->slaves)) {
				struct mount *s = first_slave(m);
				jlist_del_init(g, &s->slave);
				JSET(g, s->master, NULL);
			}
			return;
		}
	} else {
		master = peer_to_follow(m);
		jlist_del_init(g, &m->share);
		JSET(g, m->group, 0);
	}
	for (struct list *l = m->slaves.next; l != &m->slaves; l = l->next)
		JSET(g, list_entry(l, struct mount, slave)->master, master);
	jlist_del_init(g, &m->slave);
	jlist_add(g, &m->slave, &master->slaves);
	while (!list_empty(&m->slaves)) {    /* hand over, in order, at the tail */
		struct list *l = m->slaves.next;
		jlist_del_init(g, l);
		jlist_add_tail(g, l, &master->slaves);
	}
	JSET(g, m->master, master);
}

/* The state change of one mount (2.2); type is one PROP_* bit. */
void change_propagation(struct graph *g, struct mount *m, int type)
{
	if (type == PROP_SHARED) {
		set_shared(g, m);
		return;
	}
	make_slave(g, m);
	if (type != PROP_SLAVE) {
		jlist_del_init(g, &m->slave);
		JSET(g, m->master, NULL);
		JSET(g, m->unbindable, type == PROP_UNBINDABLE);
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
