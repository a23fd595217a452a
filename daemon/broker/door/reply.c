/* reply.c: the text a reply hands over as a descriptor (show.c: a mount
 * table without FUSE, sharectl tree and graph), in memory of its own.
 *
 * It used to be an unlinked file of the state directory: any caller, an
 * unprivileged one in a jail too, could fill that filesystem by holding
 * replies open, and with it full no request could save its state
 * (issue 9 item 6).  Now it is a sealed memfd (a file of /dev/shm on
 * kernels without memfd_create: shared memory, not the state's), and an
 * unprivileged caller's uid may hold at most REPLIES_MAX of them at once
 * (a privileged caller can mount what it likes anyway).  An inotify watch
 * on each tells the broker when the last descriptor of one is closed (the
 * kernel reports the close of a description when its last reference
 * goes, the caller's included).  The broker reads those events when it
 * makes the next reply: no loop of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <unistd.h>
#include "broker.h"
#include "base/log.h"
#include "door/door.h"

enum { REPLIES_MAX = 256 };    /* held at once by one uid */

struct held {                  /* one reply a caller may still hold */
	int wd;
	uid_t uid;
	UT_hash_handle hh;
};

struct count {
	uid_t uid;
	unsigned n;
	UT_hash_handle hh;
};

static int ino = -1;
static struct held *helds;
static struct count *counts;

static struct count *count_of(uid_t uid, bool make)
{
	struct count *c;
	HASH_FIND(hh, counts, &uid, sizeof uid, c);
	if (!c && make && (c = calloc(1, sizeof *c))) {
		c->uid = uid;
		HASH_ADD(hh, counts, uid, sizeof c->uid, c);
	}
	return c;
}

static void let_go(struct held *h)
{
	struct count *c = count_of(h->uid, false);
	if (c && --c->n == 0) {
		HASH_DEL(counts, c);
		free(c);
	}
	HASH_DEL(helds, h);
	free(h);
}

/* The closes since the last reply. */
static void drain(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while (ino >= 0 && (n = read(ino, buf, sizeof buf)) > 0)
		for (char *p = buf; p < buf + n; ) {
			const struct inotify_event *e = (const void *)p;
			struct held *h;
			HASH_FIND_INT(helds, &e->wd, h);
			if (h && (e->mask & (IN_CLOSE_NOWRITE | IN_IGNORED))) {
				if (!(e->mask & IN_IGNORED))
					inotify_rm_watch(ino, e->wd);
				let_go(h);
			}
			p += sizeof *e + e->len;
		}
}

/* A scratch file of memory, writable, nobody else's: before Linux 3.17
 * an unlinked file of /dev/shm (O_TMPFILE from 3.11). */
static int scratch(void)
{
	char path[] = "/dev/shm/libshare-reply.XXXXXX";
	int fd = memfd_create("libshare-reply", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 && errno == ENOSYS)
		fd = open("/dev/shm", O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC,
			  0600);
	if (fd < 0 && (errno == EINVAL || errno == EOPNOTSUPP ||
		       errno == EISDIR) && (fd = mkostemp(path, O_CLOEXEC)) >= 0)
		unlink(path);
	return fd < 0 ? -errno : fd;
}

/* At start: the watches' descriptor, made before any request so that the
 * broker's descriptors do not grow with the first reply. */
int reply_init(void)
{
	if ((ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
		log_msg(LOG_WARNING, "inotify: %s: replies are not counted",
			strerror(errno));
	return 0;
}

/* A read-only descriptor of text, in *pass, counted against uid until
 * every descriptor of it is closed; -EMFILE past the limit. */
int reply_text(uid_t uid, const char *text, size_t len, int *pass)
{
	char proc[64];
	struct count *c;
	struct held *h = NULL;
	int fd, err = 0;
	drain();
	if (uid != REPLY_UNCOUNTED && (c = count_of(uid, false)) &&
	    c->n >= REPLIES_MAX) {
		log_msg(LOG_WARNING, "uid %u holds %u replies: no more until it "
			"closes some", (unsigned)uid, c->n);
		return -EMFILE;
	}
	if ((fd = scratch()) < 0)
		return fd;
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	for (size_t done = 0; !err && done < len; ) {
		ssize_t n = write(fd, text + done, len - done);
		if (n <= 0)
			err = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	/* sealed: the caller cannot grow it, nor change what it read */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
	      F_SEAL_SEAL);
	if (!err && (*pass = open(proc, O_RDONLY | O_CLOEXEC)) < 0)
		err = -errno;
	if (!err && uid != REPLY_UNCOUNTED && ino >= 0 &&
	    (c = count_of(uid, true)) &&
	    (h = calloc(1, sizeof *h)) &&
	    (h->wd = inotify_add_watch(ino, proc, IN_CLOSE_NOWRITE)) >= 0) {
		h->uid = uid;
		HASH_ADD_INT(helds, wd, h);
		c->n++;
	} else if (!err && uid != REPLY_UNCOUNTED) {  /* better than none */
		free(h);
		log_msg(LOG_DEBUG, "reply of uid %u uncounted", (unsigned)uid);
	}
	close(fd);
	return err;
}
