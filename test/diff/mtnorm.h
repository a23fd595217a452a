/* mtnorm.h: what the two files of mtnorm share. */
#ifndef LS_MTNORM_H
#define LS_MTNORM_H

#include <stdbool.h>
#include <stddef.h>

struct mnt {
	long id, parent;
	char *root, *mp, *opts, *optional, *fstype, *src; /* unescaped */
	size_t seq;	/* input order: last tie-breaker */
	bool printed;
};

struct view {
	struct mnt *m;
	size_t n, cap;
	bool host;	/* "/" view: keep only the sandbox subtree */
	char **groups;	/* raw group ids in order of first printing */
	size_t ngroups;
};

extern const char *base;       /* sandbox path, from -b or the "base" line */
extern bool no_propagation;    /* -P */

void *xrealloc(void *p, size_t n);
char *unescape(const char *s);
void put_escaped(const char *s);
bool under_base(const char *path);
void put_path(const char *path);
char *sb_flags(const char *opts, const char *super);
bool parse_mountinfo(char *line, struct mnt *m);
void free_mnt(struct mnt *m);

#endif
