/* mtab.h: a mountinfo text as lines (mtab.c), the broker's view or the
 * engine's, and fstab(5)'s escapes, which the jailtab reader undoes too.
 * Calls nothing of the other tools: they call it.
 */
#ifndef LS_MTAB_H
#define LS_MTAB_H

#include <stdbool.h>
#include <stddef.h>

struct mline {
	unsigned id, parent;
	char *dev, *root, *mp, *opts, *type, *source;
	unsigned group, master;   /* shared:N, master:N; 0 when absent */
	bool unbindable;
};

struct mtab {
	struct mline *v;
	size_t n, cap;
	char *text;            /* owns every string of v */
};

int mtab_parse(struct mtab *t, char *text);
void mtab_free(struct mtab *t);
const struct mline *mtab_at(const struct mtab *t, const char *path);
const struct mline *mtab_holder(const struct mtab *t, const char *path,
				char **rootpath);
bool mtab_under(const char *path, const char *top);
bool mtab_ro(const struct mline *m);
void mtab_unescape(char *s);

#endif
