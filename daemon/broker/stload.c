/* stload.c: the saved lines in the order a whole save writes them, for
 * state_load().
 *
 * The journal writes a propagation tree again, whole, at the end of the
 * state whenever it changes (stcache.c): the trees come back in the order
 * they last changed, not in the order of the table.  Within a tree the
 * order is kept (peer rings, slave lists), but the load makes the peer
 * groups in line order, and their numbers, which mountinfo shows, follow:
 * so the trees are put back in the order a whole save gives them, by the
 * oldest mount of each tree's top group (put_all(), state.c).  A line of
 * another kind keeps its place after the mounts'.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker.h"

struct ln {
	const char *line;
	int kid, master;
	unsigned group;
	size_t up;             /* union-find: the line it joined */
	uint64_t rank;         /* its tree's, once found */
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

static int by_rank(const void *a, const void *b)
{
	const struct ln *x = &sorted_v[*(const size_t *)a],
			*y = &sorted_v[*(const size_t *)b];
	uint64_t p = sorted_v[root_of(sorted_v, (size_t)(x - sorted_v))].rank,
		 q = sorted_v[root_of(sorted_v, (size_t)(y - sorted_v))].rank;
	if (p != q)
		return (p > q) - (p < q);
	return (x > y) - (x < y);      /* stable: line order */
}

/* Lines of one tree joined: same group, or a master's line. */
static void trees(struct ln *v, size_t n, size_t *ix)
{
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	qsort(ix, n, sizeof *ix, by_group);
	for (size_t i = 1; i < n; i++)
		if (v[ix[i]].group && v[ix[i]].group == v[ix[i - 1]].group)
			join(v, ix[i], ix[i - 1]);
	qsort(ix, n, sizeof *ix, by_kid);
	for (size_t i = 0; i < n; i++) {
		size_t lo = 0, hi = n;
		while (v[i].master && lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (v[ix[mid]].kid < v[i].master)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (v[i].master && lo < n && v[ix[lo]].kid == v[i].master)
			join(v, i, ix[lo]);
	}
}

/* The cache's lines to f, trees in the order of their oldest top mount. */
int state_ordered(struct broker *b, FILE *f)
{
	size_t n = HASH_CNT(hh, b->st.lines), i = 0;
	struct ln *v = calloc(n + 1, sizeof *v);
	size_t *ix = calloc(n + 1, sizeof *ix);
	if (!v || !ix) {
		free(v);
		free(ix);
		return -ENOMEM;
	}
	for (const struct stline *l = b->st.lines; l; l = l->hh.next, i++) {
		struct ln *x = &v[i];
		x->line = l->line;
		x->up = i;
		x->rank = UINT64_MAX;
		if (sscanf(l->line, "%d %*u:%*u %u %d", &x->kid, &x->group,
			   &x->master) != 3)
			x->kid = x->master = 0, x->group = 0;
	}
	sorted_v = v;
	trees(v, n, ix);
	for (i = 0; i < n; i++) {
		struct mount *m = v[i].kid && !v[i].master ?
				  mount_of_kid(b, v[i].kid) : NULL;
		struct ln *r = &v[root_of(v, i)];
		if (!v[i].kid)
			r->rank = UINT64_MAX;          /* not a mount's */
		else if (m && m->seq < r->rank)
			r->rank = m->seq;
		else if (r->rank == UINT64_MAX)
			r->rank = UINT64_MAX - 1;      /* after, before others */
	}
	for (i = 0; i < n; i++)
		ix[i] = i;
	qsort(ix, n, sizeof *ix, by_rank);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n", v[ix[i]].line);
	free(v);
	free(ix);
	return ferror(f) ? -EIO : 0;
}
