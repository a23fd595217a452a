/* broker.h: sharebrokerd, the authority around the engine: what every
 * room of daemon/broker/ needs, the broker's state and a request's.
 *
 * The engine (engine.h) decides; the broker binds it to the kernel.  Its
 * rooms, each a folder with a header of its own saying what it owns and
 * what it may call, from the top down (docs/design.md, "The broker's
 * rooms", draws them; test/admin/rooms.bats holds every include to the
 * table of arrows there):
 *   main/     the daemon itself: setup, configuration, pidfile, signals
 *   door/     the front door: socket, policy, the request, replies
 *   ns/       mount namespaces
 *   tab/      the served mount tables (FUSE)
 *   exec/     the executor: plans to system calls
 *   persist/  persistence and recovery: state, journal, intent
 *   resolve/  who the caller is and what its paths name
 *   hold/     the hold on the mounts: handles, import, holder
 *   base/     the ground: the log, what the kernel says, fault injection
 * A room calls only rooms below it; one that must be told something by a
 * room above is handed a function at start (mntid_known(),
 * state_part_set(), server_loop()'s tick).
 *
 * Error convention: functions return 0 or a negative errno; only
 * sharebrokerd.c and the logging helper write anything.
 */
#ifndef LS_BROKER_H
#define LS_BROKER_H

#include <sys/stat.h>
#include <sys/types.h>
#include "engine.h"
#include "libshare_proto.h"
#include "base/log.h"

struct handle;                 /* hold/hold.h */
struct devref;

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

/* Who is asking, from the kernel: the credentials its request came with
 * (SCM_CREDENTIALS, else SO_PEERCRED) and /proc/<pid>. */
struct peer {
	pid_t pid;
	uid_t uid;             /* effective */
	gid_t gid;
	gid_t groups[64];
	int ngroups;
	bool cap_admin;        /* CAP_SYS_ADMIN in the effective set */
	bool cap_search;       /* CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH */
	int root, cwd;         /* O_PATH descriptors on /proc/<pid>/root, cwd
				  (cwd: -1 until peer_cwd() opens it) */
	char task[32];         /* "task/<tid>/" when the thread's are read */
	char *root_path;       /* fd_path(root), read once: peer_root() */
	int proc;              /* /proc/<pid>, the process identified (its
				  connection's: struct peer_seen) */
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
	int staged_kid;        /* its mount id (-1: statx() cannot say) */
	struct stat staged_st; /* and its status, read once (stage_new()) */
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
	struct pathmemo *paths;  /* handles' paths read in this request
				    (hold/paths.c), or NULL */
	struct stall_count {   /* slow.c: mounts whose server may hang */
		uint64_t seq;    /* g.seq, g.nmounts when counted */
		unsigned mounts, n;
	} stall;
	bool stop;
};

/* reply.c, tabserve.c: what one unprivileged uid may hold at once; a
 * privileged caller (CAP_SYS_ADMIN: it can mount anything anyway) is
 * counted as REPLY_UNCOUNTED. */
#define REPLY_UNCOUNTED ((uid_t)-1)

#endif
