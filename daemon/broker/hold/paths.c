/* paths.c: where the kernel has a handle's mount, read once a request.
 *
 * A request asks the path of the same handle several times (its target's
 * and its source's mount is often one, fd_loc_kid(); the state's line of
 * that mount, state.c), each a readlink(2) of /proc/self/fd/N.  Between
 * those reads only the broker's own plan moves a mount the broker knows
 * of: so within one request (server.c keeps them from its start and drops
 * them at its answer), a path read is kept until a step that moves a
 * mount, or unmounts one, runs (paths_plan()), until the graph follows
 * the kernel's table, and until a request meets a stale name and starts
 * again (paths_moved()).  Nothing outlives the request: a caller's
 * rename, which the broker is never told of, is seen by the next one.  A
 * rename during the request races the reads either way; the path read
 * first is as true as one read later.
 *
 * Kept by the handle's seq and descriptor (a handle dropped and its number
 * reused by another misses); at most NPATHS, then read each time.
 */
#include <stdlib.h>
#include <string.h>
#include "broker.h"
#include "base/base.h"
#include "hold/hold.h"

enum { NPATHS = 8 };

struct pathmemo {
	bool on;               /* within a request: keep what is read */
	size_t n;
	struct kept {
		uint64_t seq;
		int fd;
		char *path;
	} v[NPATHS];
};

static void forget_at(struct pathmemo *p, size_t i)
{
	free(p->v[i].path);
	p->v[i] = p->v[--p->n];
}

/* Every path read again from here; keeping them or not as on says. */
static void paths_reset(struct broker *b, bool on)
{
	struct pathmemo *p = b->paths;
	if (!p && on && !(p = b->paths = calloc(1, sizeof *p)))
		return;        /* no memory: every path is read, as before */
	if (!p)
		return;
	while (p->n)
		forget_at(p, p->n - 1);
	p->on = on;
}

void paths_keep(struct broker *b)
{
	paths_reset(b, true);
}

void paths_drop(struct broker *b)
{
	paths_reset(b, false);
}

/* Mounts may have moved behind the broker's back: it follows the
 * kernel's table (tabserve.c), or a request starts again after a stale
 * name (resolve.c: request.c's attempts, refresh_paths()). */
void paths_moved(struct broker *b)
{
	paths_reset(b, b->paths && b->paths->on);
}

/* h's path, malloc'ed (fd_path()); NULL if the kernel has none. */
char *handle_path(const struct broker *b, const struct handle *h)
{
	struct pathmemo *p = b->paths;
	if (!p || !p->on || h->fd < 0)
		return fd_path(h->fd);
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].seq == h->seq && p->v[i].fd == h->fd)
			return strdup(p->v[i].path);
	char *path = fd_path(h->fd);
	/* -fanalyzer's leak of strdup(path): kept in p->v, freed by
	 * forget_at() when the request ends or a step moves a mount */
	if (path && p->n < NPATHS && (p->v[p->n].path = strdup(path))) {
		p->v[p->n].seq = h->seq;
		p->v[p->n++].fd = h->fd;
	}
	return path;
}

/* m's handle's path, if kept, read again when asked. */
static void forget_mount(struct broker *b, const struct mount *m)
{
	const struct handle *h = m ? handle_known(b, m) : NULL;
	struct pathmemo *p = b->paths;
	for (size_t i = 0; h && i < p->n; i++)
		if (p->v[i].seq == h->seq)
			forget_at(p, i--);
}

/* The open plan's steps, before and after they run: a move (PARK too)
 * changes the path of its mount and of every one below it, an unmount
 * that of its mount and (lazily, behind the graph) of anything still on
 * it; all are read again.  A new mount, or a copy bound the staged way
 * (copy.c), comes from the staging place: its own path changes.  A
 * remount moves nothing. */
void paths_plan(struct broker *b)
{
	struct pathmemo *p = b->paths;
	for (size_t i = 0; p && p->n && i < b->g.nsteps; i++) {
		const struct step *s = &b->g.steps[i];
		if (s->kind == STEP_NEW || s->kind == STEP_BIND)
			forget_mount(b, mount_by_id(&b->g, s->mnt));
		else if (s->kind != STEP_REMOUNT && s->kind != STEP_REMOUNT_RO)
			paths_reset(b, p->on);
	}
}
