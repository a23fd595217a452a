/*
 * mtnorm [-P] [-b BASE] [FILE] - normalise the output of native-run.sh,
 * broker-run.sh or sharedry so the two can be diffed (kernel-differential
 * harness).
 *
 * Input: an optional "base PATH" line, result lines (passed through), and
 * views: "--- view V" followed by /proc/self/mountinfo lines seen with root V.
 * Each view is printed as a forest in depth-first pre-order, children sorted
 * by mountpoint, one line per mount:
 *     <2 spaces per depth><mountpoint> <root> <source> <fstype> <opts>[ <optional>...]
 * with the base path written "B" and peer-group ids renumbered g1, g2, ... by
 * first appearance (one map for shared:/master:/propagate_from:, restarted
 * per view). Mount ids, device numbers and the filesystems' own superblock
 * options are dropped:
 * ids and group numbers are allocated machine-wide (semantics.md 1.3, 1.4),
 * line order is creation order (1.5.4); only the structure is comparable.
 * The host view "/" keeps only the mounts at or below BASE; jail views keep
 * everything they list.
 *
 * After the tree, "--- order" lists the same mounts in line order (the
 * kernel's creation order, semantics.md 1.5.4) as "<n> <parent n or ->
 * <mountpoint> <optional>", with n the line's rank and group ids
 * renumbered afresh by first appearance in that order: that compares the
 * order of creation and of group allocation, which the tree does not.
 *
 * -P drops the propagation fields (shared:, master:, propagate_from:,
 * unbindable) for the broker differential (broker-run.sh): there the
 * kernel's own table is all private, the propagation lives in the broker's
 * graph. The "--- order" section stays: the broker makes each mount at its
 * staging directory and moves it into place, but a move keeps a mount's
 * place in mountinfo (creation order), and the broker creates in the
 * kernel's order. A "--- files" section (the paths a runner saw) ends a
 * view and is passed through.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mtnorm.h"

const char *base;        /* sandbox path, from -b or the "base" line */
bool no_propagation;     /* -P */

static int cmp_mnt(const void *pa, const void *pb)
{
	const struct mnt *a = pa, *b = pb;
	int c;

	if ((c = strcmp(a->mp, b->mp)) || (c = strcmp(a->root, b->root)) ||
	    (c = strcmp(a->src, b->src)) || (c = strcmp(a->fstype, b->fstype)) ||
	    (c = strcmp(a->opts, b->opts)))
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Number of group RAW in this view: 1, 2, ... by first appearance. */
static size_t group_number(struct view *v, const char *raw)
{
	size_t i;

	for (i = 0; i < v->ngroups; i++)
		if (strcmp(v->groups[i], raw) == 0)
			return i + 1;
	v->groups = xrealloc(v->groups, (v->ngroups + 1) * sizeof(char *));
	v->groups[v->ngroups++] = strdup(raw);
	return v->ngroups;
}

/* Optional fields with group ids renumbered; other tags stay as they are. */
static void put_optional(struct view *v, const char *optional)
{
	static const char *const tags[] = { "shared:", "master:",
					    "propagate_from:" };
	char *copy = strdup(optional), *save = NULL, *tok;
	size_t i, len;

	for (tok = strtok_r(copy, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (no_propagation)
			continue;  /* they are all propagation, see -P */
		for (i = 0; i < 3; i++) {
			len = strlen(tags[i]);
			if (strncmp(tok, tags[i], len) == 0) {
				printf(" %sg%zu", tags[i],
				       group_number(v, tok + len));
				break;
			}
		}
		if (i == 3)
			printf(" %s", tok);
	}
	free(copy);
}

/* Print M and, depth first, its children (already in sorted order). */
static void print_tree(struct view *v, struct mnt *m, int depth)
{
	size_t i;

	m->printed = true;
	printf("%*s", 2 * depth, "");
	put_path(m->mp);
	putchar(' ');
	put_escaped(m->root);
	putchar(' ');
	put_escaped(m->src);
	putchar(' ');
	put_escaped(m->fstype);
	printf(" %s", m->opts);
	put_optional(v, m->optional);
	putchar('\n');
	for (i = 0; i < v->n; i++)
		if (!v->m[i].printed && v->m[i].parent == m->id)
			print_tree(v, &v->m[i], depth + 1);
}

static long rank_of(const struct view *v, long id)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->m[i].id == id)
			return (long)i + 1;
	return 0;
}

static void forget_groups(struct view *v)
{
	for (size_t i = 0; i < v->ngroups; i++)
		free(v->groups[i]);
	free(v->groups);
	v->groups = NULL;
	v->ngroups = 0;
}

/* The mounts in line order, before the tree sorts them. */
static void print_order(struct view *v)
{
	puts("--- order");
	for (size_t i = 0; i < v->n; i++) {
		long p = rank_of(v, v->m[i].parent);
		printf("%zu ", i + 1);
		if (p)
			printf("%ld ", p);
		else
			fputs("- ", stdout);
		put_path(v->m[i].mp);
		put_optional(v, v->m[i].optional);
		putchar('\n');
	}
	forget_groups(v);
}

static bool parent_listed(const struct view *v, const struct mnt *m)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (v->m[i].id == m->parent && &v->m[i] != m)
			return true;
	return false;
}

/* Print the view collected so far and start afresh. */
static void flush_view(struct view *v)
{
	size_t i;

	if (!v->n && !v->ngroups)
		return;
	print_order(v);
	qsort(v->m, v->n, sizeof(*v->m), cmp_mnt);
	for (i = 0; i < v->n; i++)
		if (!v->m[i].printed && !parent_listed(v, &v->m[i]))
			print_tree(v, &v->m[i], 0);
	/* Only a parent cycle could leave mounts unprinted: show them. */
	for (i = 0; i < v->n; i++)
		if (!v->m[i].printed)
			print_tree(v, &v->m[i], 0);
	for (i = 0; i < v->n; i++)
		free_mnt(&v->m[i]);
	forget_groups(v);
	free(v->m);
	memset(v, 0, sizeof(*v));
}

static void add_line(struct view *v, char *line)
{
	char *raw = strdup(line); /* parsing cuts LINE into fields */
	struct mnt m;

	if (!parse_mountinfo(line, &m)) {
		printf("? %s\n", raw);
		free(raw);
		return;
	}
	free(raw);
	if (v->host && base && !under_base(m.mp)) {
		free_mnt(&m);
		return;
	}
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 64;
		v->m = xrealloc(v->m, v->cap * sizeof(*v->m));
	}
	m.seq = v->n;
	v->m[v->n++] = m;
}

static void normalise(FILE *in)
{
	struct view v = { 0 };
	bool in_view = false;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, in)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (strncmp(line, "--- view ", 9) == 0) {
			flush_view(&v);
			in_view = true;
			/* "/" and "NAME:/" (a copied namespace) are
			 * whole tables: keep only the sandbox there */
			len = (ssize_t)strlen(line + 9);
			v.host = strcmp(line + 9, "/") == 0 ||
				 (len > 2 && strcmp(line + 9 + len - 2, ":/") == 0);
			fputs("--- view ", stdout);
			put_path(line + 9);
			putchar('\n');
		} else if (strcmp(line, "--- files") == 0) {
			flush_view(&v);
			in_view = false;
			puts(line);
		} else if (in_view) {
			add_line(&v, line);
		} else if (strncmp(line, "base ", 5) == 0) {
			base = strdup(line + 5);
		} else {
			puts(line);
		}
	}
	flush_view(&v);
	free(line);
}

int main(int argc, char **argv)
{
	FILE *in = stdin;
	int c;

	while ((c = getopt(argc, argv, "Pb:")) != -1) {
		if (c == 'P') {
			no_propagation = true;
		} else if (c == 'b') {
			base = optarg;
		} else {
			fprintf(stderr, "usage: mtnorm [-P] [-b BASE] [FILE]\n");
			return 2;
		}
	}
	if (optind < argc && !(in = fopen(argv[optind], "r"))) {
		perror(argv[optind]);
		return 1;
	}
	normalise(in);
	return fflush(stdout) == 0 ? 0 : 1;
}
