/* dot.c: the propagation graph in Graphviz's DOT language (sharectl graph).
 *
 * What is drawn: each peer group as a cluster of its mounts, and an edge
 * from a slave's master mount to the slave, the way events travel
 * (semantics.md 1.2).  Mounts that neither propagate nor receive (private
 * and unbindable ones without slaves) are left out, so that a host of
 * thousands of mounts draws as the few that share.  A node is labelled
 * with the mount's path from the namespace root and its source; each jail
 * is a note listing the mounts it sees (path as it sees it, and source),
 * with a dashed line to those of them that are drawn.  When there are
 * mount namespaces besides the first (unshare -m), each is a dashed box
 * of its own: a peer group that spans namespaces is a cluster in each,
 * joined by a dotted line, and masters reach their slaves across boxes.
 */
#include <stdlib.h>
#include "journal.h"

static bool drawn(const struct mount *m)
{
	return m->group || m->master || !list_empty(&m->slaves);
}

/* A DOT string's body: quotes and backslashes escaped, a newline as the
 * escape \n; other control characters would only garble the picture. */
static void put_text(FILE *out, const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc((unsigned char)*s < 0x20 ? '?' : *s, out);
}

static int put_node(FILE *out, const struct mount *m, struct loc top,
		    const char *indent)
{
	int err;
	char *path = mount_path(m, top, &err), *src = mount_source(m);
	if (!err && src) {
		fprintf(out, "%sm%u [label=\"", indent, m->id);
		put_text(out, path ? path : "(unreachable)");
		fputs("\\n", out);
		put_text(out, src);
		fputs("\"];\n", out);
	}
	free(src);
	free(path);
	return err ?: src ? 0 : -ENOMEM;
}

/* Whether m comes first, in creation order, of the peers in ns: the one
 * that opens the group's cluster. */
static bool first_peer(const struct mount *m, const struct ns *ns)
{
	for (const struct mount *p = next_peer(m); p != m; p = next_peer(p))
		if (p->ns == ns && !p->dead && p->seq < m->seq)
			return false;
	return true;
}

static int put_cluster(FILE *out, const struct mount *m, struct ns *ns,
		       struct loc top, const char *in)
{
	int err = 0;
	fprintf(out, "%ssubgraph cluster_g%u_%u {\n%s\tlabel=\"shared:%u\";\n",
		in, m->group, ns->id, in, m->group);
	const struct mount *p = m;
	char deeper[8];
	snprintf(deeper, sizeof deeper, "%s\t", in);
	do {
		if (p->ns == ns && !p->dead)
			err = put_node(out, p, top, deeper);
		p = next_peer(p);
	} while (!err && p != m);
	fprintf(out, "%s}\n", in);
	return err;
}

/* The drawn mounts of ns; boxed: in a cluster of the namespace's own. */
static int put_ns(FILE *out, const struct graph *g, struct ns *ns, bool boxed)
{
	struct loc top = mount_root(ns->root);
	const char *in = boxed ? "\t\t" : "\t";
	int err = 0;
	if (boxed)
		fprintf(out, "\tsubgraph cluster_ns%u {\n\t\tlabel=\"mount "
			"namespace %u\";\n\t\tstyle=dashed;\n", ns->id, ns->id);
	for (struct list *l = g->order.next; !err && l != &g->order;
	     l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		if (m->ns != ns || !drawn(m))
			continue;
		if (!m->group)
			err = put_node(out, m, top, in);
		else if (first_peer(m, ns))
			err = put_cluster(out, m, ns, top, in);
	}
	if (boxed)
		fputs("\t}\n", out);
	return err;
}

/* A peer group across namespaces: a dotted line from its first mount in
 * the first namespace it has mounts in to its first mount in each other. */
static void put_peer_links(FILE *out, const struct graph *g)
{
	for (struct list *l = g->order.next; l != &g->order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		if (!m->group || m->dead || !first_peer(m, m->ns))
			continue;
		const struct mount *lead = m;
		for (const struct mount *p = next_peer(m); p != m;
		     p = next_peer(p))
			if (!p->dead && p->seq < lead->seq)
				lead = p;
		if (lead != m && lead->ns != m->ns)
			fprintf(out, "\tm%u -> m%u [style=dotted, dir=none, "
				"label=\"shared:%u\"];\n", lead->id, m->id,
				m->group);
	}
}

/* A jail: its path, then every mount it sees, one per left-justified
 * line; dashed lines to the drawn ones. */
static int put_jail(FILE *out, const struct graph *g, struct ns *ns,
		    const struct view *v, size_t i)
{
	int err = 0;
	fprintf(out, "\tj%zu [shape=note, label=\"jail ", i);
	put_text(out, v->name);
	if (!v->root.m)
		fputs(" (gone)", out);
	fputs("\\l", out);
	for (struct list *l = g->order.next; !err && v->root.m &&
	     l != &g->order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		char *path = m->ns == ns ? mount_path(m, v->root, &err) : NULL;
		char *src = path ? mount_source(m) : NULL;
		if (src) {
			fputs("  ", out);
			put_text(out, path);
			fputs("  ", out);
			put_text(out, src);
			fputs("\\l", out);
		} else if (path) {
			err = -ENOMEM;
		}
		free(src);
		free(path);
	}
	fputs("\"];\n", out);
	for (struct list *l = g->order.next; v->root.m && l != &g->order;
	     l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		if (m->ns == ns && drawn(m) && reaches(m, m->root, v->root))
			fprintf(out, "\tj%zu -> m%u [style=dashed, "
				"arrowhead=none];\n", i, m->id);
	}
	return err;
}

int render_graph(const struct graph *g, struct ns *ns,
		 const struct view *jails, size_t njails, FILE *out)
{
	bool many = g->nss.next->next != &g->nss;
	int err = 0;
	fputs("digraph propagation {\n\trankdir=LR;\n"
	      "\tnode [shape=box, fontname=\"monospace\"];\n", out);
	err = put_ns(out, g, ns, many);
	for (struct list *l = g->nss.next; !err && many && l != &g->nss;
	     l = l->next) {
		struct ns *other = list_entry(l, struct ns, link);
		if (other != ns)
			err = put_ns(out, g, other, true);
	}
	for (struct list *l = g->order.next; l != &g->order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		if (m->master && !m->dead && (many ||
		    (m->ns == ns && m->master->ns == ns)))
			fprintf(out, "\tm%u -> m%u;\n", m->master->id, m->id);
	}
	if (many)
		put_peer_links(out, g);
	for (size_t i = 0; !err && i < njails; i++)
		err = put_jail(out, g, jails[i].root.m ? jails[i].root.m->ns :
			       ns, &jails[i], i);
	fputs("}\n", out);
	return err;
}
