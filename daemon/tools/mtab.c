/* mtab.c: a mountinfo text as lines (proc(5)), for apply to judge what is
 * mounted where: the broker's rendering for the host's root (with the
 * propagation fields the kernel's own table lacks), or the engine's in a
 * dry run.  Paths are host paths, unescaped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mtab.h"
#include "vec.h"

/* fstab(5)'s escapes, in place: \NNN in octal, as libmount unmangles;
 * a backslash before anything else stays as it is. */
void mtab_unescape(char *s)
{
	char *o = s;
	for (; *s; s++)
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	*o = '\0';
}

/* The optional fields of one line: shared:N, master:N, unbindable. */
static void optional(struct mline *m, const char *w)
{
	if (strncmp(w, "shared:", 7) == 0)
		m->group = (unsigned)strtoul(w + 7, NULL, 10);
	else if (strncmp(w, "master:", 7) == 0)
		m->master = (unsigned)strtoul(w + 7, NULL, 10);
	else if (strcmp(w, "unbindable") == 0)
		m->unbindable = true;
}

static int parse_line(struct mline *m, char *line)
{
	char *w[32], *save = NULL;
	int n = 0, dash = -1;
	for (char *s = strtok_r(line, " ", &save); s && n < 32;
	     s = strtok_r(NULL, " ", &save)) {
		if (dash < 0 && n >= 6 && strcmp(s, "-") == 0)
			dash = n;
		w[n++] = s;
	}
	if (dash < 0 || n < dash + 3)
		return -EINVAL;
	*m = (struct mline){ .id = (unsigned)strtoul(w[0], NULL, 10),
			     .parent = (unsigned)strtoul(w[1], NULL, 10),
			     .dev = w[2], .root = w[3], .mp = w[4],
			     .opts = w[5], .type = w[dash + 1],
			     .source = w[dash + 2] };
	for (int i = 6; i < dash; i++)
		optional(m, w[i]);
	/* mountinfo's escapes are fstab's (\040 for a blank) */
	mtab_unescape(m->root);
	mtab_unescape(m->mp);
	mtab_unescape(m->source);
	return 0;
}

/* text (which t then owns) as lines; -EINVAL for one that is not
 * mountinfo. */
int mtab_parse(struct mtab *t, char *text)
{
	char *save = NULL;
	*t = (struct mtab){ .text = text };
	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (VEC_RESERVE(t->v, t->cap, t->n + 1))
			return -ENOMEM;
		if (parse_line(&t->v[t->n], l) < 0)
			return -EINVAL;
		t->n++;
	}
	return 0;
}

void mtab_free(struct mtab *t)
{
	free(t->v);
	free(t->text);
	*t = (struct mtab){ 0 };
}

/* The length of top without its trailing slashes; 0 for the root. */
static size_t top_len(const char *top)
{
	size_t n = strlen(top);
	while (n > 1 && top[n - 1] == '/')
		n--;
	return n == 1 && top[0] == '/' ? 0 : n;
}

/* Whether path is top or below it, by whole components. */
bool mtab_under(const char *path, const char *top)
{
	size_t n = top_len(top);
	if (n == 0)
		return path[0] == '/';
	return strncmp(path, top, n) == 0 && (!path[n] || path[n] == '/');
}

/* The mount on top at exactly path: the last line there, which is how
 * util-linux reads a table too (a stack grown by tucking aside). */
const struct mline *mtab_at(const struct mtab *t, const char *path)
{
	for (size_t i = t->n; i-- > 0; )
		if (strcmp(t->v[i].mp, path) == 0)
			return &t->v[i];
	return NULL;
}

/* The mount that path lies in (the deepest mountpoint above it, the last
 * one there), and in *rootpath the directory of its filesystem that path
 * is: what a bind of path must show as its root. */
const struct mline *mtab_holder(const struct mtab *t, const char *path,
				char **rootpath)
{
	const struct mline *best = NULL;
	for (size_t i = 0; i < t->n; i++)
		if (mtab_under(path, t->v[i].mp) &&
		    (!best || top_len(t->v[i].mp) >= top_len(best->mp)))
			best = &t->v[i];
	if (!best)
		return NULL;
	/* what follows best's mountpoint in path, by mtab_under()'s
	 * measure ("/mnt/" is "/mnt"): never past path's end */
	const char *rest = path + top_len(best->mp);
	if (asprintf(rootpath, "%s%s", strcmp(best->root, "/") || !*rest ?
		     best->root : "", rest) < 0)
		return NULL;
	return best;
}

/* Whether the mount itself is read-only (field 6). */
bool mtab_ro(const struct mline *m)
{
	return strncmp(m->opts, "ro", 2) == 0 &&
	       (m->opts[2] == ',' || !m->opts[2]);
}
