/* pidfile.c: DIR/sharebrokerd.pid, locked with flock(2) for as long as the
 * broker runs (pidfile.h).  flock rather than fcntl locks: the lock
 * belongs to the open file, so it passes to the detached child with the
 * descriptor and ends only when the last broker process holding it does,
 * whatever happened to the file's name. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdbool.h>
#include "hold/holder.h"
#include "main/pidfile.h"

/* The pid a locked file holds, 0 when it has none (yet). */
static pid_t holder_of(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	long pid;
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, NULL, 10);
	return pid > 0 ? (pid_t)pid : 0;
}

/* Whether fd is still the file named path: a broker that was stopping may
 * have unlinked it between our open and our flock, and the lock of a
 * nameless file keeps nobody out. */
static bool still_named(int fd, const char *path)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* dir and the directories above it that are missing, as mkdir -p: the
 * state directory's parent may be a /run or /var/run that a fresh tmpfs or
 * an installation under DESTDIR does not have yet. */
static int make_path(const char *dir, mode_t mode)
{
	char *p = strdup(dir), *slash = p;
	int err = p ? 0 : -ENOMEM;
	while (!err && (slash = strchr(slash + 1, '/'))) {
		*slash = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			err = -errno;
		*slash = '/';
	}
	if (!err && mkdir(dir, mode) < 0 && errno != EEXIST)
		err = -errno;
	free(p);
	return err;
}

/* The lock of a broker that died is still held by its holder (holder.c)
 * until it has closed all but its covered mounts, a moment later (a pass
 * over its descriptors): wait for it, 30 s at most, rather than refuse. */
static int lock_after(int fd, pid_t dead)
{
	for (int ms = 0; ms < 30000 && pid_gone(dead); ms++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		usleep(1000);
	}
	return -EWOULDBLOCK;
}

int pidfile_lock(struct pidfile *p, const char *dir, pid_t *holder)
{
	int err = make_path(dir, 0700);
	*holder = 0;
	*p = (struct pidfile){ .fd = -1 };
	if (err < 0)
		return err;
	if (asprintf(&p->path, "%s/%s", dir, LS_PIDFILE_NAME) < 0) {
		p->path = NULL;
		return -ENOMEM;
	}
	for (int tries = 0; tries < 10; tries++) {
		err = 0;
		p->fd = open(p->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			     0644);
		if (p->fd < 0)
			err = -errno;
		else if (flock(p->fd, LOCK_EX | LOCK_NB) < 0)
			err = -errno;
		if (err == -EWOULDBLOCK && (*holder = holder_of(p->fd)) &&
		    pid_gone(*holder))
			err = lock_after(p->fd, *holder);
		if (!err && !still_named(p->fd, p->path)) {
			close(p->fd);
			p->fd = -1;
			err = -EAGAIN;
			continue;
		}
		break;
	}
	if (err == -EWOULDBLOCK)
		*holder = holder_of(p->fd);
	if (err < 0) {
		if (p->fd >= 0)
			close(p->fd);
		free(p->path);
		*p = (struct pidfile){ .fd = -1 };
	}
	return err;
}

int pidfile_write(struct pidfile *p, pid_t pid)
{
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%d\n", (int)pid);
	if (ftruncate(p->fd, 0) < 0 || pwrite(p->fd, buf, (size_t)n, 0) != n)
		return errno ? -errno : -EIO;
	return 0;
}

void pidfile_remove(struct pidfile *p)
{
	if (!p || p->fd < 0)
		return;
	/* unlinked while still locked: a broker starting now either finds
	 * the lock taken or creates a fresh file */
	unlink(p->path);
	close(p->fd);
	free(p->path);
	*p = (struct pidfile){ .fd = -1 };
}
