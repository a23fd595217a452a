/* mountinfo.c: /proc/<pid>/mountinfo and /proc/<pid>/mounts as a reader
 * whose root is any place sees them (semantics.md 1.5).
 */
#include <stdlib.h>
#include <string.h>
#include "journal.h"

/* 1.5.2: exactly space, tab, newline and backslash, as \ooo. */
void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++)
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			fprintf(out, "\\%03o", (unsigned char)*s);
		else
			fputc(*s, out);
}

/* dir relative to top ("" when equal); top contains dir. */
static const char *below(const char *dir, const char *top)
{
	if (strcmp(top, "/") == 0)
		return dir[1] ? dir : "";
	return dir + strlen(top);
}

/* The path from the reader's root to (m, dir), walking up through parents
 * as prepend_path() does; NULL when the walk never meets the root (1.5.3).
 * The result is malloc'ed. */
static char *path_from(const struct mount *m, const char *dir, struct loc root)
{
	char *path = strdup("");
	for (;;) {
		if (m == root.m && dir_under(dir, root.dir) &&
		    dir_under(root.dir, m->root)) {
			const char *rel = below(dir, root.dir);
			char *full;
			if (asprintf(&full, "%s%s", rel, path) < 0)
				abort();
			free(path);
			if (!*full) {
				free(full);
				full = strdup("/");
			}
			return full;
		}
		if (!m->parent || !dir_under(dir, m->root)) {
			free(path);
			return NULL;
		}
		char *next;
		if (asprintf(&next, "%s%s", below(dir, m->root), path) < 0)
			abort();
		free(path);
		path = next;
		dir = m->mp;
		m = m->parent;
	}
}

/* The mountpoint of m as a reader with that root sees it (field 5), or
 * NULL when it cannot see m; malloc'ed. */
char *mount_path(const struct mount *m, struct loc root)
{
	return path_from(m, m->root, root);
}

/* Whether the walk up from (m, dir) meets root: is_path_reachable(). */
bool reaches(const struct mount *m, const char *dir, struct loc root)
{
	char *p = path_from(m, dir, root);
	free(p);
	return p != NULL;
}

static bool reachable(const struct mount *m, struct loc root)
{
	return reaches(m, m->root, root);
}

/* 1.5.5: the first group up the master chain with a member in the reader's
 * namespace whose root the reader can see. */
static unsigned dominating(const struct mount *m, struct ns *ns, struct loc root)
{
	for (const struct mount *s = m->master; s; s = s->master) {
		const struct mount *p = s;
		do {
			if (p->ns == ns && reachable(p, root))
				return p->group;
			p = next_peer(p);
		} while (p != s);
	}
	return 0;
}

static void put_mount_flags(FILE *out, unsigned f)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ MNT_NOSUID, ",nosuid" }, { MNT_NODEV, ",nodev" },
		{ MNT_NOEXEC, ",noexec" }, { MNT_NOATIME, ",noatime" },
		{ MNT_NODIRATIME, ",nodiratime" }, { MNT_RELATIME, ",relatime" },
		{ MNT_NOSYMFOLLOW, ",nosymfollow" },
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (f & names[i].bit)
			fputs(names[i].name, out);
}

/* "ro"/"rw", then the superblock flags that are set. */
static void put_sb_flags(FILE *out, unsigned f)
{
	fputs(f & SB_RDONLY ? " ro" : " rw", out);
	if (f & SB_SYNC)
		fputs(",sync", out);
	if (f & SB_DIRSYNC)
		fputs(",dirsync", out);
	if (f & SB_MAND)
		fputs(",mand", out);
	if (f & SB_LAZYTIME)
		fputs(",lazytime", out);
}

static void put_optional(FILE *out, const struct mount *m, struct ns *ns,
			 struct loc root)
{
	if (m->group)
		fprintf(out, " shared:%u", m->group);
	if (m->master) {
		unsigned master = m->master->group, dom = dominating(m, ns, root);
		fprintf(out, " master:%u", master);
		if (dom && dom != master)
			fprintf(out, " propagate_from:%u", dom);
	}
	if (m->unbindable)
		fputs(" unbindable", out);
}

static void put_line(FILE *out, const struct mount *m, const char *path,
		     struct ns *ns, struct loc root)
{
	fprintf(out, "%u %u %u:%u ", m->id, m->parent ? m->parent->id : m->id,
		m->fs->major, m->fs->dev);
	put_escaped(out, m->root);
	fputc(' ', out);
	put_escaped(out, path);
	fputs(m->flags & MNT_RDONLY ? " ro" : " rw", out);
	put_mount_flags(out, m->flags);
	put_optional(out, m, ns, root);
	fputs(" - ", out);
	put_escaped(out, m->fs->type);
	fputc(' ', out);
	put_escaped(out, *m->devname ? m->devname : "none");
	put_sb_flags(out, m->fs->flags);
	if (*m->fs->opts)
		fprintf(out, ",%s", m->fs->opts);
	fputc('\n', out);
}

/* Lines in creation order (1.5.4), only the mounts the reader can reach. */
void render_mountinfo(const struct graph *g, struct ns *ns, struct loc root,
		      FILE *out)
{
	for (struct list *l = g->order.next; l != &g->order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		char *path = m->ns == ns ? path_from(m, m->root, root) : NULL;
		if (path)
			put_line(out, m, path, ns, root);
		free(path);
	}
}

/* /proc/<pid>/mounts: "source mountpoint fstype opts 0 0", the leading
 * rw/ro being the effective state (1.5.2). */
void render_mounts(const struct graph *g, struct ns *ns, struct loc root,
		   FILE *out)
{
	for (struct list *l = g->order.next; l != &g->order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		char *path = m->ns == ns ? path_from(m, m->root, root) : NULL;
		if (!path)
			continue;
		put_escaped(out, *m->devname ? m->devname : "none");
		fputc(' ', out);
		put_escaped(out, path);
		fputc(' ', out);
		put_escaped(out, m->fs->type);
		/* the effective state, then superblock, mount, fs options */
		unsigned sb = m->fs->flags;
		if (m->flags & MNT_RDONLY)
			sb |= SB_RDONLY;
		put_sb_flags(out, sb);
		put_mount_flags(out, m->flags);
		if (*m->fs->opts)
			fprintf(out, ",%s", m->fs->opts);
		fputs(" 0 0\n", out);
		free(path);
	}
}

/* findmnt's PROPAGATION column: libmount's flags from the optional
 * fields, written as findmnt writes them.  Malloc'ed. */
static char *propagation(const struct mount *m)
{
	char *s;
	if (asprintf(&s, "%s%s%s", m->group ? "shared" : "private",
		     m->master ? ",slave" : "",
		     m->unbindable ? ",unbindable" : "") < 0)
		abort();
	return s;
}

/* findmnt's SOURCE: the device, and a bind mount's directory of it as
 * "dev[/dir]".  Malloc'ed. */
char *mount_source(const struct mount *m)
{
	const char *dev = *m->devname ? m->devname : "none";
	char *s;
	if (asprintf(&s, strcmp(m->root, "/") ? "%s[%s]" : "%s", dev,
		     m->root) < 0)
		abort();
	return s;
}

/* libsmartcols writes control characters, and a backslash that starts
 * "\x", as \xHH; the rest (spaces too) as they are.  Malloc'ed. */
static char *safe(const char *s)
{
	char *out = malloc(4 * strlen(s) + 1), *o = out;
	if (!out)
		abort();
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f ||
		    (*s == '\\' && s[1] == 'x'))
			o += sprintf(o, "\\x%02x", (unsigned char)*s);
		else
			*o++ = *s;
	*o = '\0';
	return out;
}

/* Terminal cells of UTF-8 text (every character one cell wide). */
static size_t cells(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

enum { TARGET, SOURCE, FSROOT, PROPAGATION, OPT_FIELDS, NCOLS };

struct tree {
	struct ns *ns;
	struct loc root;
	char *(*rows)[NCOLS];  /* malloc'ed cells */
	size_t n, cap;
};

static void add_row(struct tree *t, const struct mount *m, const char *lead,
		    const char *path)
{
	char *(*r)[NCOLS], *opt;
	size_t len;
	FILE *f;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		if (!(t->rows = realloc(t->rows, t->cap * sizeof *t->rows)))
			abort();
	}
	r = &t->rows[t->n++];
	if (!(f = open_memstream(&opt, &len)))
		abort();
	put_optional(f, m, t->ns, t->root);
	fclose(f);
	char *p = safe(path), *src = mount_source(m);
	if (asprintf(&(*r)[TARGET], "%s%s", lead, p) < 0)
		abort();
	free(p);
	(*r)[SOURCE] = safe(src);
	free(src);
	(*r)[FSROOT] = safe(m->root);
	(*r)[PROPAGATION] = propagation(m);
	(*r)[OPT_FIELDS] = strdup(*opt ? opt + 1 : "");
	free(opt);
}

static int by_id(const void *a, const void *b)
{
	unsigned x = (*(struct mount *const *)a)->id;
	unsigned y = (*(struct mount *const *)b)->id;
	return (x > y) - (x < y);
}

static void push(struct mount ***v, size_t *n, size_t *cap, struct mount *m)
{
	if (*n == *cap && !(*v = realloc(*v, (*cap = 2 * *cap + 8) *
					 sizeof **v)))
		abort();
	(*v)[(*n)++] = m;
}

/* The children of m the reader sees, by mount id: the order in which
 * libmount gives findmnt a parent's children.  Malloc'ed. */
static struct mount **children(const struct mount *m, struct loc root,
			       size_t *n)
{
	struct mount **v = NULL;
	size_t cap = 0;
	*n = 0;
	for (struct list *l = m->mounts.next; l != &m->mounts; l = l->next) {
		struct mount *c = list_entry(l, struct mount, child);
		if (reachable(c, root))
			push(&v, n, &cap, c);
	}
	qsort(v, *n, sizeof *v, by_id);
	return v;
}

/* The tops of the reader's tree, by id: the mounts it reaches whose
 * parent it does not (the one holding its root, or several in a jail
 * that is no mount point of its own).  Malloc'ed. */
static struct mount **tops(struct ns *ns, struct loc root, size_t *n)
{
	struct mount **v = NULL;
	size_t cap = 0;
	*n = 0;
	for (struct mount *m = ns->root; m; m = next_in_tree(m, ns->root))
		if (reachable(m, root) &&
		    !(m->parent && reachable(m->parent, root)))
			push(&v, n, &cap, m);
	qsort(v, *n, sizeof *v, by_id);
	return v;
}

/* m's line, then its subtree drawn as findmnt draws it: lead is what the
 * lines of m's ancestors put in front ("│ " or "  " each). */
static void add_subtree(struct tree *t, const struct mount *m,
			const char *lead, bool top, bool last)
{
	char *self, *below, *path = mount_path(m, t->root);
	size_t n;
	struct mount **kids = children(m, t->root, &n);
	if (asprintf(&self, "%s%s", lead, top ? "" : last ? "└─" : "├─") < 0 ||
	    asprintf(&below, "%s%s", lead, top ? "" : last ? "  " : "│ ") < 0)
		abort();
	add_row(t, m, self, path);
	for (size_t i = 0; i < n; i++)
		add_subtree(t, kids[i], below, false, i + 1 == n);
	free(kids);
	free(below);
	free(self);
	free(path);
}

/* Cells padded to their column's width; no trailing blanks. */
static void put_row(FILE *out, char *const *cell, const size_t *width,
		    unsigned ncols)
{
	size_t pad = 0;
	for (unsigned i = 0; i < ncols; i++) {
		if (!*cell[i]) {
			pad += width[i] + 1;
			continue;
		}
		fprintf(out, "%*s%s", (int)pad, "", cell[i]);
		pad = width[i] - cells(cell[i]) + 1;
	}
	fputc('\n', out);
}

/* The tree as `findmnt -o TARGET,SOURCE,FSROOT,PROPAGATION` shows it to a
 * reader with that root, OPT-FIELDS too when asked: every mount it can
 * reach, under its parent, children by id. */
void render_tree(struct ns *ns, struct loc root, bool opt_fields,
		 FILE *out)
{
	static char *head[NCOLS] = { "TARGET", "SOURCE", "FSROOT",
				     "PROPAGATION", "OPT-FIELDS" };
	struct tree t = { .ns = ns, .root = root };
	unsigned ncols = opt_fields ? NCOLS : NCOLS - 1;
	size_t width[NCOLS], n;
	struct mount **top = tops(ns, root, &n);
	for (size_t i = 0; i < n; i++)
		add_subtree(&t, top[i], "", true, true);
	free(top);
	for (unsigned c = 0; c < ncols; c++) {
		width[c] = cells(head[c]);
		for (size_t i = 0; i < t.n; i++)
			if (cells(t.rows[i][c]) > width[c])
				width[c] = cells(t.rows[i][c]);
	}
	put_row(out, head, width, ncols);
	for (size_t i = 0; i < t.n; i++) {
		put_row(out, t.rows[i], width, ncols);
		for (unsigned c = 0; c < NCOLS; c++)
			free(t.rows[i][c]);
	}
	free(t.rows);
}
