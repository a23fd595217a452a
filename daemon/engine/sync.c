/* sync.c: the graph told what the kernel has already, outside any plan:
 * sharebrokerd's import of the mount table, its rename of directories the
 * kernel moved, its forgetting of mounts unmounted behind its back, and
 * the propagation it reads back from its state file.
 *
 * Each call runs as a plan of its own, without the checker (the kernel
 * made these changes, not mount(2) steps of ours), so that running out of
 * memory half-way leaves the graph as it was.
 */
#include <string.h>
#include "journal.h"

/* Opens a plan that no checker sees; *check keeps the switch. */
static void quiet_begin(struct graph *g, bool *check)
{
	*check = g->check;
	g->check = false;
	plan_begin(g);
}

/* Commits on success, abandons on error; then the switch is back. */
static int quiet_end(struct graph *g, bool check, int err)
{
	if (err)
		plan_abandon(g);
	else
		plan_commit(g);
	g->check = check;
	return err;
}

/* An fs no mount uses yet is the import's, freed if the import fails. */
static int adopt_fresh(struct graph *g, struct fs *fs)
{
	if (fs->refs)
		return 0;
	int err = fs_adopt(g, fs);
	if (err)
		fs_put(fs);
	return err;
}

/* The namespace's root mount: the only mount without a parent. */
int graph_set_root(struct graph *g, struct ns *ns, struct fs *fs,
		   const char *devname, unsigned flags)
{
	bool check;
	if (ns->root)
		return -EBUSY;
	quiet_begin(g, &check);
	int err = adopt_fresh(g, fs);
	struct mount *m = err ? NULL : mount_new(g, fs, "/", devname, flags, ns);
	if (!err && (!m || JSET(g, ns->root, m)))
		err = -ENOMEM;
	return quiet_end(g, check, err);
}

/* A mount the kernel already has: parent NULL makes it the namespace's
 * root.  NULL for a bad request, or out of memory (fs NULL: fs_new()
 * ran out). */
struct mount *graph_import(struct graph *g, struct ns *ns,
			   struct mount *parent, const char *mp, struct fs *fs,
			   const char *root, const char *devname,
			   unsigned flags)
{
	bool check;
	if (!fs || (parent ? !mp : ns->root != NULL))
		return NULL;
	quiet_begin(g, &check);
	int err = adopt_fresh(g, fs);
	struct mount *m = err ? NULL : mount_new(g, fs, root, devname, flags, ns);
	if (!err && !m)
		err = -ENOMEM;
	if (!err)
		err = parent ? mount_attach(g, m, parent, mp) : JSET(g, ns->root, m);
	return quiet_end(g, check, err) ? NULL : m;
}

/* A mount the kernel no longer has (unmounted behind sharebrokerd's
 * back), with its subtree, children first: each leaves its peers (its
 * slaves go to another peer or its master, as on umount) and its
 * namespace. */
int graph_forget(struct graph *g, struct mount *m)
{
	struct mount **v = NULL;
	size_t n = 0, cap = 0;
	bool check;
	int err = 0;
	for (struct mount *q = m; q && !err; q = next_in_tree(q, m))
		err = VEC_PUSH(v, n, cap, q);
	quiet_begin(g, &check);
	while (!err && n-- > 0) {
		err = change_propagation(g, v[n], LS_MS_PRIVATE);
		if (!err && v[n]->parent)
			err = mount_detach(g, v[n]);
		if (!err)
			err = mount_kill(g, v[n]);
	}
	free(v);
	return quiet_end(g, check, err);
}

/* Propagation read back from sharebrokerd's state file, for a private m,
 * inside the caller's plan (outside the graph's rules): a peer of `peer`,
 * or of a new group when shared without one; a slave of `master`, at the
 * end of its list; unbindable.  All or nothing.  A mount already in a
 * ring or a slave list (a line read twice) is -EEXIST: linking it again
 * would tie its list into a loop; what else the lines may break, the
 * caller checks (check_invariants()). */
int mount_restore(struct graph *g, struct mount *m, bool shared,
		  struct mount *peer, struct mount *master, bool unbindable)
{
	size_t mark = g->nundo;
	int err = 0;
	if ((peer && m->group) || (master && m->master) || peer == m ||
	    master == m)
		return -EEXIST;
	if (peer)
		err = JSET(g, m->group, peer->group) ?:
		      jlist_add_tail(g, &m->share, &peer->share);
	else if (shared)
		err = set_shared(g, m);
	if (!err && master)
		err = JSET(g, m->master, master) ?:
		      jlist_add_tail(g, &m->slave, &master->slaves);
	if (!err)
		err = JSET(g, m->unbindable, unbindable);
	if (err)
		journal_rollback(g, mark);
	return err;
}

int graph_relocate(struct graph *g, struct mount *m, struct mount *parent,
		   const char *mp)
{
	bool check;
	quiet_begin(g, &check);
	int err = mount_detach(g, m);
	if (!err)
		err = mount_attach(g, m, parent, mp);
	return quiet_end(g, check, err);
}

/* The creation order of the kernel, whose table lists mounts in it (6.8
 * and later: by unique id), for the mounts just imported: v holds every
 * mount of the graph in the kernel's order.  The import attaches a
 * parent before its children, so a mount moved under a newer one came
 * after it; later mounts are made in order and need no such help.
 * Outside any plan; nothing to allocate, so nothing can fail but a v
 * that is not the whole graph (-EINVAL, nothing changed). */
int graph_reorder(struct graph *g, struct mount **v, size_t n)
{
	size_t live = 0;
	for (struct list *l = g->order.next; l != &g->order; l = l->next)
		live++;
	if (g->planning || live != n)
		return -EINVAL;
	list_init(&g->order);
	for (size_t i = 0; i < n; i++) {
		struct list *l = &v[i]->order;
		l->prev = g->order.prev;
		l->next = &g->order;
		g->order.prev->next = l;
		g->order.prev = l;
		v[i]->seq = i + 1;
	}
	g->seq = n;
	return 0;
}

/* The order of parent's list of children, as sharebrokerd saved it: the
 * kernel's order, in which an rbind copies them, which is the order of
 * attachment (a mount tucked under another, or moved, is attached after
 * mounts made later), so no table shows it.  v[0..n), children of
 * parent, go to the end of its list in that order; all or nothing. */
int graph_child_order(struct graph *g, struct mount *parent,
		      struct mount **v, size_t n)
{
	bool check;
	int err = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i]->parent != parent)
			return -EINVAL;
	quiet_begin(g, &check);
	for (size_t i = 0; i < n && !err; i++)
		err = jlist_del_init(g, &v[i]->child) ?:
		      jlist_add_tail(g, &v[i]->child, &parent->mounts);
	return quiet_end(g, check, err);
}

/* A subtree that the kernel holds as a namespace of its own:
 * sharebrokerd's copies (issue 11) look like any mounts in its table, and
 * after a restart the import takes them for its own.  m, taken off its
 * parent, becomes the root of namespace id (the number it had, so that
 * mnt:[N] stays), with every mount under it; later namespaces are
 * numbered after it.  -EEXIST when id is taken, -EINVAL when m is some
 * namespace's root already. */
int graph_adopt_ns(struct graph *g, struct mount *m, unsigned id,
		   struct ns **out)
{
	bool check;
	unsigned next = g->next_ns > id ? g->next_ns : id + 1;
	struct ns *ns = NULL, *old = m->ns;
	for (struct list *l = g->nss.next; l != &g->nss; l = l->next)
		if (list_entry(l, struct ns, link)->id == id)
			return -EEXIST;
	if (!m->parent)
		return -EINVAL;
	quiet_begin(g, &check);
	int err = JSET(g, g->next_ns, id);
	if (!err && !(ns = ns_new(g)))
		err = -ENOMEM;
	err = err ?: JSET(g, g->next_ns, next) ?: mount_detach(g, m) ?:
	      jset_str(g, &m->mp, "/") ?: JSET(g, ns->root, m);
	for (struct mount *q = m; q && !err; q = next_in_tree(q, m))
		err = JSET(g, q->ns, ns) ?: JSET(g, old->count, old->count - 1) ?:
		      JSET(g, ns->count, ns->count + 1);
	if (!err)
		*out = ns;
	return quiet_end(g, check, err);
}
