/* gen.h: what the two files of the scenario generator share (gen.c, and
 * gen_cwd.c for the steps made from a cwd). */
#ifndef LS_GEN_H
#define LS_GEN_H

#include <stddef.h>
#include <stdint.h>

#define JAIL_LEN 5 /* strlen("$B/j1") */

extern const char *const dirs[];
extern const size_t ndirs;
extern const char *const makes[];
extern const size_t nmakes;

enum { MAX_MOUNTED = 64, MAX_HELD = 2, MAX_RBIND = 4, MAX_RBIND_SELF = 2 };

struct gen {
	uint64_t state;				/* xorshift64* */
	const char *mounted[MAX_MOUNTED];	/* likely mounted; may repeat */
	int nmounted;
	const char *held[MAX_HELD];
	int nheld;
	int ntmpfs, nrbind, nrbind_self;
	int nns;                                /* namespaces made, n1 n2 */
	int legacy;                             /* --legacy */
	const char *cwd;                        /* "cd": host form, or NULL */
	const char *cwd_jail;                   /* the jail it was set in */
	char rel[64];                           /* a path relative to cwd */
};

unsigned rnd(struct gen *g, unsigned n);
int chance(struct gen *g, unsigned percent);
const char *any_dir(struct gen *g);
const char *mounted_dir(struct gen *g);
const char *target(struct gen *g);
void push_mounted(struct gen *g, const char *d);
void remkdir(const char *d);
int in_jail(const char *d, const char *jail);
const char *jail_dir(struct gen *g, const char *jail, int mounted);

/* gen_cwd.c */
void op_cd(struct gen *g);
void op_rel(struct gen *g);

#endif
