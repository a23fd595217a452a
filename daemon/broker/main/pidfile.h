/* pidfile.h: the broker's pidfile, which is also its lock on the state
 * directory (pidfile.c).  Two brokers on one state directory would reset
 * each other's staging and parking places and overwrite each other's
 * saved state; the second one refuses, naming the first. */
#ifndef LS_PIDFILE_H
#define LS_PIDFILE_H

#include <stdbool.h>
#include <sys/types.h>

#define LS_PIDFILE_NAME "sharebrokerd.pid"

struct pidfile {
	char *path;            /* DIR/sharebrokerd.pid */
	int fd;                /* holds the lock (flock: kept across fork) */
};

/* Takes the lock of directory dir, made first if missing (mode 0700, and
 * its missing parents 0755).  0; -EWOULDBLOCK when another broker holds
 * it, *holder its pid (0 if it has not written it yet); or -errno, p->path
 * then NULL. */
int pidfile_lock(struct pidfile *p, const char *dir, pid_t *holder);
/* Writes pid into the locked file: 0 or -errno. */
int pidfile_write(struct pidfile *p, pid_t pid);
/* Removes the file, still locked, and lets the lock go.  NULL-safe. */
void pidfile_remove(struct pidfile *p);

#endif
