/* mtparse-test: the broker's mount-table parser (daemon/broker/base/mtparse.c)
 * on golden files (test/unit/golden/NAME.mountinfo or NAME.mounts): each
 * is parsed line by line, printed in a plain form, and compared with
 * NAME.expected.  TAP. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/mtparse.h"
#define TAP_MAIN
#include "tap.h"

/* One entry as the golden files spell it; paths in brackets, so that
 * spaces and tabs show. */
static void print(FILE *out, const struct entry *e)
{
	fprintf(out, "%d %d %s [%s] [%s] %s %s [%s] %s mnt=%#x sb=%#x %s\n",
		e->id, e->parent, e->dev, e->root, e->mp, e->opts, e->type,
		e->source, e->sbopts, flags_named(&mnt_flag_table, e->opts),
		flags_named(&sb_flag_table, e->sbopts), e->propagates ? "propagates" :
		"private");
}

/* The parse of golden file name, as text (malloc'ed). */
static char *parse_file(const char *dir, const char *name, bool mounts)
{
	char path[4096], **lines, *text = NULL;
	size_t n, size = 0;
	struct entry v[64];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (read_lines(path, &lines, &n) < 0)
		return NULL;
	FILE *out = open_memstream(&text, &size);
	for (size_t i = 0; out && i < n && i < 64; i++) {
		int err = mounts ? mt_parse_mounts_line(lines[i], &v[i], v, i) :
			  mt_parse_line(lines[i], &v[i]);
		if (err)
			fprintf(out, "%s\n", err == -EINVAL ? "EINVAL" : "?");
		else
			print(out, &v[i]);
	}
	if (out)
		fclose(out);
	free_lines(lines, n);
	return text;
}

static char *slurp(const char *dir, const char *name)
{
	char path[4096], *text = NULL;
	size_t size = 0;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "re"), *out = open_memstream(&text, &size);
	for (int c; f && out && (c = getc(f)) != EOF; )
		putc(c, out);
	if (f)
		fclose(f);
	if (out)
		fclose(out);
	return f ? text : (free(text), NULL);
}

static void golden(const char *dir, const char *base, bool mounts)
{
	char in[256], want[256];
	snprintf(in, sizeof in, "%s.%s", base, mounts ? "mounts" : "mountinfo");
	snprintf(want, sizeof want, "%s.expected", base);
	char *got = parse_file(dir, in, mounts), *exp = slurp(dir, want);
	bool same = got && exp && strcmp(got, exp) == 0;
	if (!same && got)
		printf("# got:\n%s", got);
	ok(same, "%s parses as %s says", in, want);
	free(got);
	free(exp);
}

/* The table of golden file NAME.mountinfo, as table_read() makes one of
 * the kernel's (a line that does not parse: id 0), not the kernel's: no
 * watch. */
static int load(struct table *t, const char *dir, const char *base)
{
	char path[4160];
	snprintf(path, sizeof path, "%s/%s.mountinfo", dir, base);
	*t = (struct table){ .watch = -1 };
	if (read_lines(path, &t->lines, &t->n) < 0 ||
	    !(t->v = calloc(t->n ? t->n : 1, sizeof *t->v)))
		return -1;
	for (size_t i = 0; i < t->n; i++)
		if (mt_parse_line(t->lines[i], &t->v[i]) < 0)
			memset(&t->v[i], 0, sizeof t->v[i]);
	return (t->ix = entry_index(t->v, t->n)) ? 0 : -1;
}

/* Each line "PATH ID" of NAME.walks: a walk of PATH in NAME.mountinfo
 * ends on mount ID (0: on none), the table scanned and sorted alike:
 * the top of a stack, a place inside a mount, the first listed of two
 * mounts on one place, not a mount beneath another. */
static void walks(const char *dir, const char *base)
{
	struct table t;
	char path[4160], p[4096], **want = NULL;
	size_t n = 0;
	snprintf(path, sizeof path, "%s/%s.walks", dir, base);
	bool read = load(&t, dir, base) == 0 &&
		    read_lines(path, &want, &n) == 0 && n > 0;
	for (int sorted = 0; sorted < 2; sorted++) {
		bool same = read && (!sorted || table_sort(&t) == 0);
		for (size_t i = 0; same && i < n; i++) {
			int id = -1;
			if (sscanf(want[i], "%4095s %d", p, &id) != 2)
				same = false;
			const struct entry *e = table_walk(&t, p);
			if (same && (e ? e->id : 0) != id) {
				printf("# %s: %d, not %d\n", p, e ? e->id : 0, id);
				same = false;
			}
		}
		ok(same, "%s.mountinfo walked as %s.walks says, %s", base,
		   base, sorted ? "sorted" : "scanned");
	}
	free_lines(want, n);
	table_free(&t);
}

int main(void)
{
	const char *src = getenv("srcdir");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/test/unit/golden", src ? src : ".");
	golden(dir, "basic", false);
	golden(dir, "old", true);
	walks(dir, "stack");
	return tap_done();
}
