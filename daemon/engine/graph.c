/* graph.c: the mount graph's objects (mounts, filesystems, namespaces),
 * how they are found, and their journaled creation, attachment and end.
 *
 * Ownership: graph.by_id owns the mounts, graph.nss the namespaces; a
 * filesystem is owned by the mounts that use it (refs).  Peer rings, slave
 * lists, child lists and the key table link without owning.
 */
#include <string.h>
#include "journal.h"

/* ---- filesystems and namespaces ---- */

/* A filesystem goes with its last mount, or at once if it never had one. */
void fs_put(struct fs *fs)
{
	if (fs->refs && --fs->refs)
		return;
	free(fs->type);
	free(fs->opts);
	free(fs);
}

static void fs_free_unused(struct graph *g, void *p, unsigned id)
{
	(void)g, (void)id;
	struct fs *fs = p;
	if (!fs->refs)
		fs_put(fs);
}

/* A filesystem nobody mounts yet becomes the plan's: abandoning the plan
 * frees it unless a kept mount uses it by then. */
int fs_adopt(struct graph *g, struct fs *fs)
{
	return jcall(g, fs_free_unused, NULL, fs, 0);
}

struct fs *fs_new(struct graph *g, const char *type, const char *opts)
{
	struct fs *fs = eng_calloc(1, sizeof *fs);
	if (!fs || !(fs->type = eng_strdup(type)) ||
	    !(fs->opts = eng_strdup(opts ? opts : "")) ||
	    JSET(g, g->next_fs, g->next_fs + 1)) {
		if (fs)
			fs_put(fs);
		return NULL;
	}
	fs->id = g->next_fs - 1;
	fs->dev = 100 + fs->id;
	return fs;
}

static void ns_unmake(struct graph *g, void *p, unsigned id)
{
	(void)g, (void)id;
	free(p);               /* its link was undone by the writes after it */
}

struct ns *ns_new(struct graph *g)
{
	struct ns *ns = eng_calloc(1, sizeof *ns);
	if (!ns || jreserve(g, 6)) {
		free(ns);
		return NULL;
	}
	ns->id = g->next_ns;
	JSET(g, g->next_ns, g->next_ns + 1);
	jcall(g, ns_unmake, NULL, ns, 0);
	jlist_add_tail(g, &ns->link, &g->nss);
	return ns;
}

/* ---- the key table: (parent, mountpoint) -> mount ---- */

static unsigned key_hash(unsigned parent, const char *mp)
{
	unsigned h = (2166136261u ^ parent) * 16777619u;   /* FNV-1a */
	for (; *mp; mp++)
		h = (h ^ (unsigned char)*mp) * 16777619u;
	return h;
}

static struct mount **bucket(const struct keys *k, unsigned hash)
{
	return &k->bucket[hash & (k->nbucket - 1)];
}

/* Room for one more key: the only allocation of the table, made before
 * anything changes, so that inserting (and undoing a removal) cannot fail. */
static int key_reserve(struct keys *k)
{
	if (k->n < k->nbucket)
		return 0;
	size_t nb = k->nbucket ? 2 * k->nbucket : 64;
	struct mount **b = eng_calloc(nb, sizeof *b), *m;
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < k->nbucket; i++)
		while ((m = k->bucket[i])) {
			k->bucket[i] = m->knext;
			m->knext = b[m->khash & (nb - 1)];
			b[m->khash & (nb - 1)] = m;
		}
	free(k->bucket);
	k->bucket = b;
	k->nbucket = nb;
	return 0;
}

static void key_insert(struct graph *g, void *p, unsigned id)
{
	(void)id;
	struct mount *m = p, **b;
	m->khash = key_hash(m->parent->id, m->mp);
	b = bucket(&g->keys, m->khash);
	m->knext = *b;
	*b = m;
	g->keys.n++;
}

static void key_remove(struct graph *g, void *p, unsigned id)
{
	(void)id;
	struct mount **b = bucket(&g->keys, ((struct mount *)p)->khash);
	while (*b != p)
		b = &(*b)->knext;
	*b = (*b)->knext;
	g->keys.n--;
}

struct mount *mount_at(const struct graph *g, const struct mount *parent,
		       const char *mp)
{
	if (!g->keys.nbucket)
		return NULL;
	unsigned h = key_hash(parent->id, mp);
	for (struct mount *m = *bucket(&g->keys, h); m; m = m->knext)
		if (m->khash == h && m->parent == parent &&
		    strcmp(m->mp, mp) == 0)
			return m;
	return NULL;
}

/* ---- mounts ---- */

/* A mount not in the graph yet, or never to be. */
static void mount_drop(struct mount *m)
{
	if (!m)
		return;
	free(m->mp);
	free(m->root);
	free(m->devname);
	free(m);
}

static void mount_release(struct graph *g, struct mount *m)
{
	g->by_id[m->id] = NULL;
	g->nmounts--;
	id_put(&g->mount_ids, m->id);
	mount_drop(m);
}

/* At commit (unmounted) or with the graph: its filesystem loses a user. */
void mount_free(struct graph *g, struct mount *m)
{
	struct fs *fs = m->fs;
	mount_release(g, m);
	fs_put(fs);
}

/* Undo of mount_new(): the reference it took was undone already. */
static void mount_unmake(struct graph *g, void *p, unsigned id)
{
	(void)id;
	mount_release(g, p);
}

/* Room in by_id for any id the pool may hand out next (at most next). */
static int id_room(struct graph *g)
{
	size_t old = g->capid;
	if (VEC_RESERVE(g->by_id, g->capid, (size_t)g->mount_ids.next + 1))
		return -ENOMEM;
	memset(g->by_id + old, 0, (g->capid - old) * sizeof *g->by_id);
	return 0;
}

static struct mount *mount_alloc(const char *root, const char *devname)
{
	struct mount *m = eng_calloc(1, sizeof *m);
	if (m && (m->root = eng_strdup(root)) &&
	    (m->devname = eng_strdup(devname)) && (m->mp = eng_strdup("/")))
		return m;
	mount_drop(m);
	return NULL;
}

struct mount *mount_new(struct graph *g, struct fs *fs, const char *root,
			const char *devname, unsigned flags, struct ns *ns)
{
	struct mount *m = mount_alloc(root, devname);
	if (!m || jreserve(g, 8) || id_room(g) ||
	    id_get(&g->mount_ids, &m->id)) {
		mount_drop(m);
		return NULL;
	}
	m->seq = g->seq + 1;
	m->fs = fs;
	m->flags = flags;
	m->ns = ns;
	list_init(&m->share);
	list_init(&m->slaves);
	list_init(&m->slave);
	list_init(&m->mounts);
	list_init(&m->child);
	list_init(&m->order);
	g->by_id[m->id] = m;
	g->nmounts++;
	jcall(g, mount_unmake, NULL, m, 0);
	JSET(g, g->seq, m->seq);
	JSET(g, fs->refs, fs->refs + 1);
	JSET(g, ns->count, ns->count + 1);
	jlist_add_tail(g, &m->order, &g->order);
	return m;
}

int mount_attach(struct graph *g, struct mount *m, struct mount *parent,
		 const char *mp)
{
	if (jreserve(g, 7) || key_reserve(&g->keys) ||
	    jset_str(g, &m->mp, mp))
		return -ENOMEM;
	JSET(g, m->parent, parent);
	jlist_add_tail(g, &m->child, &parent->mounts);
	key_insert(g, m, 0);
	jcall(g, key_remove, NULL, m, 0);
	return 0;
}

int mount_detach(struct graph *g, struct mount *m)
{
	if (jreserve(g, 6))
		return -ENOMEM;
	key_remove(g, m, 0);
	jcall(g, key_insert, NULL, m, 0);
	jlist_del_init(g, &m->child);
	JSET(g, m->parent, NULL);
	return 0;
}

/* An unmounted mount leaves its namespace now and is freed at commit. */
int mount_kill(struct graph *g, struct mount *m)
{
	if (VEC_RESERVE(g->dead, g->capdead, g->ndead + 1) || jreserve(g, 7))
		return -ENOMEM;
	JSET(g, m->dead, true);
	JSET(g, m->ns->count, m->ns->count - 1);
	jlist_del_init(g, &m->order);
	g->dead[g->ndead] = m;
	JSET(g, g->ndead, g->ndead + 1);
	return 0;
}

/* Directories renamed under the graph (sharebrokerd learns the new names
 * from the kernel): m's root and, when given, its mountpoint.  Outside any
 * plan; the names are made first, so that nothing changes without them. */
int mount_rename(struct graph *g, struct mount *m, const char *root,
		 const char *mp)
{
	bool move = mp && m->parent;
	char *r = eng_strdup(root), *p = move ? eng_strdup(mp) : NULL;
	if (!r || (move && !p)) {
		free(r);
		/* -fanalyzer's double free: r and p are two allocations,
		 * either NULL; it loses them through eng_strdup() */
		free(p);
		return -ENOMEM;
	}
	free(m->root);             /* root may have been m->root */
	m->root = r;
	if (move) {
		key_remove(g, m, 0);
		free(m->mp);
		m->mp = p;
		key_insert(g, m, 0);
	}
	return 0;
}

/* ---- lookups ---- */

/* The executor's lookup: plan steps name mounts by id. */
struct mount *mount_by_id(const struct graph *g, unsigned id)
{
	return id < g->capid ? g->by_id[id] : NULL;
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

/* Whether the walk up from (m, dir) through parents meets the reader's
 * root, as the kernel's is_path_reachable() (1.5.3): no path is built. */
bool reaches(const struct mount *m, const char *dir, struct loc root)
{
	for (;;) {
		if (m == root.m && dir_under(dir, root.dir) &&
		    dir_under(root.dir, m->root))
			return true;
		if (!m->parent || !dir_under(dir, m->root))
			return false;
		dir = m->mp;
		m = m->parent;
	}
}

/* ---- setup ---- */

int graph_init(struct graph *g, unsigned max_mounts)
{
	memset(g, 0, sizeof *g);
	idpool_init(&g->mount_ids);
	idpool_init(&g->group_ids);
	g->next_fs = g->next_ns = 1;
	g->max_mounts = max_mounts ? max_mounts : 100000;
	list_init(&g->order);
	list_init(&g->nss);
	return 0;
}

void graph_free(struct graph *g)
{
	if (g->planning) {         /* what the open plan made goes too */
		journal_rollback(g, 0);
		if (g->checker)
			g->checker->end(g);
	}
	for (size_t i = 0; i < g->nsteps; i++)
		free(g->steps[i].dir);
	for (size_t id = 0; id < g->capid; id++)
		if (g->by_id[id])
			mount_free(g, g->by_id[id]);
	while (!list_empty(&g->nss)) {
		struct ns *ns = list_entry(g->nss.next, struct ns, link);
		g->nss.next = ns->link.next;
		free(ns);
	}
	idpool_free(&g->mount_ids);
	idpool_free(&g->group_ids);
	free(g->by_id);
	free(g->keys.bucket);
	free(g->undo);
	free(g->steps);
	free(g->dead);
}
