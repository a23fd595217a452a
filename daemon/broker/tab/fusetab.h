/* fusetab.h: the served mount tables, shared by the FUSE thread
 * (fusetab.c) and the broker's main thread (tabserve.c).
 *
 * Who does what.  The main thread owns the graph: it alone renders.  The
 * FUSE thread owns /dev/fuse: it answers everything that needs no graph
 * (lookup, attributes, open, poll, release, reads that continue a
 * rendering) and queues a read from offset 0 for the main thread.  So the
 * main thread may open a table of its own filesystem (show_table) while
 * the FUSE thread serves that open, and neither ever waits for the other:
 * the FUSE thread never waits for the main thread, and the main thread
 * waits only for requests the FUSE thread answers alone.  lock guards every
 * field below it, and is held across no blocking call: only writes of
 * replies and notifications to /dev/fuse, which do not wait.
 */
#ifndef LS_FUSETAB_H
#define LS_FUSETAB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uthash.h>

/* Node ids: the root directory and its two files. */
enum { NODE_ROOT = 1, NODE_MOUNTINFO = 2, NODE_MOUNTS = 3 };

struct tabfile {               /* one open table */
	uint64_t fh;           /* the kernel's handle of it: key of files */
	uint64_t seq;          /* the opener's root, captured at open as */
	char *dir;             /* Linux does: a mount (by seq) and a */
	bool file_root;        /* directory of it */
	bool info;             /* mountinfo, else the /proc/mounts format */
	uid_t uid;             /* of the caller it was opened for */
	uint64_t seen;         /* the event last reported (mounts_poll's
				  m->poll_event), the one of its open at first */
	uint64_t kh;           /* the kernel's poll handle, 0 until polled */
	char *snap;            /* the rendering of the last read at offset
				  0: later offsets continue it, so a parse
				  in many reads sees one table */
	size_t nsnap;
	bool fresh;            /* snap was made at open, at gen, and no
				  read has taken it yet */
	uint64_t gen;
	UT_hash_handle hh;
};

struct tabread {               /* a read waiting for a rendering */
	uint64_t unique, fh, offset;
	uint32_t size;
	struct tabread *next;
};

struct fusetab {
	int dev;               /* /dev/fuse */
	int root;              /* O_PATH: root of the detached mount */
	pid_t opener;          /* the serving thread that opens (tabserve.c):
				  the only one whose OPEN is taken */
	int wake[2];           /* a pipe: reads are queued */
	unsigned minor;        /* the protocol's minor, from FUSE_INIT */
	bool thread;           /* the FUSE thread runs (and holds this) */
	pthread_mutex_t lock;
	uint64_t event;        /* changes of the table so far */
	uint64_t gen;          /* what may have changed any rendering so
				  far: each request, each event */
	uint64_t next_fh;
	struct tabfile *files;
	struct tabfile *pending; /* the main thread's open in flight */
	struct tabread *reads, **tail;
	/* under the graph's lock (door/loop.c), not lock: a serving
	   thread's in a request, the main thread's between requests */
	struct tabfile last;   /* its last rendering (snap), of which root,
				  at which gen (tabserve.c render()) */
	int spare[2];          /* a descriptor of mounts [0] and of
				  mountinfo [1] opened ahead, or -1 */
	struct tabfile *spare_f[2];  /* theirs, with no root yet */
	bool spare_failed;     /* no more tries until a table is served */
	bool flush_off;        /* the kernel sends no FLUSH any more */
};

int fuse_send(struct fusetab *t, uint64_t unique, int err, const void *p,
	      size_t n, const void *q, size_t m);
struct tabfile *tabfile_of(struct fusetab *t, uint64_t fh);
void tabfile_free(struct tabfile *f);
int reply_slice(struct fusetab *t, const struct tabread *r,
		const struct tabfile *f);

#endif
