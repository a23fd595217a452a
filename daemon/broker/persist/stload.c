/* stload.c: the saved lines in the order a whole save writes them, for
 * state_load().
 *
 * A request's record sets again only the lines of the mounts it changed
 * (stdelta.c): the lines come back in the order they last changed, not
 * in the order of the table.  The load makes the peer groups, rings and
 * slave lists in line order, and the groups' numbers, which mountinfo
 * shows, follow: so the lines are put back in the order a whole save
 * gives them.  The trees go by the oldest mount of each tree's top group
 * (put_all(), state.c); within a tree, the lines go in pre-order from
 * there, each ring and slave list in the order its lines' links give
 * (the mount with a line before each: state.c).  A tree whose lines lack
 * links (format 2, written whole in pre-order) or whose links do not make
 * one tree keeps its line order.  A line of another kind keeps its place
 * after the mounts'.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker.h"
#include "hold/hold.h"
#include "persist/persist.h"

enum { NONE = (size_t)-1 };

struct ln {
	const char *line;
	int kid, master, before[2];    /* before: in ring, in slave list */
	unsigned group;
	bool linked;           /* the line has its links */
	size_t up;             /* union-find: the line it joined */
	uint64_t rank;         /* its tree's, once found */
	size_t start;          /* its tree's first line (at its root) */
	size_t next[3];        /* peer, first slave, next slave */
	size_t up_ix;          /* its master's line */
	size_t pos;            /* in its tree's pre-order */
	bool bad;              /* its tree's order is its line order */
};

static size_t root_of(struct ln *v, size_t i)
{
	while (v[i].up != i)
		i = v[i].up = v[v[i].up].up;
	return i;
}

static void join(struct ln *v, size_t a, size_t b)
{
	a = root_of(v, a);
	b = root_of(v, b);
	if (a != b)
		v[a > b ? a : b].up = a < b ? a : b;
}

static struct ln *sorted_v;    /* for the comparisons below */

static int by_group(const void *a, const void *b)
{
	unsigned x = sorted_v[*(const size_t *)a].group,
		 y = sorted_v[*(const size_t *)b].group;
	return (x > y) - (x < y);
}

static int by_kid(const void *a, const void *b)
{
	int x = sorted_v[*(const size_t *)a].kid,
	    y = sorted_v[*(const size_t *)b].kid;
	return (x > y) - (x < y);
}

/* Trees by rank, then by their first line; within one, its lines in
 * pre-order, or in line order. */
static int by_rank(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	size_t r = root_of(sorted_v, i), q = root_of(sorted_v, j);
	const struct ln *v = sorted_v;
	if (v[r].rank != v[q].rank)
		return (v[r].rank > v[q].rank) - (v[r].rank < v[q].rank);
	if (r != q)
		return (r > q) - (r < q);
	if (!v[r].bad && v[i].pos != v[j].pos)
		return (v[i].pos > v[j].pos) - (v[i].pos < v[j].pos);
	return (i > j) - (i < j);
}

/* The line of kernel id kid (ix: the lines by kid), or NONE. */
static size_t of_kid(const struct ln *v, const size_t *ix, size_t n, int kid)
{
	size_t lo = 0, hi = n;
	while (kid && lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[ix[mid]].kid < kid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return kid && lo < n && v[ix[lo]].kid == kid ? ix[lo] : NONE;
}

/* Lines of one tree joined: same group, or a master's line; ix is left
 * by kid. */
static void trees(struct ln *v, size_t n, size_t *ix)
{
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	qsort(ix, n, sizeof *ix, by_group);
	for (size_t i = 1; i < n; i++)
		if (v[ix[i]].group && v[ix[i]].group == v[ix[i - 1]].group)
			join(v, ix[i], ix[i - 1]);
	qsort(ix, n, sizeof *ix, by_kid);
	for (size_t i = 0; i < n; i++)
		if ((v[i].up_ix = of_kid(v, ix, n, v[i].master)) != NONE)
			join(v, i, v[i].up_ix);
}

/* Slot k of line at names line i next; a slot named twice, or a line
 * that names none, leaves i's tree in line order. */
static void link_to(struct ln *v, size_t at, int k, size_t i)
{
	if (at == NONE || v[at].next[k] != NONE)
		v[root_of(v, i)].bad = true;
	else
		v[at].next[k] = i;
}

/* Each line's neighbours, from what the lines say is before them. */
static void links(struct ln *v, size_t n, const size_t *ix)
{
	for (size_t i = 0; i < n; i++) {
		struct ln *x = &v[i];
		size_t p = of_kid(v, ix, n, x->before[0]);
		if (!x->kid)
			continue;
		if (!x->linked || (x->master && x->up_ix == NONE) ||
		    (x->before[0] && (p == NONE || v[p].group != x->group)))
			v[root_of(v, i)].bad = true;
		else if (x->group && x->before[0])
			link_to(v, p, 0, i);
		if (x->linked && x->master && x->before[1])
			link_to(v, of_kid(v, ix, n, x->before[1]), 2, i);
		else if (x->linked && x->master)
			link_to(v, x->up_ix, 1, i);
	}
}

/* The line after i in the pre-order from o, a line of the top group, as
 * propagation_next() goes (put_tree(), state.c); NONE at the end. */
static size_t walk_next(const struct ln *v, size_t i, size_t o, size_t n)
{
	if (v[i].next[1] != NONE)
		return v[i].next[1];
	for (size_t k = 0; k <= n; k++) {
		if (v[i].up_ix == NONE)        /* the top group: its ring */
			return v[i].next[0] == o ? NONE : v[i].next[0];
		if (v[i].next[2] != NONE)
			return v[i].next[2];
		i = v[i].up_ix;
	}
	return NONE;
}

/* The pre-order of root r's tree of size lines, if its links make it. */
static void walk(struct ln *v, size_t r, size_t size, size_t n)
{
	size_t o = v[r].start, k = 0;
	for (size_t i = o; !v[r].bad && i != NONE; i = walk_next(v, i, o, n)) {
		if (v[i].pos != NONE || root_of(v, i) != r)
			break;
		v[i].pos = k++;
	}
	if (o == NONE || k != size)
		v[r].bad = true;
}

static void read_ln(struct ln *x, const char *line, size_t i)
{
	x->line = line;
	x->up = i;
	x->rank = UINT64_MAX;
	x->start = x->up_ix = x->pos = NONE;
	x->next[0] = x->next[1] = x->next[2] = NONE;
	int got = sscanf(line, "%d %*u:%*u %u %d %*d %*s %*s %d %d", &x->kid,
			 &x->group, &x->master, &x->before[0], &x->before[1]);
	if (got < 3)
		x->kid = x->master = 0, x->group = 0;
	x->linked = got == 5;
}

/* Each tree's rank (its oldest top mount's), and its first line. */
static void rank(struct broker *b, struct ln *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct mount *m = v[i].kid && !v[i].master ?
				  mount_of_kid(b, v[i].kid) : NULL;
		struct ln *r = &v[root_of(v, i)];
		if (!v[i].kid)
			r->rank = UINT64_MAX;          /* not a mount's */
		else if (m && m->seq < r->rank)
			r->rank = m->seq, r->start = i;
		else if (r->rank == UINT64_MAX)
			r->rank = UINT64_MAX - 1;      /* after, before others */
		if (v[i].kid && !v[i].master && r->start == NONE)
			r->start = i;
	}
}

/* The cache's lines to f, trees in the order of their oldest top mount,
 * each in pre-order. */
int state_ordered(struct broker *b, FILE *f)
{
	size_t n = HASH_CNT(hh, b->st.lines), i = 0;
	struct ln *v = calloc(n + 1, sizeof *v);
	size_t *ix = calloc(n + 1, sizeof *ix), *size = calloc(n + 1,
							       sizeof *size);
	if (!v || !ix || !size) {
		free(v);
		free(ix);
		free(size);
		return -ENOMEM;
	}
	for (const struct stline *l = b->st.lines; l; l = l->hh.next, i++)
		read_ln(&v[i], l->line, i);
	sorted_v = v;
	trees(v, n, ix);
	links(v, n, ix);
	rank(b, v, n);
	for (i = 0; i < n; i++)
		size[root_of(v, i)]++;
	for (i = 0; i < n; i++)
		if (root_of(v, i) == i && v[i].kid)
			walk(v, i, size[i], n);
	for (i = 0; i < n; i++)
		ix[i] = i;
	qsort(ix, n, sizeof *ix, by_rank);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n", v[ix[i]].line);
	free(v);
	free(ix);
	free(size);
	return ferror(f) ? -EIO : 0;
}
