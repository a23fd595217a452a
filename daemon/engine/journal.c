/* journal.c: the undo journal of an open plan.  Each change to the graph
 * is recorded before it is made; plan_abandon() plays the records back in
 * reverse, plan_commit() drops them, running the actions kept for commit
 * (freeing an old string, giving back an id).
 *
 * A record knows nothing of mounts: what the graph needs undone beyond a
 * plain write is a function the graph hands in (jcall), which keeps this
 * file below graph.c.
 */
#include <string.h>
#include "journal.h"

enum undo_kind { U_WRITE, U_STR, U_CALL };

struct undo {
	enum undo_kind kind;
	void *slot;            /* U_WRITE, U_STR: where */
	size_t size;
	unsigned char old[sizeof(uint64_t)];
	char *str;             /* U_STR: the old string */
	jfn undo, commit;      /* U_CALL, either may be NULL */
	void *p;
	unsigned id;
};

/* Room for n more records, so that a primitive of several writes is all
 * or nothing. */
int jreserve(struct graph *g, size_t n)
{
	if (!g->planning)
		return 0;
	return VEC_RESERVE(g->undo, g->capundo, g->nundo + n);
}

static struct undo *record(struct graph *g, enum undo_kind kind)
{
	if (jreserve(g, 1))
		return NULL;
	struct undo *u = &g->undo[g->nundo++];
	memset(u, 0, sizeof *u);
	u->kind = kind;
	return u;
}

int jwrite(struct graph *g, void *slot, const void *val, size_t size)
{
	if (g->planning) {
		struct undo *u = record(g, U_WRITE);
		if (!u)
			return -ENOMEM;
		u->slot = slot;
		u->size = size;
		memcpy(u->old, slot, size);
	}
	memcpy(slot, val, size);
	return 0;
}

int jset_str(struct graph *g, char **slot, const char *val)
{
	char *s = eng_strdup(val);
	struct undo *u = s && g->planning ? record(g, U_STR) : NULL;
	if (!s || (g->planning && !u)) {
		free(s);
		return -ENOMEM;
	}
	if (u) {
		u->slot = slot;
		u->str = *slot;
	} else {
		free(*slot);
	}
	*slot = s;
	return 0;
}

/* What the graph undoes or finishes itself: undo(g, p, id) on abandon,
 * commit(g, p, id) on commit (at once outside a plan). */
int jcall(struct graph *g, jfn undo, jfn commit, void *p, unsigned id)
{
	if (!g->planning) {
		if (commit)
			commit(g, p, id);
		return 0;
	}
	struct undo *u = record(g, U_CALL);
	if (!u)
		return -ENOMEM;
	u->undo = undo;
	u->commit = commit;
	u->p = p;
	u->id = id;
	return 0;
}

static int jlink(struct graph *g, struct list *n, struct list *prev,
		 struct list *next)
{
	if (jreserve(g, 4))
		return -ENOMEM;
	JSET(g, next->prev, n);
	JSET(g, n->next, next);
	JSET(g, n->prev, prev);
	JSET(g, prev->next, n);
	return 0;
}

int jlist_add(struct graph *g, struct list *n, struct list *after)
{
	return jlink(g, n, after, after->next);
}

int jlist_add_tail(struct graph *g, struct list *n, struct list *head)
{
	return jlink(g, n, head->prev, head);
}

int jlist_del_init(struct graph *g, struct list *n)
{
	struct list *prev = n->prev, *next = n->next;
	if (jreserve(g, 4))
		return -ENOMEM;
	JSET(g, prev->next, next);
	JSET(g, next->prev, prev);
	JSET(g, n->next, n);
	JSET(g, n->prev, n);
	return 0;
}

/* Every place of the graph the open plan wrote, oldest first: what a
 * caller needs to learn which objects the plan changed (the broker saves
 * only those, state.c).  A place written twice is told twice. */
void plan_writes(const struct graph *g, void (*fn)(void *ctx, void *slot),
		 void *ctx)
{
	for (size_t i = 0; i < g->nundo; i++)
		if (g->undo[i].kind != U_CALL)
			fn(ctx, g->undo[i].slot);
}

static void undo_one(struct graph *g, struct undo *u)
{
	switch (u->kind) {
	case U_WRITE:
		memcpy(u->slot, u->old, u->size);
		break;
	case U_STR:
		free(*(char **)u->slot);
		*(char **)u->slot = u->str;
		break;
	case U_CALL:
		if (u->undo)
			u->undo(g, u->p, u->id);
		break;
	}
}

/* Undo every record after mark: the graph as it was when nundo was mark. */
void journal_rollback(struct graph *g, size_t mark)
{
	while (g->nundo > mark)
		undo_one(g, &g->undo[--g->nundo]);
}

void journal_commit(struct graph *g)
{
	for (size_t i = 0; i < g->nundo; i++) {
		struct undo *u = &g->undo[i];
		if (u->kind == U_STR)
			free(u->str);
		else if (u->kind == U_CALL && u->commit)
			u->commit(g, u->p, u->id);
	}
	g->nundo = 0;
}
