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

int main(void)
{
	const char *src = getenv("srcdir");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/test/unit/golden", src ? src : ".");
	golden(dir, "basic", false);
	golden(dir, "old", true);
	return tap_done();
}
