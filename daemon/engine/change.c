/* change.c: propagation type changes (semantics.md 2) and namespace
 * copies (8).  Neither touches the kernel's table: no steps but for the
 * copy's binds.
 */
#include <errno.h>
#include "journal.h"

static int one_type(int flags)
{
	int t = flags & ~(LS_MS_REC | LS_MS_SILENT);
	if (t == LS_MS_SHARED || t == LS_MS_SLAVE || t == LS_MS_PRIVATE ||
	    t == LS_MS_UNBINDABLE)
		return t;
	return 0;
}

/* mount --make-[r]shared|slave|private|unbindable (2.1, 2.4). */
int op_change(struct graph *g, const struct caller *c, struct loc at, int flags)
{
	struct mount *m = at.m;
	int type = one_type(flags);
	bool rec = flags & LS_MS_REC;

	if (!c->privileged)
		return -EPERM;
	if (strcmp(at.dir, m->root) != 0 || !type)
		return -EINVAL;
	if (m->ns != c->ns)
		return -EINVAL;
	int err = 0;
	/* rshared takes every missing group id first, in pre-order */
	if (type == LS_MS_SHARED)
		for (struct mount *p = m; p && !err;
		     p = rec ? next_in_tree(p, m) : NULL)
			err = set_shared(g, p);
	for (struct mount *p = m; p && !err; p = rec ? next_in_tree(p, m) : NULL)
		err = change_propagation(g, p, type);
	return err;
}

/* clone(CLONE_NEWNS) within one user namespace: every mount copied, peers
 * joining the original's groups, slaves following the same masters. */
int op_copy_ns(struct graph *g, const struct caller *c, struct ns **out)
{
	if (!c->privileged)
		return -EPERM;
	struct ns *ns = ns_new(g);
	struct mount *old = c->ns->root;
	if (!ns || !(ns->root = copy_tree(g, old, old->root,
					  CL_RECURSIVE | CL_COPY_UNBINDABLE, ns)))
		return -ENOMEM;
	int err = plan_tree(g, ns->root);
	if (!err)
		*out = ns;
	return err;
}

/* The same copy as far as the caller can tell (issue 11): the mount its
 * root is on, whole, and what is mounted under its root; mounts skip()
 * names (ones the broker cannot reach) are left out with their subtrees.
 * Nothing the caller sees or could reach differs, nor how propagation
 * reaches what it sees: the mounts left out are outside its root.  The
 * parent of that mount is copied too, alone (unless skip() names it), as
 * the copy's root: pivot_root needs the caller's root mount to have one,
 * as it has in the kernel's copy.  *at: the copy of the caller's root. */
int op_copy_view(struct graph *g, const struct caller *c, busy_fn skip,
		 void *ctx, struct ns **out, struct loc *at)
{
	if (!c->privileged)
		return -EPERM;
	struct ns *ns = ns_new(g);
	struct mount *top = c->root.m, *p = top->parent, *t;
	enum { FLAGS = CL_RECURSIVE | CL_COPY_UNBINDABLE };
	if (p && skip(ctx, p))
		p = NULL;
	if (!ns || (p && !(ns->root = copy_tree(g, p, p->root,
						FLAGS & ~CL_RECURSIVE, ns))) ||
	    !(t = copy_tree_skip(g, top, c->root.dir, FLAGS, ns, skip, ctx)) ||
	    jset_str(g, &t->root, top->root) ||
	    (p && mount_attach(g, t, ns->root, top->mp)))
		return -ENOMEM;
	if (!p)
		ns->root = t;
	int err = plan_tree(g, ns->root);
	if (!err) {
		*out = ns;
		*at = (struct loc){ t, c->root.dir, c->root.file };
	}
	return err;
}
