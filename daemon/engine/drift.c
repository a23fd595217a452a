/* drift.c: the graph follows what the kernel did behind the broker's back
 * (a static binary, a tool run without the shim): here, a mount moved.
 * graph_import() and graph_forget() (graph.c) are the mounts made and
 * removed.  Outside any plan, as the kernel's own change was: on a legacy
 * kernel a move propagates nothing and changes no mount's peers, master
 * or marks, so neither does this. */
#include "engine.h"
#include "journal.h"

void graph_relocate(struct graph *g, struct mount *m, struct mount *parent,
		    const char *mp)
{
	bool check = g->check;
	g->check = false;
	plan_begin(g);
	mount_detach(g, m);
	mount_attach(g, m, parent, mp);
	plan_commit(g);
	g->check = check;
}
