/* oom-dump.c: the whole graph as text, for oom-test.c to compare before
 * and after a failed try (oom-dump.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dry.h"
#include "oom-dump.h"

static int by_value(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

/* A pool as the ids it hands out from now on: the free ids below its
 * true end, then the end (ids given back at the top join it), whatever
 * the heap's layout. */
static void dump_pool(FILE *o, const char *name, const struct idpool *p)
{
	unsigned *v = malloc((p->n + 1) * sizeof *v), next = p->next;
	size_t n = p->n;
	if (n)                 /* heap is NULL while nothing was freed */
		memcpy(v, p->heap, n * sizeof *v);
	qsort(v, n, sizeof *v, by_value);
	while (n && v[n - 1] == next - 1) {
		next--;
		n--;
	}
	fprintf(o, "%s free", name);
	for (size_t i = 0; i < n; i++)
		fprintf(o, " %u", v[i]);
	fprintf(o, " from %u\n", next);
	free(v);
}

static unsigned id_of(const struct mount *m)
{
	return m ? m->id : 0;
}

static void dump_mount(FILE *o, const struct mount *m)
{
	/* not MNT_EXPIRE's mark (engine.h: not the graph): a first call
	 * whose checker snapshot failed still marks and answers EAGAIN */
	fprintf(o, "m%u seq %llu parent %u mp %s root %s dev %s flags %x "
		"group %u master %u ub %d file %d dead %d ns %u "
		"fs %u:%u refs %u sb %x %s %s peer %u; slaves",
		m->id, (unsigned long long)m->seq, id_of(m->parent), m->mp,
		m->root, m->devname, m->flags, m->group, id_of(m->master),
		m->unbindable, m->file, m->dead, m->ns->id,
		m->fs->major, m->fs->dev, m->fs->refs, m->fs->flags,
		m->fs->type, m->fs->opts, next_peer(m)->id);
	for (const struct list *l = m->slaves.next; l != &m->slaves; l = l->next)
		fprintf(o, " %u", list_entry(l, struct mount, slave)->id);
	fputs("; children", o);
	for (const struct list *l = m->mounts.next; l != &m->mounts; l = l->next)
		fprintf(o, " %u", list_entry(l, struct mount, child)->id);
	fputc('\n', o);
}

/* Everything the graph is: every namespace's mountinfo, every mount with
 * its links in order, the creation order, the id pools, the counters,
 * and an empty journal. */
char *graph_dump(struct dry *d)
{
	struct graph *g = &d->g;
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	for (struct list *l = g->nss.next; l != &g->nss; l = l->next) {
		struct ns *ns = list_entry(l, struct ns, link);
		fprintf(o, "ns %u count %u root %u\n", ns->id, ns->count,
			id_of(ns->root));
		if (ns->root && render_mountinfo(g, ns, mount_root(ns->root), o))
			fputs("render failed\n", o);
	}
	for (size_t id = 0; id < g->capid; id++)
		if (g->by_id[id])
			dump_mount(o, g->by_id[id]);
	fputs("order", o);
	for (struct list *l = g->order.next; l != &g->order; l = l->next)
		fprintf(o, " %u", list_entry(l, struct mount, order)->id);
	fputc('\n', o);
	dump_pool(o, "mount ids", &g->mount_ids);
	dump_pool(o, "group ids", &g->group_ids);
	fprintf(o, "mounts %u keys %zu seq %llu fs %u ns %u journal %zu "
		"dead %zu planning %d\n", g->nmounts, g->keys.n,
		(unsigned long long)g->seq, g->next_fs, g->next_ns, g->nundo,
		g->ndead, g->planning);
	fclose(o);
	return out;
}
