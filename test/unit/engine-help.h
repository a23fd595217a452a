/* engine-help.h: engine-test's shared helpers (engine-help.c) and its
 * parts (engine-checks.c). */
#ifndef LS_ENGINE_HELP_H
#define LS_ENGINE_HELP_H

#include "dry.h"

void setup(struct dry *d, unsigned max);
char *run(struct dry *d, const char *script);
struct loc where(struct dry *d, const char *path, char **buf);
struct mount *at(struct dry *d, const char *path);
unsigned next_id(const struct idpool *p);
char *dump(struct dry *d, struct ns *ns);
bool never(void *ctx, const struct mount *m);
struct caller host(struct dry *d);
int umount_path(struct dry *d, struct caller *c, const char *path, int flags);
void mkdir_p(struct dry *d, const char *path);

/* engine-checks.c */
void rendering(void);
void unprivileged(void);
void checker_catches(void);
void dispatch(void);
void flag_tables(void);

#endif
