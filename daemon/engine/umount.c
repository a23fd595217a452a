/* umount.c: umount2(2) with its propagation (semantics.md 5).
 *
 * The set taken out is decided in full before anything changes: the
 * kernel's busy check is all-or-nothing (5.3), and so is ours.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "journal.h"

int op_umount_flags_ok(int flags)
{
	return flags & ~LS_UMOUNT_KNOWN ? -EINVAL : 0;
}

/* The only child of c, if it covers c's root (an overmount). */
static struct mount *topper(struct mount *c)
{
	if (list_empty(&c->mounts) || c->mounts.next != c->mounts.prev)
		return NULL;
	struct mount *t = list_entry(c->mounts.next, struct mount, child);
	return strcmp(t->mp, c->root) == 0 ? t : NULL;
}

/* 5.3: m itself, then every counterpart that would go with it. */
static bool busy_somewhere(struct mount *m, busy_fn busy, void *ctx,
			   const struct graph *g)
{
	struct mount *p = m->parent;
	if (!list_empty(&m->mounts) || busy(ctx, m))
		return true;
	for (struct mount *q = propagation_next(p, p); q;
	     q = propagation_next(q, p)) {
		struct mount *c = mount_at(g, q, m->mp);
		if (!c || (!topper(c) && !list_empty(&c->mounts)))
			continue;
		if (busy(ctx, c))
			return true;
	}
	return false;
}

struct set { struct mount **v; size_t n, cap; unsigned stamp; };

static int add(struct set *s, struct mount *m)
{
	if (VEC_PUSH(s->v, s->n, s->cap, m))
		return -ENOMEM;
	m->stamp = s->stamp;
	return 0;
}

static bool in(const struct set *s, const struct mount *m)
{
	return m->stamp == s->stamp;
}

/* Whether no ancestor of m is removed with it: then no other removal
 * takes m along, and none goes through m's root to a mount on it. */
static bool alone(const struct set *s, const struct mount *m)
{
	while ((m = m->parent))
		if (in(s, m))
			return false;
	return true;
}

/* Whether m lies in top's subtree (top itself excluded). */
static bool reaches_up(const struct mount *m, const struct mount *top)
{
	while ((m = m->parent))
		if (m == top)
			return true;
	return false;
}

/* Non-shifting (5.2): every subtree mounted strictly inside c, i.e. not
 * on c's own root, goes too. */
static bool shifts(const struct set *s, struct mount *c)
{
	for (struct list *l = c->mounts.next; l != &c->mounts; l = l->next) {
		struct mount *ch = list_entry(l, struct mount, child);
		if (strcmp(ch->mp, c->root) == 0)
			continue;
		for (struct mount *p = ch; p; p = next_in_tree(p, ch))
			if (!in(s, p))
				return true;
	}
	return false;
}

/* A candidate that would shift leaves the set; that can make candidates
 * above it shift in turn, and only those: walk up and re-check them.
 * (Members of U, the umount's own tree, never leave.) */
static void trim(struct set *s, struct mount *c, struct mount *top,
		 bool lazy)
{
	for (; c; c = c->parent) {
		bool of_u = c == top || (lazy && reaches_up(c, top));
		if (in(s, c) && !of_u && shifts(s, c))
			c->stamp = 0;
	}
}

/* U, then the counterparts of every member of U, then trimmed to the
 * largest non-shifting subset. */
static int gather(struct graph *g, struct set *s, struct mount *m, bool lazy)
{
	s->stamp = ++g->stamp;
	for (struct mount *p = m; p; p = lazy ? next_in_tree(p, m) : NULL)
		if (add(s, p))
			return -ENOMEM;
	size_t nu = s->n;
	for (size_t i = 0; i < nu; i++) {
		struct mount *u = s->v[i], *p = u->parent;
		for (struct mount *q = propagation_next(p, p); q;
		     q = propagation_next(q, p)) {
			struct mount *c = mount_at(g, q, u->mp);
			if (c && !in(s, c) && add(s, c))
				return -ENOMEM;
		}
	}
	for (size_t i = nu; i < s->n; i++)
		if (in(s, s->v[i]) && shifts(s, s->v[i]))
			trim(s, s->v[i], m, lazy);
	size_t k = nu;             /* compact out the trimmed */
	for (size_t i = nu; i < s->n; i++)
		if (in(s, s->v[i]))
			s->v[k++] = s->v[i];
	s->n = k;
	return 0;
}

/* Where a survivor sitting on a removed mount's root drops to: the place
 * of the lowest removed mount under it (5.2). */
static struct loc drop_to(const struct set *s, struct mount *o)
{
	struct mount *p = o;
	const char *mp;
	do {
		mp = p->mp;
		p = p->parent;
	} while (in(s, p));
	return (struct loc){ .m = p, .dir = mp };
}

/* Take m and the removed mounts it leads to out of their groups; the
 * first survivor on the way (a peer, else up the masters) is where their
 * slaves go.  Each traced mount's master points along the way meanwhile. */
static int trace(struct graph *g, const struct set *s, struct mount *m,
		 struct mount **to)
{
	for (;;) {
		struct mount *next = next_peer(m);
		int err = 0;
		if (next != m) {
			err = jlist_del_init(g, &m->share) ?:
			      JSET(g, m->master, next);
		} else {
			if (is_shared(m))
				err = group_release(g, m->group);
			next = m->master;
		}
		err = err ?: JSET(g, m->group, 0) ?:
		      jlist_del_init(g, &m->slave);
		if (err)
			return err;
		m->traced = s->stamp;
		if (!next || !in(s, next) || next->traced == s->stamp) {
			*to = next && in(s, next) ? next->master : next;
			return 0;
		}
		m = next;
	}
}

/* Every removed mount becomes private at once, its slaves re-homed to a
 * survivor (2.2, 2.3; the kernel's bulk_make_private). */
static int make_private(struct graph *g, const struct set *s)
{
	int err = 0;
	for (size_t i = 0; !err && i < s->n; i++) {
		struct mount *m = s->v[i], *next, *to;
		if (m->traced == s->stamp)
			continue;
		err = trace(g, s, m, &to);
		while (!err && (next = m->master) != to) {
			err = JSET(g, m->master, to);
			m = next;
		}
	}
	for (size_t i = 0; !err && i < s->n; i++)
		err = transfer_slaves(g, s->v[i], s->v[i]->master) ?:
		      JSET(g, s->v[i]->master, NULL);
	return err;
}

static unsigned depth(const struct mount *m)
{
	unsigned n = 0;
	while ((m = m->parent))
		n++;
	return n;
}

static int deeper_first(const void *a, const void *b)
{
	unsigned da = depth(*(struct mount *const *)a);
	unsigned db = depth(*(struct mount *const *)b);
	return da < db ? 1 : da > db ? -1 : 0;
}

/* The survivors sitting on removed mounts' roots, and where each drops
 * to: a place whose directory is a copy of the removed mountpoint's name
 * (that mount goes, and its name with it at commit). */
struct parked { struct mount **m; struct loc *to; size_t n, capm, capto; };

static int survivors(const struct set *s, struct parked *pk)
{
	for (size_t i = 0; i < s->n; i++)
		for (struct list *l = s->v[i]->mounts.next;
		     l != &s->v[i]->mounts; l = l->next) {
			struct mount *o = list_entry(l, struct mount, child);
			if (in(s, o))
				continue;
			struct loc to = drop_to(s, o);
			if (VEC_RESERVE(pk->to, pk->capto, pk->n + 1) ||
			    !(to.dir = eng_strdup(to.dir)))
				return -ENOMEM;
			if (VEC_PUSH(pk->m, pk->n, pk->capm, o)) {
				free((char *)to.dir);
				return -ENOMEM;
			}
			pk->to[pk->n - 1] = to;
		}
	return 0;
}

static int take_out(struct graph *g, struct set *s, int flags)
{
	struct parked pk = { 0 };
	int err = survivors(s, &pk);
	for (size_t i = 0; !err && i < pk.n; i++)
		err = plan_step(g, STEP_PARK, pk.m[i], NULL, NULL, NULL, 0) ?:
		      mount_detach(g, pk.m[i]);
	/* one umount2() per mount, children first: a removed parent may
	 * hold a member of U (its counterpart's child) */
	qsort(s->v, s->n, sizeof *s->v, deeper_first);
	for (size_t i = 0; !err && i < s->n; i++)
		if (!(err = plan_step(g, STEP_UMOUNT, s->v[i], NULL, NULL, NULL,
				      flags & LS_MNT_DETACH)))
			g->steps[g->nsteps - 1].alone = alone(s, s->v[i]);
	for (size_t i = s->n; !err && i-- > 0; )   /* a namespace's root has
						       no parent (op_free_ns) */
		err = (s->v[i]->parent ? mount_detach(g, s->v[i]) : 0) ?:
		      mount_kill(g, s->v[i]);
	for (size_t i = 0; !err && i < pk.n; i++)
		err = mount_attach(g, pk.m[i], pk.to[i].m, pk.to[i].dir) ?:
		      plan_step(g, STEP_MOVE, pk.m[i], NULL, pk.to[i].m,
				pk.to[i].dir, 0);
	err = err ?: make_private(g, s);
	for (size_t i = 0; i < pk.n; i++)
		free((char *)pk.to[i].dir);
	free(pk.m);
	free(pk.to);
	return err;
}

/* With the kernel's marks (graph.kernel_marks), the unmount of m, the
 * target of a second MNT_EXPIRE, is the kernel's own second call: the
 * plan's first unmount, never batched, so that its EAGAIN (m was used
 * since the first call) stops the plan before another mount went.  No
 * other member of the set is below m, which has no children. */
static void expire_first(struct graph *g, const struct mount *m)
{
	size_t first = SIZE_MAX, at = SIZE_MAX;
	for (size_t i = 0; i < g->nsteps; i++) {
		if (g->steps[i].kind != STEP_UMOUNT)
			continue;
		first = first == SIZE_MAX ? i : first;
		at = g->steps[i].mnt == m->id ? i : at;
	}
	if (at == SIZE_MAX)
		return;
	struct step s = g->steps[at];
	memmove(&g->steps[first + 1], &g->steps[first],
		(at - first) * sizeof s);
	s.expire = true;
	s.alone = false;
	g->steps[first] = s;
}

/* MNT_EXPIRE's checks and mark (fs/namespace.c do_umount()): 0 when the
 * mark was there and the unmount goes on.  The kernel counts references
 * (busy), then sets the mark or finds it set, before anything else.
 * With the kernel's marks, a mount with a parent is the kernel's to mark
 * and to judge busy: -EAGAIN without a mark asks the caller to have the
 * kernel mark it (the broker's expire.c).  The mark outlives a failed
 * request, as in the kernel; it is not undone with the plan. */
static int expire_check(struct graph *g, const struct caller *c,
			struct mount *m, int flags, busy_fn busy, void *ctx)
{
	bool kernel = g->kernel_marks && m->parent;
	if (m == c->root.m || (flags & (LS_MNT_FORCE | LS_MNT_DETACH)))
		return -EINVAL;
	if (!list_empty(&m->mounts) || (!kernel && busy(ctx, m)))
		return -EBUSY;
	if (!m->expiry_mark) {
		m->expiry_mark = !kernel;
		return -EAGAIN;
	}
	return 0;
}

/* umount2(at, flags) for a caller (5.1), after op_umount_flags_ok() and
 * the path lookup. */
int op_umount(struct graph *g, const struct caller *c, struct loc at, int flags,
	      busy_fn busy, void *ctx)
{
	struct mount *m = at.m;

	if (!c->privileged)
		return -EPERM;
	if (strcmp(at.dir, m->root) != 0 || m->ns != c->ns)
		return -EINVAL;
	int err = flags & LS_MNT_EXPIRE ?
		  expire_check(g, c, m, flags, busy, ctx) : 0;
	if (err)
		return err;
	if (m == c->root.m && !(flags & LS_MNT_DETACH)) {
		/* 5.1 item 8: the caller's own root is remounted read-only */
		return JSET(g, m->fs->flags, m->fs->flags | SB_RDONLY) ?:
		       plan_step(g, STEP_REMOUNT_RO, m, NULL, NULL, NULL, 0);
	}
	if (!m->parent)
		return -EINVAL;
	if (!(flags & LS_MNT_DETACH) && busy_somewhere(m, busy, ctx, g))
		return -EBUSY;
	struct set s = { 0 };
	err = gather(g, &s, m, flags & LS_MNT_DETACH) ?:
	      take_out(g, &s, flags);
	free(s.v);
	if (!err && (flags & LS_MNT_EXPIRE) && g->kernel_marks)
		expire_first(g, m);
	return err;
}

static void ns_free(struct graph *g, void *p, unsigned id)
{
	(void)g, (void)id;
	free(p);
}

/* The last reference to a namespace is gone (the kernel's put_mnt_ns():
 * umount_tree() without UMOUNT_PROPAGATE): every mount of it goes, lazily,
 * nothing propagates to peers or slaves elsewhere, and each goes private
 * first so that its slaves elsewhere are re-homed.  The namespace itself
 * is freed at commit. */
int op_free_ns(struct graph *g, struct ns *ns)
{
	struct set s = { .stamp = ++g->stamp };
	int err = 0;
	for (struct mount *p = ns->root; p && !err;
	     p = next_in_tree(p, ns->root))
		err = add(&s, p);
	err = err ?: take_out(g, &s, LS_MNT_DETACH) ?: JSET(g, ns->root, NULL) ?:
	      jlist_del_init(g, &ns->link) ?: jcall(g, NULL, ns_free, ns, 0);
	free(s.v);
	return err;
}
