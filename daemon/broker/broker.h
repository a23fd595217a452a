/* broker.h: sharebrokerd, the authority around the engine.
 *
 * The engine (engine.h) decides; the broker binds it to the kernel:
 * import.c reads the host's mount table into the graph, resolve.c turns a
 * caller's path into a place of the graph, exec.c carries a plan out with
 * plain mounts, server.c speaks the protocol (libshare_proto.h), show.c
 * renders the graph for sharectl.
 *
 * Error convention: functions return 0 or a negative errno; only
 * sharebrokerd.c and the logging helper write anything.
 */
#ifndef LS_BROKER_H
#define LS_BROKER_H

#include <sys/types.h>
#include "engine.h"
#include "libshare_proto.h"
#include "log.h"

/* The executor's hold on one mount of the graph: an O_PATH descriptor on
 * its root.  Through /proc/self/fd/N it reaches the mount even when other
 * mounts cover it (docs/design.md, hidden mounts). */
struct handle {
	uint64_t seq;          /* the engine mount's seq: key of by_seq */
	uint64_t made;         /* when the kernel made the mount, in the
				  order its table lists them (state.c) */
	int fd;
	int kid;               /* the kernel's mount id (fdinfo mnt_id) */
	dev_t dev;             /* its superblock */
	struct mount *m;
	bool asleep;           /* fd -1: let go for the kernel's MNT_EXPIRE
				  mark, which it must not clear (expire.c) */
	int place;             /* asleep: the directory it is mounted in */
	char *name;            /* and its name there, malloc'ed */
	UT_hash_handle hh, hk; /* by_seq, by_kid */
};

struct devref {                /* a superblock the graph holds mounts of */
	dev_t dev;
	struct fs *fs;
	unsigned n;            /* handles on it */
	UT_hash_handle hh;
};

/* A path a caller named: its place, and the descriptor the walk ended on,
 * which the executor uses rather than walking the names again. */
struct named {
	struct loc at;
	char *buf;             /* at.dir's storage */
	int fd;
};

struct jail {                  /* a root some live process has */
	char *path;
	bool live;             /* seen at the last count (policy.c) */
	UT_hash_handle hh;
};

/* Who is asking, from the kernel: SO_PEERCRED and /proc/<pid>. */
struct peer {
	pid_t pid;
	uid_t uid;             /* effective */
	gid_t gid;
	gid_t groups[64];
	int ngroups;
	bool cap_admin;        /* CAP_SYS_ADMIN in the effective set */
	bool cap_search;       /* CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH */
	int root, cwd;         /* O_PATH descriptors on /proc/<pid>/root, cwd */
	char *root_path;       /* fd_path(root), read once: peer_root() */
	int proc;              /* /proc/<pid>, the process identified */
	bool creds_due;        /* uid, gid, groups not read yet: peer_creds() */
};

/* One request, from its arrival to its answer (server.c): who asks, what
 * it named and what the executor made for it.  Nothing of it outlives the
 * request; struct broker keeps only what does. */
struct request {
	struct broker *b;
	struct peer caller;
	const char *data;      /* the caller's mount data, for REMOUNT */
	int staged;            /* the new mount made for a NEW, or -1 */
	struct named *target, *source;
	int *busy_kids;        /* mounts in use by some process, sorted */
	size_t nbusy;
	bool busy_known;
	bool busy_all;         /* the scan ran out of memory: all are busy */
	char **was;            /* per step of the plan: where a moved mount
				  was, for undoing it (exec_plan()) */
};

/* The durable record of the plan being carried out (intent.c, recover.c,
 * docs/design.md "Crash recovery"). */
struct intent {
	int fd;                /* <state dir>/intent, open while running */
	unsigned long long serial;  /* of the last plan recorded */
	off_t *slot;           /* per step: where its progress is written */
	size_t nslot;
	off_t end;             /* the record's length: asides go there */
	bool behind;           /* a plan was kept that the state file lacks:
				  the record holds it until a save works */
	bool empty;            /* the file is: the next record needs no
				  truncation first */
};

/* The state as saved, by key (stcache.c, state.c). */
struct stline {
	char *key;             /* the line's head: its first word or two */
	char *line;            /* without its newline */
	UT_hash_handle hh;
};

struct stcache {
	struct stline *lines;  /* by key, in the order they were set */
	int jfd;               /* <state dir>/journal, -1 until opened */
	off_t jlen;            /* its length: whole records only */
	off_t snap;            /* the snapshot's length */
	unsigned long long serial;  /* plan of the last record written */
	bool valid;            /* lines are the graph's, as saved */
	bool found;            /* a saved state was there at start */
	unsigned nns;          /* namespace lines among them (nsstate.c) */
};

struct broker {
	struct graph g;
	struct ns *ns;
	struct handle *by_seq, *by_kid;
	struct ptrtab {        /* the handles by their mount's address */
		struct handle **v;   /* open addressing, linear probing */
		size_t cap, n;       /* cap: 0 or a power of two */
	} by_ptr;
	struct devref *devs;
	struct jail *jails;
	unsigned jails_high;   /* count them again past this many */
	unsigned fd_starved;   /* mounts left without a handle for lack of
				  descriptors */
	unsigned nasleep;      /* handles asleep (expire.c), at the last
				  count */
	const char *state_dir;
	char *stage, *park;    /* the executor's own places */
	char *newroot;         /* where new filesystems are made (newmount.c) */
	int listen_fd;
	int watch;             /* /proc/self/mountinfo, polled for changes */
	struct fusetab *tab;   /* the served mount tables, NULL: snapshots */
	struct intent intent;
	struct stcache st;
	struct stall_count {   /* slow.c: mounts whose server may hang */
		uint64_t seq;    /* g.seq, g.nmounts when counted */
		unsigned mounts, n;
	} stall;
	bool stop;
};

/* fd.c: what the kernel says of a descriptor */
char *fd_path(int fd);         /* where it is now, malloc'ed */
int fd_mnt_id(int fd);         /* the kernel's id of its mount */
int fdinfo_mnt_id(const char *fdinfo); /* any process's, by its fdinfo */
bool kernel_lacks(const char *what);   /* a legacy simulation's hook */
bool fdinfo_has_mnt_id(void);          /* Linux 3.15 on */
bool path_under(const char *path, const char *top);
/* mntid.c: fd_mnt_id() from mountinfo, where no handle or fdinfo says it */
int mountinfo_mnt_id(int fd);
void mntid_known(const struct broker *b); /* its handles tell mounts apart */
bool fd_reached(int fd, const char *path); /* on what a walk of path reaches */
bool fd_at_root(int fd);       /* on the root of its mount */
struct stat;
int fd_stat(int fd, struct stat *st); /* fstat from the cache: never
					 blocks on a stalled server */
bool fd_within(int fd, int root);
/* its place in the graph; _at: with its fd_path() and fd_stat() read */
int fd_loc(struct broker *b, int fd, struct loc *out, char **dirbuf);
int fd_loc_at(struct broker *b, int fd, const char *path,
	      const struct stat *st, struct loc *out, char **dirbuf);
enum { FD_SPARE = 64 };        /* descriptors kept for serving requests */
void fd_raise_limit(void);
int fd_room(void);             /* handles take descriptors below this */

/* slow.c: lookups in filesystems whose server may never answer */
bool fs_may_stall(const struct fs *fs);
bool stall_anywhere(struct broker *b);  /* on some mount of the graph */
int slow_openat(int dir, const char *name); /* O_PATH|O_NOFOLLOW; or
					       -EINPROGRESS: park */
int slow_wake_fd(void);        /* readable when a lookup has ended */
void slow_retrying(bool on);   /* parked requests are served again */
void slow_forget(void);        /* none is parked: forget the answers */

/* handle.c */
struct stat;
int handle_add(struct broker *b, struct mount *m, int fd);
struct entry;                  /* a mount of the kernel's table, held */
void handle_import(struct broker *b, struct entry *e);
int handle_put(struct broker *b, struct mount *m, int fd, int kid, dev_t dev);
int handle_set(struct broker *b, struct mount *m, int fd, int kid,
	       const struct stat *st);
void handle_rekey(struct broker *b);
struct handle *handle_of(const struct broker *b, const struct mount *m);
struct mount *mount_of_kid(const struct broker *b, int kid);
struct mount *mount_at_ptr(const struct broker *b, const void *p);
void handle_drop(struct broker *b, struct handle *h);
struct fs *fs_of_dev(const struct broker *b, dev_t dev);
int named_top(struct broker *b, struct named *n);

/* import.c */
int import_table(struct broker *b, const char *mountinfo);
int fs_learn_kid(struct fs *fs, int kid);
void fs_learn(struct fs *fs, dev_t dev, const char *sbopts); /* fslearn.c */
int refresh_paths(struct broker *b);
int sync_table(struct broker *b);
bool table_changed(struct broker *b);

/* identity.c */
struct ucred;
int peer_identify(struct peer *p, int sock, const struct ucred *cred,
		  pid_t tid, uint32_t fd1);
void peer_close(struct peer *p);
const char *peer_root(struct peer *p);  /* where its root is now, or NULL */
void peer_creds(struct peer *p);        /* uid, gid and groups read */
uid_t peer_uid(struct peer *p);

/* resolve.c */
/* RES_MOUNTPOINT: umount2(MNT_EXPIRE)'s target, whose last name, when
 * it is a sleeping mount (expire.c), is read from the graph, not looked
 * up: the lookup would clear the mount's mark. */
enum { RES_FOLLOW = 0, RES_NOFOLLOW = 1, RES_MOUNTPOINT = 2 };
int resolve(struct request *r, const char *path, int how, struct named *out);
void named_free(struct named *n);
/* quickwalk.c: a plain path in one lookup; 1: not plain, walk it */
int quick_walk(struct request *r, const char *path, int how,
	       struct named *out);

/* request.c */
int call_mount(struct request *r, const char *source, const char *target,
	       const char *type, const char *data, unsigned long ms);
int call_umount(struct request *r, const char *target, int flags);
int call_pivot_root(struct request *r, const char *new_root,
		    const char *put_old, int *newroot, bool *cwd_too);
int apply_plan(struct request *r, int err);

/* newmount.c */
int newmount_make(struct request *r, const char *source, const char *type,
		  unsigned long flags, const char *data);
int newmount_reset(struct broker *b);

/* exec.c */
int stage_new(struct request *r, const char *source, const char *type,
	      unsigned long ms, const char *data);
void unstage(struct request *r);
int exec_step(struct request *r, const struct step *s);
void exec_drop_parks(struct broker *b);
int open_loc(struct request *r, struct mount *m, const char *dir,
	     bool target, int *out, char **cover);

/* copy.c */
int copy_bind(struct request *r, const struct step *s, struct mount *m);

/* umounts.c */
void umount_all(const int *fds, int *errs, size_t n);

/* execplan.c */
int exec_plan(struct request *r);
void exec_undo(struct request *r);
void exec_forget(struct request *r);
void exec_commit(struct broker *b);
bool plan_undoable(const struct graph *g);

/* intent.c */
int intent_begin(struct broker *b);
char *kernel_path(const struct broker *b, const struct mount *m);
void intent_step(struct broker *b, const struct step *s, char what,
		 const struct handle *h);
int intent_aside(struct broker *b, const struct mount *m, off_t *slot);
void intent_back(struct broker *b, off_t slot);
void intent_pending(struct broker *b, const struct step *s, int top,
		    dev_t dev);
void intent_end(struct broker *b);

/* fault.c */
int save_put(int fd, const char *text, size_t len, off_t at);
void fault_init(void);
void fault_arm(void);
void fault_caller(pid_t pid);
void fault_step(void);
void fault_copy(void);
void fault_holder(void);
bool fault_compact(void);

/* recover.c */
int intent_recover(struct broker *b);
/* recmove.c: a descriptor on mount kid that recovery kept because its
 * moves covered it (handed over), or -1; the rest closed after import */
int recover_take(int kid, dev_t dev);
void recover_forget(void);
int walk_path(const char *path);  /* recmove.c: O_PATH, following no symlink */

/* busy.c */
/* dir/name opened (O_PATH) if it is the root of mount kid, else -ESTALE
 * or the lookup's -errno; the lookup ends on the top of the stack there,
 * so a mount with anything on its root is never found this way. */
int mount_root_open(int dir, const char *name, int kid);
bool busy(void *ctx, const struct mount *m);

/* expire.c: MNT_EXPIRE with the kernel's own mark (issue 29) */
struct handle *handle_known(const struct broker *b, const struct mount *m);
struct handle *handle_awake(struct broker *b, struct mount *m);
struct handle *expiry_wake(struct broker *b, struct mount *m);
void expiry_forget(struct handle *h);
char *sleeper_path(const struct handle *h);
void expiry_load(struct broker *b);
void expiry_loaded(struct broker *b);
int expiry_import(struct broker *b, struct entry *e);
int expiry_mark(struct request *r, struct mount *m);
int expiry_step(struct request *r, struct mount *m);
int expiry_wake_plan(struct request *r);

/* state.c */
int state_full(struct broker *b);
void state_ns_ops(struct broker *b, FILE *f);
int state_load(struct broker *b);
int kid_of(const struct broker *b, const struct mount *m);
bool has_line(const struct broker *b, const struct mount *m);
int line_before(const struct broker *b, const struct mount *m, bool ring);
bool put_mount(const struct broker *b, FILE *f, const struct mount *m,
	       bool graph);
bool put_children_of(const struct broker *b, FILE *f, const struct mount *m,
		     const char *prefix);

/* stload.c */
int state_ordered(struct broker *b, FILE *f);

/* stdelta.c */
int state_delta(struct broker *b, bool graph, char **text, size_t *len);
int state_save(struct broker *b);

/* stcache.c */
const struct stline *cache_get(const struct stcache *c, const char *key);
int cache_apply(struct stcache *c, const char *body, size_t len);
void cache_clear(struct stcache *c);
void cache_put(const struct stcache *c, FILE *f);
int cache_snapshot(struct broker *b);
void state_close(struct broker *b);
int cache_read_snapshot(struct broker *b);
int journal_append(struct broker *b, const char *body, size_t len,
		   unsigned long long serial);
int journal_read(struct broker *b, bool apply);
bool journal_full(const struct broker *b);

/* statedir.c */
int statedir_prepare(struct broker *b);
void statedir_set_aside(const struct broker *b, const char *why);

/* reply.c, tabserve.c: what one unprivileged uid may hold at once; a
 * privileged caller (CAP_SYS_ADMIN: it can mount anything anyway) is
 * counted as REPLY_UNCOUNTED. */
#define REPLY_UNCOUNTED ((uid_t)-1)
int reply_init(void);
int reply_text(uid_t uid, const char *text, size_t len, int *pass);

/* show.c */
int show_table(struct request *r, const char *which, const char *pid,
	       int *pass);
int show_tree(struct request *r, const char *pid, const char *dir, int *pass);
/* nsshow.c */
int pid_view(struct request *r, const char *pid, struct loc *out, char **buf);
int show_namespaces(struct request *r, char **text, int *ntext);
int show_graph(struct request *r, int *pass);

/* policy.c */
struct answer {                /* what a request answers besides its errno */
	char *text;            /* malloc'ed, ntext bytes */
	int ntext;
	int pass;              /* a descriptor to hand over, or -1 */
};
int policy_serve(struct request *r, uint16_t op, uint64_t arg,
		 char *f[LS_NFIELDS], struct answer *a);

/* fusetab.c, tabserve.c: mount tables that stay live (fusetab.h) */
struct pollfd;
void fusetab_clean(const char *state_dir);
void fusetab_start(struct broker *b);
int fusetab_open(struct broker *b, struct loc root, bool info, uid_t uid,
		 int *pass);
void fusetab_changed(struct broker *b);
size_t tab_loop_fds(struct broker *b, struct pollfd *p);
void follow_drift(struct broker *b);
void tab_loop_events(struct broker *b, const struct pollfd *p, size_t n);

/* ns.c: mount namespaces (issue 11) */
int ns_place(struct broker *b, struct mount *m);
int ns_unshare(struct request *r, int *pass);
int ns_setns(struct request *r, int fd, int *pass, int *old);
int ns_file(struct request *r, pid_t pid, bool number_only, int *pass,
	    unsigned long long *num);
int ns_pidfd(struct request *r, int fd, pid_t *pid);
void ns_tick(struct broker *b);
void ns_end(struct broker *b, pid_t leaving);
int ns_wake_fd(void);
/* nsstate.c: the namespaces in the state file (state.c) */
void nsstate_put(struct broker *b, FILE *f, const char *pre);
bool nsstate_line(const char *line);
void nsstate_load(struct broker *b, char **lines, size_t n);

/* server.c */
int server_listen(const char *addr);
void server_loop(struct broker *b);

#endif
