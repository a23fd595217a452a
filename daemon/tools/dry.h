/* dry.h: the dry-run model around the engine: directories per filesystem,
 * path lookup through the mount graph, and the script commands. */
#ifndef LS_DRY_H
#define LS_DRY_H

#include "engine.h"

struct dent { char *path; bool file; UT_hash_handle hh; };
struct dirs { unsigned fs; struct dent *set; UT_hash_handle hh; };
struct hold { char *name; uint64_t seq; };
struct named_ns { char *name; struct ns *ns; };
struct cmd;

struct dry {
	struct graph g;
	struct ns *ns;
	const char *base;
	bool trace, tree, check;
	bool abandon;          /* tests: plan each command, then abandon */
	/* tests: runs each system call in place of dry_call_once() */
	int (*around)(struct cmd *k, int (*op)(struct cmd *, const void *),
		      const void *arg);
	bool broken;           /* a check failed */
	struct dirs *dirs;
	struct hold *holds;
	size_t nholds, capholds;
	struct named_ns *nss;  /* namespaces made by "unshare NAME" */
	size_t nnss, capnss;
	unsigned line;
	struct dry_cwd {       /* "cd DIR": the script's cwd, or !set */
		bool set;
		uint64_t seq;  /* its mount, which it keeps busy */
		char *dir;
	} cwd;
};

/* One command line, as the caller whose root is c.root runs it. */
struct cmd {
	struct dry *d;
	struct caller c;
	char **w;
	int n;
};

/* dry_call.c */
typedef int (*dry_op)(struct cmd *k, const void *arg);
int dry_call(struct cmd *k, dry_op op, const void *arg);
int dry_call_once(struct cmd *k, dry_op op, const void *arg);
int dry_at(struct cmd *k, int i, struct loc *l, char **buf);

/* dry_mount.c */
int dry_mount(struct cmd *k);

/* dry.c */
int dry_init(struct dry *d, unsigned max_mounts);
void dry_free(struct dry *d);
int dry_run(struct dry *d, FILE *in);
int dry_view(struct dry *d, const char *dir);
int dry_tree(struct dry *d);

/* dry_path.c */
enum { NONE, DIR_, FILE_ };
int entry_kind(struct dry *d, const struct fs *fs, const char *path);
void entry_add(struct dry *d, const struct fs *fs, const char *path, bool file);
enum { LOOKUP = 0, MKDIR = 1, TOUCH = 2 };
int dry_lookup(struct dry *d, struct loc root, const char *path, int make,
	       struct loc *out, char **dirbuf);
void dry_top(struct dry *d, struct loc *p, char *buf);
struct mount *dry_mount_of(struct dry *d, uint64_t seq);
int dry_cd(struct dry *d, struct loc root, const char *path,
	   const char *fallback);
void dry_use(struct mount *m);

#endif
