/* tree.c: the mount tree as util-linux findmnt draws it (sharectl tree,
 * sharedry --tree): -o TARGET,SOURCE,FSROOT,PROPAGATION[,OPT-FIELDS].
 *
 * The rows are made first, every cell its own string, then written padded
 * to their columns' widths; out of memory, nothing is written.
 */
#include <stdint.h>
#include <string.h>
#include "journal.h"

/* findmnt's PROPAGATION column: libmount's flags from the optional
 * fields, written as findmnt writes them. */
static char *propagation(const struct mount *m)
{
	return eng_asprintf("%s%s%s", m->group ? "shared" : "private",
			    m->master ? ",slave" : "",
			    m->unbindable ? ",unbindable" : "");
}

/* libsmartcols writes control characters, and a backslash that starts
 * "\x", as \xHH; the rest (spaces too) as they are.  lead goes first,
 * as it is. */
static char *safe(const char *lead, const char *s)
{
	size_t n = strlen(lead);
	char *out = s ? eng_malloc(n + 4 * strlen(s) + 1) : NULL, *o = out;
	if (!out)
		return NULL;
	memcpy(o, lead, n);
	o += n;
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

static int add_row(struct tree *t, const struct mount *m, const char *lead,
		   const char *path)
{
	char opt[OPTIONAL_MAX], *src = mount_source(m);
	char *row[NCOLS];
	optional_fields(opt, m, t->ns, t->root);
	row[TARGET] = safe(lead, path);
	row[SOURCE] = safe("", src);
	row[FSROOT] = safe("", m->root);
	row[PROPAGATION] = propagation(m);
	row[OPT_FIELDS] = eng_strdup(*opt ? opt + 1 : "");
	free(src);
	bool whole = VEC_RESERVE(t->rows, t->cap, t->n + 1) == 0;
	for (unsigned c = 0; c < NCOLS; c++)
		whole = whole && row[c];
	if (!whole) {
		for (unsigned c = 0; c < NCOLS; c++)
			free(row[c]);
		return -ENOMEM;
	}
	memcpy(t->rows[t->n++], row, sizeof row);
	return 0;
}

static int by_id(const void *a, const void *b)
{
	unsigned x = (*(struct mount *const *)a)->id;
	unsigned y = (*(struct mount *const *)b)->id;
	return (x > y) - (x < y);
}

/* The children of m the reader sees, by mount id: the order in which
 * libmount gives findmnt a parent's children. */
static int children(const struct mount *m, struct loc root,
		    struct mount ***v, size_t *n)
{
	size_t cap = 0;
	*v = NULL;
	*n = 0;
	for (struct list *l = m->mounts.next; l != &m->mounts; l = l->next) {
		struct mount *c = list_entry(l, struct mount, child);
		if (reaches(c, c->root, root) && VEC_PUSH(*v, *n, cap, c))
			return -ENOMEM;
	}
	if (*n)                /* qsort(NULL, 0): undefined (nonnull) */
		qsort(*v, *n, sizeof **v, by_id);
	return 0;
}

/* The tops of the reader's tree, by id: the mounts it reaches whose
 * parent it does not (the one holding its root, or several in a jail
 * that is no mount point of its own). */
static int tops(struct ns *ns, struct loc root, struct mount ***v, size_t *n)
{
	size_t cap = 0;
	*v = NULL;
	*n = 0;
	for (struct mount *m = ns->root; m; m = next_in_tree(m, ns->root))
		if (reaches(m, m->root, root) &&
		    !(m->parent && reaches(m->parent, m->parent->root, root)) &&
		    VEC_PUSH(*v, *n, cap, m))
			return -ENOMEM;
	if (*n)                /* qsort(NULL, 0): undefined (nonnull) */
		qsort(*v, *n, sizeof **v, by_id);
	return 0;
}

/* m's line, then its subtree drawn as findmnt draws it: lead is what the
 * lines of m's ancestors put in front ("│ " or "  " each). */
static int add_subtree(struct tree *t, const struct mount *m,
		       const char *lead, bool top, bool last)
{
	char *path = mount_path(m, t->root, NULL), *below = NULL;
	char *self = eng_asprintf("%s%s", lead,
				  top ? "" : last ? "└─" : "├─");
	struct mount **kids = NULL;
	size_t n = 0;
	int err = path && self ? children(m, t->root, &kids, &n) : -ENOMEM;
	if (!err && !(below = eng_asprintf("%s%s", lead,
					   top ? "" : last ? "  " : "│ ")))
		err = -ENOMEM;
	err = err ?: add_row(t, m, self, path);
	for (size_t i = 0; !err && i < n; i++)
		err = add_subtree(t, kids[i], below, false, i + 1 == n);
	free(kids);
	free(below);
	free(self);
	free(path);
	return err;
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

static void put_tree(FILE *out, const struct tree *t, unsigned ncols)
{
	static char *head[NCOLS] = { "TARGET", "SOURCE", "FSROOT",
				     "PROPAGATION", "OPT-FIELDS" };
	size_t width[NCOLS];
	for (unsigned c = 0; c < ncols; c++) {
		width[c] = cells(head[c]);
		for (size_t i = 0; i < t->n; i++)
			if (cells(t->rows[i][c]) > width[c])
				width[c] = cells(t->rows[i][c]);
	}
	put_row(out, head, width, ncols);
	for (size_t i = 0; i < t->n; i++)
		put_row(out, t->rows[i], width, ncols);
}

/* The tree as `findmnt -o TARGET,SOURCE,FSROOT,PROPAGATION` shows it to a
 * reader with that root, OPT-FIELDS too when asked: every mount it can
 * reach, under its parent, children by id. */
int render_tree(struct ns *ns, struct loc root, bool opt_fields, FILE *out)
{
	struct tree t = { .ns = ns, .root = root };
	struct mount **top;
	size_t n;
	int err = tops(ns, root, &top, &n);
	for (size_t i = 0; !err && i < n; i++)
		err = add_subtree(&t, top[i], "", true, true);
	free(top);
	if (!err)
		put_tree(out, &t, opt_fields ? NCOLS : NCOLS - 1);
	for (size_t i = 0; i < t.n; i++)
		for (unsigned c = 0; c < NCOLS; c++)
			free(t.rows[i][c]);
	free(t.rows);
	return err;
}
