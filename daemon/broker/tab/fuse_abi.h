/* fuse_abi.h: the part of the kernel's /dev/fuse protocol that fusetab.c
 * speaks, written out rather than taken from <linux/fuse.h>, whose copy on
 * an old system may lack FUSE_POLL.  The layout is the kernel's ABI
 * (protocol 7.x), stable since FUSE entered Linux 2.6.14; fields added by
 * later minors are marked and read only when present.
 */
#ifndef LS_FUSE_ABI_H
#define LS_FUSE_ABI_H

#include <stdint.h>

enum {
	FUSE_LOOKUP = 1, FUSE_FORGET = 2, FUSE_GETATTR = 3, FUSE_OPEN = 14,
	FUSE_READ = 15, FUSE_RELEASE = 18, FUSE_FLUSH = 25, FUSE_INIT = 26,
	FUSE_INTERRUPT = 36, FUSE_POLL = 40, FUSE_BATCH_FORGET = 42,
};

#define FUSE_ROOT_ID 1
#define FUSE_NOTIFY_POLL 1              /* 7.11, Linux 2.6.29 */
#define FUSE_POLL_SCHEDULE_NOTIFY (1 << 0)
#define FOPEN_DIRECT_IO (1 << 0)
#define FUSE_COMPAT_ENTRY_OUT_SIZE 120  /* before 7.9 */
#define FUSE_COMPAT_ATTR_OUT_SIZE 96
#define FUSE_COMPAT_22_INIT_OUT_SIZE 24 /* before 7.23 */
#define FUSE_COMPAT_INIT_OUT_SIZE 8     /* before 7.5 */

struct fuse_in_header {
	uint32_t len, opcode;
	uint64_t unique, nodeid;
	uint32_t uid, gid, pid;
	uint32_t padding;
};

struct fuse_out_header {
	uint32_t len;
	int32_t error;          /* 0 or -errno; a notification's code */
	uint64_t unique;        /* 0: a notification */
};

struct fuse_attr {
	uint64_t ino, size, blocks, atime, mtime, ctime;
	uint32_t atimensec, mtimensec, ctimensec;
	uint32_t mode, nlink, uid, gid, rdev;
	uint32_t blksize, padding; /* 7.9 */
};

struct fuse_entry_out {
	uint64_t nodeid, generation, entry_valid, attr_valid;
	uint32_t entry_valid_nsec, attr_valid_nsec;
	struct fuse_attr attr;
};

struct fuse_attr_out {
	uint64_t attr_valid;
	uint32_t attr_valid_nsec, dummy;
	struct fuse_attr attr;
};

struct fuse_init_in {
	uint32_t major, minor, max_readahead, flags;
};

struct fuse_init_out {
	uint32_t major, minor, max_readahead, flags;
	uint16_t max_background, congestion_threshold; /* 7.13 */
	uint32_t max_write;
	uint32_t time_gran;                              /* 7.23 */
	uint32_t unused[9];
};

struct fuse_open_in {
	uint32_t flags, unused;
};

struct fuse_open_out {
	uint64_t fh;
	uint32_t open_flags, padding;
};

struct fuse_read_in {          /* 24 bytes before 7.9, 40 since */
	uint64_t fh, offset;
	uint32_t size, padding;
};

struct fuse_release_in {
	uint64_t fh;
	uint32_t flags, release_flags;
};

struct fuse_poll_in {          /* events: 7.21 */
	uint64_t fh, kh;
	uint32_t flags, events;
};

struct fuse_poll_out {
	uint32_t revents, padding;
};

struct fuse_notify_poll_wakeup_out {
	uint64_t kh;
};

#endif
