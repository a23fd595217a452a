/* engine.h: the propagation engine (semantics.md sections 1 to 9).
 *
 * Pure: no syscalls, no I/O besides the FILE * handed to the renderers.
 * Error convention: functions return 0 or a negative errno and never log.
 *
 * An operation runs inside a plan: it changes the graph under an undo
 * journal and appends the plain kernel steps (bind, move, umount of private
 * mounts) that realise the change.  plan_commit() keeps the result,
 * plan_abandon() restores the graph exactly as it was.  Outside a plan
 * only what the kernel did already is told to the graph (sync.c,
 * mount_rename(), fs_new(), ns_new()).
 *
 * Out of memory, the one rule: a function that cannot allocate returns
 * -ENOMEM (NULL where it returns a pointer) and leaves the graph exactly
 * as it was.  Inside a plan "as it was" means: as plan_abandon() leaves
 * it, which the caller calls on any error anyway; outside a plan the
 * function restores it itself.  Committing and abandoning never allocate,
 * so they cannot fail for want of memory.  The renderers follow the rule
 * too: -ENOMEM, with the output cut short.  (Scratch marks of walks, and
 * MNT_EXPIRE's mark, which the kernel keeps too, are not the graph.)
 * test/unit/oom-test proves the rule by failing each allocation in turn.
 */
#ifndef LS_ENGINE_H
#define LS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <uthash.h>
#include "list.h"
#include "mount_abi.h"

/* Per-mount flags (the engine's own bits), mountinfo field 6 (1.5.1). */
enum {
	MNT_RDONLY = 1 << 0, MNT_NOSUID = 1 << 1, MNT_NODEV = 1 << 2,
	MNT_NOEXEC = 1 << 3, MNT_NOATIME = 1 << 4, MNT_NODIRATIME = 1 << 5,
	MNT_RELATIME = 1 << 6, MNT_NOSYMFOLLOW = 1 << 7,
	MNT_ATIME_MASK = MNT_NOATIME | MNT_NODIRATIME | MNT_RELATIME,
};

/* Superblock flags, mountinfo field 11 (1.5.1). */
enum { SB_RDONLY = 1 << 0, SB_SYNC = 1 << 1, SB_DIRSYNC = 1 << 2,
       SB_MAND = 1 << 3, SB_LAZYTIME = 1 << 4 };

/* flags.c: the two families above, each named once: a flag, the mount(2)
 * flag that asks for it, and its mountinfo name; in the kernel's order. */
struct flag {
	unsigned bit;          /* MNT_* or SB_* */
	unsigned long ms;      /* LS_MS_* */
	const char *name;
};
struct flag_table { const struct flag *v; size_t n; };
extern const struct flag_table mnt_flag_table, sb_flag_table;
unsigned long flags_ms(const struct flag_table *t, unsigned bits);
unsigned flags_of_ms(const struct flag_table *t, unsigned long ms);
const struct flag *flag_by_name(const struct flag_table *t, const char *name,
				size_t n);
unsigned flags_named(const struct flag_table *t, const char *list);
/* mount(8)'s -o names: the list applied on top of the mount(2) flags ms. */
bool mount_option(const char *word, unsigned long *ms);
unsigned long mount_options(unsigned long ms, const char *list);

struct fs {                    /* a filesystem instance (superblock) */
	unsigned id;
	unsigned major, dev;   /* its device, major:dev (sharedry: 0:dev) */
	char *type;
	char *opts;            /* filesystem options for field 11, or "" */
	unsigned flags;        /* SB_* */
	unsigned refs;         /* mounts using it */
};

struct ns {                    /* a mount namespace */
	unsigned id;
	unsigned count;        /* attached mounts, for the mount limit */
	struct mount *root;
	struct list link;      /* in graph.nss */
};

struct mount {
	unsigned id;           /* smallest free (1.4) */
	uint64_t seq;          /* creation order: mountinfo line order */
	struct mount *parent;  /* NULL: namespace root, or detached */
	char *mp;              /* mountpoint: directory in the parent's fs */
	char *root;            /* directory of fs that is this mount's root */
	struct fs *fs;
	char *devname;
	unsigned flags;        /* MNT_* */
	unsigned group;        /* peer group id, 0 when not shared */
	struct mount *master;  /* a mount of the master group, or NULL */
	bool unbindable;
	bool file;             /* its root is not a directory */
	bool expiry_mark;      /* MNT_EXPIRE: marked by the first call;
				  with graph.kernel_marks: the kernel may
				  hold a mark, which only it can tell */
	bool dead;             /* unmounted in the open plan */
	struct ns *ns;
	struct mount *src;     /* while planned: the mount it was cloned from */

	struct list share;     /* peer ring */
	struct list slaves;    /* head: direct slaves of this mount */
	struct list slave;     /* link in master->slaves */
	struct list mounts;    /* head: children, in attach order */
	struct list child;     /* link in parent->mounts */
	struct list order;     /* link in graph.order, by seq */

	unsigned stamp;        /* scratch mark of the current walk */
	unsigned traced;       /* scratch mark of umount's re-homing */
	unsigned mark;         /* scratch: a master whose slave got a copy */
	unsigned invented;     /* scratch: group given by the running attach */
	size_t copy_of;        /* scratch: index of a copy in its operation */
	unsigned khash;        /* hash of (parent, mp) while attached */
	struct mount *knext;   /* chain of its bucket in graph.keys */
};

struct idpool {                /* smallest-free allocator (1.3, 1.4) */
	unsigned next;         /* every id >= next is free */
	unsigned *heap;        /* min-heap of free ids below next, with */
	size_t n, cap;         /* room for all of them (cap >= next - 1) */
};

/* The mounts by (parent, mountpoint): a chained table, the key hashed in
 * place, so that a lookup allocates nothing. */
struct keys {
	struct mount **bucket;
	size_t nbucket, n;     /* nbucket: 0 or a power of two */
};

enum step_kind {
	STEP_NEW,      /* mount mnt's filesystem at (parent, dir) */
	STEP_BIND,     /* bind src's directory mnt->root at (parent, dir) */
	STEP_MOVE,     /* move mnt to (parent, dir) */
	STEP_PARK,     /* move mnt aside (to be moved back by a later step) */
	STEP_UMOUNT,   /* unmount mnt (no children left); LS_MNT_DETACH: lazily */
	STEP_REMOUNT,  /* mount(2) MS_REMOUNT[|MS_BIND] of mnt with flags */
	STEP_REMOUNT_RO, /* remount mnt's filesystem read-only */
};

struct step {
	enum step_kind kind;
	unsigned mnt, src, parent;
	char *dir;             /* the mountpoint, in parent's filesystem */
	unsigned long flags;   /* UMOUNT: LS_MNT_DETACH; REMOUNT: LS_MS_* */
	bool alone;            /* UMOUNT: no ancestor of its mount goes in
				  the plan: it may go at the same time as
				  the others alone (the broker's umounts.c) */
	bool expire;           /* UMOUNT: the kernel's own MNT_EXPIRE, which
				  may answer EAGAIN (graph.kernel_marks) */
};

struct undo;
struct graph;

/* A checker the caller installs (the dry run, the unit tests): the plan
 * calls it through these pointers, never by name, so the engine's core
 * depends on no checker.  begin() sees the graph as a plan opens,
 * verify() as plan_commit() is about to keep it: an error other than
 * -ENOMEM is reported by plan_commit(), which keeps the plan anyway;
 * -ENOMEM makes plan_commit() abandon it.  end() runs as the plan closes
 * either way. */
struct checker {
	int (*begin)(struct graph *g);
	int (*verify)(struct graph *g);
	void (*end)(struct graph *g);
};

struct graph {
	struct mount **by_id;  /* indexed by id; NULL: a free id */
	size_t capid;
	unsigned nmounts;      /* in by_id, the plan's dead ones included */
	struct keys keys;
	struct idpool mount_ids, group_ids;
	struct list order;     /* every live mount, by seq */
	struct list nss;
	uint64_t seq;
	unsigned next_fs, next_ns, stamp;
	unsigned max_mounts;   /* fs.mount-max */
	bool check;            /* run the checker (off during imports) */
	bool kernel_marks;     /* MNT_EXPIRE's marks are the kernel's (the
				  broker): op_umount() asks for them */
	const struct checker *checker;

	/* the open plan */
	bool planning;
	int check_err;         /* the checker's begin() failed */
	void *snapshot;        /* the checker's: the table before the plan */
	uint64_t seq0;         /* g->seq when the plan began */
	struct undo *undo;  size_t nundo, capundo;
	struct step *steps; size_t nsteps, capsteps;
	struct mount **dead; size_t ndead, capdead;
};

/* A place: a directory inside the topmost mount there (semantics.md App. B). */
struct loc {
	struct mount *m;
	const char *dir;       /* the directory, or the file with .file */
	bool file;             /* not a directory (3.1, 4.1, 6.1) */
};

/* The root directory of a mount, as a place. */
static inline struct loc mount_root(struct mount *m)
{
	return (struct loc){ .m = m, .dir = m->root };
}

/* Who asks: privilege and root decide errnos (5.1, 7). */
struct caller {
	bool privileged;
	struct ns *ns;
	struct loc root;
};

/* Whether a mount is in use besides its attachment (5.3): an input. */
typedef bool (*busy_fn)(void *ctx, const struct mount *m);

/* graph.c */
int graph_init(struct graph *g, unsigned max_mounts);
void graph_free(struct graph *g);
struct fs *fs_new(struct graph *g, const char *type, const char *opts);
void fs_put(struct fs *fs);
struct ns *ns_new(struct graph *g);
struct mount *mount_by_id(const struct graph *g, unsigned id);
struct mount *next_in_tree(struct mount *m, struct mount *top);
struct mount *mount_at(const struct graph *g, const struct mount *parent,
		       const char *mp);
struct mount *topmost(const struct graph *g, struct mount *m);
bool dir_under(const char *dir, const char *top);
bool reaches(const struct mount *m, const char *dir, struct loc root);

/* sync.c: what the kernel has already, learnt outside any plan (the
 * broker's import); each call changes all it says or nothing.  An fs
 * nobody mounts yet is the import's: freed when the import fails. */
int graph_set_root(struct graph *g, struct ns *ns, struct fs *fs,
		   const char *devname, unsigned flags);
struct mount *graph_import(struct graph *g, struct ns *ns,
			   struct mount *parent, const char *mp, struct fs *fs,
			   const char *root, const char *devname,
			   unsigned flags);
int mount_rename(struct graph *g, struct mount *m, const char *root,
		 const char *mp);
int graph_forget(struct graph *g, struct mount *m);
int mount_restore(struct graph *g, struct mount *m, bool shared,
		  struct mount *peer, struct mount *master, bool unbindable);
/* m, moved by the kernel alone, now at (parent, mp): the graph follows,
 * outside any plan; a legacy kernel's move propagates nothing. */
int graph_relocate(struct graph *g, struct mount *m, struct mount *parent,
		   const char *mp);
/* v: every mount of the graph, in the kernel's creation order (its
 * table's): the graph takes that order (mountinfo's, seq). */
int graph_reorder(struct graph *g, struct mount **v, size_t n);
/* v: children of parent, to the end of its list in that order (the
 * kernel's, saved by sharebrokerd; rbind copies in it). */
int graph_child_order(struct graph *g, struct mount *parent,
		      struct mount **v, size_t n);
/* m's subtree, a namespace the kernel holds apart (sharebrokerd's copies,
 * read back after a restart): namespace id, m its root. */
int graph_adopt_ns(struct graph *g, struct mount *m, unsigned id,
		   struct ns **out);

/* propagate.c */
struct mount *next_peer(const struct mount *m);
/* Pre-order walk of origin's propagation tree, peers in ring order and
 * slaves in list order: the mount after m, NULL at the end. */
struct mount *propagation_next(struct mount *m, struct mount *origin);

/* journal.c: each place the open plan wrote (its undo records'). */
void plan_writes(const struct graph *g, void (*fn)(void *ctx, void *slot),
		 void *ctx);
/* plan.c: plan_begin() cannot fail (a checker that cannot start makes
 * plan_commit() fail with -ENOMEM instead). */
void plan_begin(struct graph *g);
int plan_commit(struct graph *g);
void plan_abandon(struct graph *g);
const char *step_name(enum step_kind k);

/* The operations (each inside a plan). */
int op_change(struct graph *g, const struct caller *c, struct loc at, int flags);
/* What a mount(2) call is, in the kernel's order of precedence (2.1). */
enum mount_call {
	CALL_REMOUNT_BIND, CALL_REMOUNT, CALL_BIND, CALL_CHANGE, CALL_MOVE,
	CALL_NEW,
};
int mount_call(unsigned long *ms);
unsigned mount_flags(unsigned long ms, unsigned old);
int op_mount_fs(struct graph *g, const struct caller *c, struct loc at,
		struct fs *fs, const char *devname, unsigned long ms);
int op_remount(struct graph *g, const struct caller *c, struct loc at,
	       unsigned long ms);
int op_bind(struct graph *g, const struct caller *c, struct loc from,
	    struct loc to, bool recursive);
int op_move(struct graph *g, const struct caller *c, struct loc from,
	    struct loc to);
int op_umount_flags_ok(int flags);
int op_umount(struct graph *g, const struct caller *c, struct loc at, int flags,
	      busy_fn busy, void *ctx);
int op_copy_ns(struct graph *g, const struct caller *c, struct ns **out);
int op_copy_view(struct graph *g, const struct caller *c, busy_fn skip,
		 void *ctx, struct ns **out, struct loc *at);
int op_free_ns(struct graph *g, struct ns *ns);
int op_pivot_root(struct graph *g, const struct caller *c, struct loc new,
		  struct loc old);

/* mountinfo.c; mount_path() is NULL when the reader cannot see m (and
 * when out of memory: *err says which, if err is not NULL). */
void put_escaped(FILE *out, const char *s);
int render_mountinfo(const struct graph *g, struct ns *ns, struct loc root,
		     FILE *out);
int render_mounts(const struct graph *g, struct ns *ns, struct loc root,
		  FILE *out);
char *mount_path(const struct mount *m, struct loc root, int *err);
char *mount_source(const struct mount *m);

/* tree.c */
int render_tree(struct ns *ns, struct loc root, bool opt_fields, FILE *out);

/* dot.c: a root to label in the propagation graph, a jail's; root.m is
 * NULL when its directory is gone. */
struct view {
	const char *name;
	struct loc root;
};
int render_graph(const struct graph *g, struct ns *ns,
		 const struct view *jails, size_t njails, FILE *out);

/* check.c, check_plan.c: the checker the dry run and the tests install
 * (graph.checker = &engine_checker, graph.check = true). */
extern const struct checker engine_checker;
int check_invariants(const struct graph *g);
int check_plan(struct graph *g);

/* alloc.c: the allocation-failure injector, for tests only: the k-th
 * engine allocation from now fails (0: none); how many did. */
void eng_fail_at(long k);
unsigned long eng_failures(void);

#endif
