/* pivot.c: pivot_root(2) (semantics.md 7).  Never propagated (3.4). */
#include <errno.h>
#include "journal.h"

/* pivot_root(new, put_old) for a caller; the checks in the kernel's order.
 * On success the caller's root becomes new's mount root. */
int op_pivot_root(struct graph *g, const struct caller *c, struct loc new,
		  struct loc old)
{
	struct mount *root = c->root.m, *nm = new.m, *om = old.m;
	struct mount *root_parent = root->parent;

	if (!c->privileged)
		return -EPERM;
	if (new.file || old.file)
		return -ENOTDIR;
	if (is_shared(om) || (nm->parent && is_shared(nm->parent)) ||
	    (root_parent && is_shared(root_parent)))
		return -EINVAL;
	if (root->ns != c->ns || nm->ns != c->ns)
		return -EINVAL;
	if (nm == root || om == root)
		return -EBUSY;
	if (strcmp(c->root.dir, root->root) != 0 || !root_parent)
		return -EINVAL;
	if (strcmp(new.dir, nm->root) != 0 || !nm->parent)
		return -EINVAL;
	if (!reaches(om, old.dir, mount_root(nm)) ||
	    !reaches(nm, new.dir, c->root))
		return -EINVAL;

	/* root's mountpoint string is replaced (kept by the journal until
	 * commit) when root moves: nm takes the old one's name */
	const char *root_mp = root->mp;
	return plan_step(g, STEP_PARK, nm, NULL, NULL, NULL, 0) ?:
	       mount_detach(g, nm) ?: mount_detach(g, root) ?:
	       mount_attach(g, root, om, old.dir) ?:
	       plan_step(g, STEP_MOVE, root, NULL, om, old.dir, 0) ?:
	       mount_attach(g, nm, root_parent, root_mp) ?:
	       plan_step(g, STEP_MOVE, nm, NULL, root_parent, root_mp, 0);
}
