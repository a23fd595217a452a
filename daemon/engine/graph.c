/* graph.c: the mount graph's objects, their identities and the undo journal.
 *
 * Ownership: graph.by_id owns the mounts, graph.nss the namespaces; a
 * filesystem is owned by the mounts that use it (refs).  Peer rings, slave
 * lists and child lists link without owning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "journal.h"

/* Room for element n of a growing array of size-byte elements: the
 * array, reallocated if it was full. */
void *grow(void *v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? 2 * *cap : 16;
	v = realloc(v, *cap * size);
	if (!v)
		abort();
	return v;
}

/* ---- smallest-free id allocation (semantics.md 1.3, 1.4) ---- */

static void heap_push(struct idpool *p, unsigned id)
{
	size_t cap = p->cap;
	p->heap = grow(p->heap, &cap, p->n, sizeof *p->heap);
	p->cap = (unsigned)cap;
	unsigned i = p->n++;
	while (i && p->heap[(i - 1) / 2] > id) {
		p->heap[i] = p->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	p->heap[i] = id;
}

static unsigned heap_pop(struct idpool *p)
{
	unsigned top = p->heap[0], last = p->heap[--p->n], i = 0;
	for (;;) {
		unsigned c = 2 * i + 1;
		if (c >= p->n)
			break;
		if (c + 1 < p->n && p->heap[c + 1] < p->heap[c])
			c++;
		if (last <= p->heap[c])
			break;
		p->heap[i] = p->heap[c];
		i = c;
	}
	if (p->n)
		p->heap[i] = last;
	return top;
}

static unsigned id_get(struct idpool *p)
{
	return p->n ? heap_pop(p) : p->next++;
}

static void id_put(struct idpool *p, unsigned id)
{
	heap_push(p, id);
}

/* ---- the undo journal ---- */

enum undo_kind { U_WRITE, U_STR, U_NEW, U_HASH_ADD, U_HASH_DEL, U_GROUP, U_NS };

struct undo {
	enum undo_kind kind;
	void *slot;
	size_t size;
	unsigned char old[sizeof(uint64_t)];
	char *str;             /* U_STR: old string; U_HASH_DEL: old key */
	struct mount *m;
	unsigned id;
};

static struct undo *record(struct graph *g, enum undo_kind kind)
{
	g->undo = grow(g->undo, &g->capundo, g->nundo, sizeof *g->undo);
	struct undo *u = &g->undo[g->nundo++];
	memset(u, 0, sizeof *u);
	u->kind = kind;
	return u;
}

void jwrite(struct graph *g, void *slot, const void *val, size_t size)
{
	struct undo *u = record(g, U_WRITE);
	u->slot = slot;
	u->size = size;
	memcpy(u->old, slot, size);
	memcpy(slot, val, size);
}

void jset_str(struct graph *g, char **slot, const char *val)
{
	struct undo *u = record(g, U_STR);
	u->slot = slot;
	u->str = *slot;
	*slot = strdup(val);
	if (!*slot)
		abort();
}

static void jlink(struct graph *g, struct list *n, struct list *prev,
		  struct list *next)
{
	JSET(g, next->prev, n);
	JSET(g, n->next, next);
	JSET(g, n->prev, prev);
	JSET(g, prev->next, n);
}

void jlist_add(struct graph *g, struct list *n, struct list *after)
{
	jlink(g, n, after, after->next);
}

void jlist_add_tail(struct graph *g, struct list *n, struct list *head)
{
	jlink(g, n, head->prev, head);
}

void jlist_del_init(struct graph *g, struct list *n)
{
	struct list *prev = n->prev, *next = n->next;
	JSET(g, prev->next, next);
	JSET(g, next->prev, prev);
	JSET(g, n->next, n);
	JSET(g, n->prev, n);
}

/* Group ids are taken at once and given back only at commit: an operation
 * never frees and then allocates, so smallest-free stays exact (1.3). */
unsigned group_new(struct graph *g)
{
	struct undo *u = record(g, U_GROUP);
	u->id = id_get(&g->group_ids);
	return u->id;
}

void group_release(struct graph *g, unsigned id)
{
	g->freed_groups = grow(g->freed_groups, &g->capfreed, g->nfreed,
			       sizeof *g->freed_groups);
	g->freed_groups[g->nfreed++] = id;
}

/* ---- mounts ---- */

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		abort();
	return d;
}

/* A filesystem goes with its last mount, or at once if it never had one. */
void fs_put(struct fs *fs)
{
	if (fs->refs && --fs->refs)
		return;
	free(fs->type);
	free(fs->opts);
	free(fs);
}

static void mount_free(struct graph *g, struct mount *m)
{
	HASH_DELETE(hh, g->by_id, m);
	id_put(&g->mount_ids, m->id);
	fs_put(m->fs);
	free(m->mp);
	free(m->root);
	free(m->devname);
	free(m->key);
	free(m);
}

struct mount *mount_new(struct graph *g, struct fs *fs, const char *root,
			const char *devname, unsigned flags, struct ns *ns)
{
	struct mount *m = calloc(1, sizeof *m);
	if (!m)
		abort();
	m->id = id_get(&g->mount_ids);
	m->seq = ++g->seq;
	m->fs = fs;
	m->root = xstrdup(root);
	m->devname = xstrdup(devname);
	m->mp = xstrdup("/");
	m->flags = flags;
	m->ns = ns;
	list_init(&m->share);
	list_init(&m->slaves);
	list_init(&m->slave);
	list_init(&m->mounts);
	list_init(&m->child);
	list_init(&m->order);
	HASH_ADD(hh, g->by_id, id, sizeof m->id, m);
	record(g, U_NEW)->m = m;
	JSET(g, fs->refs, fs->refs + 1);
	JSET(g, ns->count, ns->count + 1);
	jlist_add_tail(g, &m->order, &g->order);
	return m;
}

static char *make_key(unsigned parent, const char *mp)
{
	char *k;
	if (asprintf(&k, "%u%s", parent, mp) < 0)
		abort();
	return k;
}

void mount_attach(struct graph *g, struct mount *m, struct mount *parent,
		  const char *mp)
{
	JSET(g, m->parent, parent);
	jset_str(g, &m->mp, mp);
	jlist_add_tail(g, &m->child, &parent->mounts);
	m->key = make_key(parent->id, mp);
	HASH_ADD_KEYPTR(hk, g->by_key, m->key, strlen(m->key), m);
	record(g, U_HASH_ADD)->m = m;
}

void mount_detach(struct graph *g, struct mount *m)
{
	struct undo *u = record(g, U_HASH_DEL);
	HASH_DELETE(hk, g->by_key, m);
	u->m = m;
	u->str = m->key;
	m->key = NULL;
	jlist_del_init(g, &m->child);
	JSET(g, m->parent, NULL);
}

/* An unmounted mount leaves its namespace now and is freed at commit. */
void mount_kill(struct graph *g, struct mount *m)
{
	JSET(g, m->dead, true);
	JSET(g, m->ns->count, m->ns->count - 1);
	jlist_del_init(g, &m->order);
	g->dead = grow(g->dead, &g->capdead, g->ndead, sizeof *g->dead);
	g->dead[g->ndead++] = m;
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
	case U_NEW:
		/* the reference count was restored already (its write came
		 * later, so was undone first): give mount_free() its ref */
		u->m->fs->refs++;
		mount_free(g, u->m);
		break;
	case U_HASH_ADD:
		HASH_DELETE(hk, g->by_key, u->m);
		free(u->m->key);
		u->m->key = NULL;
		break;
	case U_HASH_DEL:
		u->m->key = u->str;
		HASH_ADD_KEYPTR(hk, g->by_key, u->m->key, strlen(u->m->key), u->m);
		break;
	case U_GROUP:
		id_put(&g->group_ids, u->id);
		break;
	case U_NS:    /* its link was restored by the writes after it */
		free(u->slot);
		break;
	}
}

static void clear_plan(struct graph *g)
{
	for (size_t i = 0; i < g->nsteps; i++)
		free(g->steps[i].dir);
	g->nsteps = g->nundo = g->ndead = g->nfreed = 0;
}

void plan_begin(struct graph *g)
{
	clear_plan(g);
	g->planning = true;
	g->seq0 = g->seq;
	if (g->check)
		plan_snapshot(g);
}

void plan_abandon(struct graph *g)
{
	while (g->nundo)
		undo_one(g, &g->undo[--g->nundo]);
	plan_snapshot_free(g);
	clear_plan(g);
	g->planning = false;
}

int plan_commit(struct graph *g)
{
	int err = g->check ? check_plan(g) : 0;
	for (size_t i = 0; i < g->nundo; i++) {
		struct undo *u = &g->undo[i];
		if (u->kind == U_STR || u->kind == U_HASH_DEL)
			free(u->str);
	}
	for (size_t i = 0; i < g->ndead; i++)
		mount_free(g, g->dead[i]);
	for (size_t i = 0; i < g->nfreed; i++)
		id_put(&g->group_ids, g->freed_groups[i]);
	g->nundo = g->ndead = g->nfreed = 0;
	g->planning = false;
	if (!err && g->check)
		err = check_invariants(g);
	return err;
}

void plan_step(struct graph *g, enum step_kind kind, const struct mount *m,
	       const struct mount *src, const struct mount *parent,
	       const char *dir, unsigned long flags)
{
	g->steps = grow(g->steps, &g->capsteps, g->nsteps, sizeof *g->steps);
	g->steps[g->nsteps++] = (struct step){
		.kind = kind, .mnt = m->id, .src = src ? src->id : 0,
		.parent = parent ? parent->id : 0,
		.dir = dir ? xstrdup(dir) : NULL, .flags = flags,
	};
}

const char *step_name(enum step_kind k)
{
	static const char *const names[] = {
		[STEP_NEW] = "new", [STEP_BIND] = "bind", [STEP_MOVE] = "move",
		[STEP_PARK] = "park", [STEP_UMOUNT] = "umount",
		[STEP_REMOUNT] = "remount", [STEP_REMOUNT_RO] = "remount-ro",
	};
	return names[k];
}

/* ---- lookups ---- */

struct mount *mount_at(const struct graph *g, const struct mount *parent,
		       const char *mp)
{
	struct mount *m;
	char *k = make_key(parent->id, mp);
	HASH_FIND(hk, g->by_key, k, strlen(k), m);
	free(k);
	return m;
}

/* Directories renamed under the graph (sharebrokerd learns the new names
 * from the kernel): m's root and, when given, its mountpoint.  Outside any
 * plan. */
void mount_rename(struct graph *g, struct mount *m, const char *root,
		  const char *mp)
{
	char *r = xstrdup(root);   /* root may be m->root itself */
	free(m->root);
	m->root = r;
	if (!mp || !m->parent)
		return;
	HASH_DELETE(hk, g->by_key, m);
	free(m->key);
	free(m->mp);
	m->mp = xstrdup(mp);
	m->key = make_key(m->parent->id, mp);
	HASH_ADD_KEYPTR(hk, g->by_key, m->key, strlen(m->key), m);
}

/* A mount the kernel no longer has (unmounted behind sharebrokerd's
 * back), with its subtree, children first: each leaves its peers (its
 * slaves go to another peer or its master, as on umount) and its
 * namespace.  Outside any plan. */
void graph_forget(struct graph *g, struct mount *m)
{
	struct mount **v = NULL;
	size_t n = 0, cap = 0;
	bool check = g->check;
	for (struct mount *q = m; q; q = next_in_tree(q, m)) {
		v = grow(v, &cap, n, sizeof *v);
		v[n++] = q;
	}
	g->check = false;
	plan_begin(g);
	while (n-- > 0) {
		change_propagation(g, v[n], LS_MS_PRIVATE);
		if (v[n]->parent)
			mount_detach(g, v[n]);
		mount_kill(g, v[n]);
	}
	plan_commit(g);
	g->check = check;
	free(v);
}

/* The executor's lookup: plan steps name mounts by id. */
struct mount *mount_by_id(const struct graph *g, unsigned id)
{
	struct mount *m;
	HASH_FIND(hh, g->by_id, &id, sizeof id, m);
	return m;
}

/* The mount a path lookup lands on: the top of the overmount chain. */
struct mount *topmost(const struct graph *g, struct mount *m)
{
	struct mount *o;
	while ((o = mount_at(g, m, m->root)))
		m = o;
	return m;
}

/* Whether directory dir lies at or below directory top (both fs-absolute). */
bool dir_under(const char *dir, const char *top)
{
	size_t n = strlen(top);
	if (strcmp(top, "/") == 0)
		return true;
	return strncmp(dir, top, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

/* ---- setup ---- */

int graph_init(struct graph *g, unsigned max_mounts)
{
	memset(g, 0, sizeof *g);
	g->mount_ids.next = g->group_ids.next = 1;
	g->next_fs = g->next_ns = 1;
	g->max_mounts = max_mounts ? max_mounts : 100000;
	list_init(&g->order);
	list_init(&g->nss);
	return 0;
}

struct fs *fs_new(struct graph *g, const char *type, const char *opts)
{
	struct fs *fs = calloc(1, sizeof *fs);
	if (!fs)
		abort();
	fs->id = g->next_fs++;
	fs->dev = 100 + fs->id;
	fs->type = xstrdup(type);
	fs->opts = xstrdup(opts ? opts : "");
	return fs;
}

struct ns *ns_new(struct graph *g)
{
	struct ns *ns = calloc(1, sizeof *ns);
	if (!ns)
		abort();
	ns->id = g->next_ns++;
	record(g, U_NS)->slot = ns;
	jlist_add_tail(g, &ns->link, &g->nss);
	return ns;
}

/* The namespace's root mount: the only mount without a parent. */
int graph_set_root(struct graph *g, struct ns *ns, struct fs *fs,
		   const char *devname, unsigned flags)
{
	if (ns->root)
		return -EBUSY;
	bool check = g->check;     /* an import: the kernel has it already */
	g->check = false;
	plan_begin(g);
	ns->root = mount_new(g, fs, "/", devname, flags, ns);
	plan_commit(g);
	g->check = check;
	return check ? check_invariants(g) : 0;
}

/* A mount the kernel already has (sharebrokerd's import), outside any
 * plan: parent NULL makes it the namespace's root. */
struct mount *graph_import(struct graph *g, struct ns *ns,
			   struct mount *parent, const char *mp, struct fs *fs,
			   const char *root, const char *devname,
			   unsigned flags)
{
	if (parent ? !mp : ns->root != NULL)
		return NULL;
	bool check = g->check;
	g->check = false;
	plan_begin(g);
	struct mount *m = mount_new(g, fs, root, devname, flags, ns);
	if (parent)
		mount_attach(g, m, parent, mp);
	else
		ns->root = m;
	plan_commit(g);
	g->check = check;
	return m;
}

void graph_free(struct graph *g)
{
	struct mount *m, *tmp;
	clear_plan(g);
	plan_snapshot_free(g);
	HASH_CLEAR(hk, g->by_key);
	HASH_ITER(hh, g->by_id, m, tmp)
		mount_free(g, m);
	while (!list_empty(&g->nss)) {
		struct ns *ns = list_entry(g->nss.next, struct ns, link);
		g->nss.next = ns->link.next;
		g->nss.next->prev = &g->nss;
		free(ns);
	}
	free(g->mount_ids.heap);
	free(g->group_ids.heap);
	free(g->undo);
	free(g->steps);
	free(g->dead);
	free(g->freed_groups);
}
