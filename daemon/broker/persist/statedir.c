/* statedir.c: the broker's own directory, whatever an earlier broker left
 * in it (issue 13 item 2).
 *
 * stage/N and park/N are places where a mount waits for the time of one
 * plan (exec.c), N being the mount's sequence number, which starts again
 * at every start.  A broker killed in the middle of a plan leaves them
 * with the mount still on them, and brokers before this one left every
 * directory stage/N behind: a file staged later for a file bind met a
 * directory of its name.  None of them is anything's place in the graph,
 * so before the table is imported (the graph must never learn of them)
 * the mounts on them are detached and the entries removed.  A state file
 * that is not one (a directory, a fifo) is set aside, and so is a file of
 * another format (state.c); a state.new is a save cut short and goes.
 * Everything done is logged: an administrator should know.  A directory
 * another broker runs on is left alone (lock_dir()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "base/log.h"
#include "persist/persist.h"

#ifndef UMOUNT_NOFOLLOW
#define UMOUNT_NOFOLLOW 8
#endif

/* Detaches whatever is mounted on path, the top first; how many. */
static int detach_all(const char *path)
{
	int n = 0;
	/* NOFOLLOW: an entry that is a symlink names no place of ours */
	while (n < 64 && umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
		n++;
	return n;
}

/* Removes name in dir and everything under it, without crossing into a
 * mount (there is none left, but a tree is never followed blindly). */
static int remove_tree(int dir, const char *name, int depth)
{
	struct stat st;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dir, name, 0) < 0 ? -errno : 0;
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC);
	DIR *d = fd >= 0 && depth < 16 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int err = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return unlinkat(dir, name, AT_REMOVEDIR) < 0 ? -errno : 0;
	}
	while (!err && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			err = remove_tree(dirfd(d), e->d_name, depth + 1);
	closedir(d);
	if (!err && unlinkat(dir, name, AT_REMOVEDIR) < 0)
		err = -errno;
	return err;
}

/* Empties one of the places (stage, park): mounts detached, entries
 * removed.  A leftover that stays is met again by place_path() (exec.c). */
static void sweep(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	char path[PATH_MAX];
	int removed = 0;
	if (!d) {
		log_msg(LOG_WARNING, "%s: %s", base, strerror(errno));
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof path, "%s/%s", base, e->d_name);
		int n = detach_all(path);
		if (n)
			log_msg(LOG_WARNING, "%s: %d mount%s left by an earlier "
				"broker, detached", path, n, n > 1 ? "s" : "");
		int r = remove_tree(dirfd(d), e->d_name, 0);
		if (r < 0)
			log_msg(LOG_WARNING, "%s: cannot remove: %s", path,
				strerror(-r));
		else
			removed++;
	}
	closedir(d);
	if (removed)
		log_msg(LOG_INFO, "%s: %d leftover%s removed", base, removed,
			removed > 1 ? "s" : "");
}

/* Moves the state file aside, as state.old (replacing an older one): the
 * broker starts without it, and the administrator keeps it. */
void statedir_set_aside(const struct broker *b, const char *why)
{
	char path[PATH_MAX], old[PATH_MAX + 8];
	snprintf(path, sizeof path, "%s/state", b->state_dir);
	snprintf(old, sizeof old, "%s.old", path);
	int dir = open(b->state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir >= 0) {
		remove_tree(dir, "state.old", 0);
		close(dir);
	}
	if (rename(path, old) < 0)
		log_msg(LOG_WARNING, "%s: %s, and cannot be set aside: %s",
			path, why, strerror(errno));
	else
		log_msg(LOG_WARNING, "%s: %s; set aside as %s, the broker "
			"starts without it", path, why, old);
}

/* The state files: state must be a regular file (or absent); a state.new
 * is what a save cut short left. */
static void check_state(const struct broker *b)
{
	char path[PATH_MAX];
	struct stat st;
	int dir = open(b->state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	if (fstatat(dir, "state.new", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		snprintf(path, sizeof path, "%s/state.new", b->state_dir);
		int r = remove_tree(dir, "state.new", 0);
		log_msg(r ? LOG_WARNING : LOG_INFO, "%s: an unfinished save%s",
			path, r ? ", cannot be removed" : ", removed");
	}
	if (fstatat(dir, "state", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode))
		statedir_set_aside(b, "not a regular file");
	close(dir);
}

/* The state directory ready for this broker: before the table is read. */
int statedir_prepare(struct broker *b)
{
	if (mkdir(b->state_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* the directory is this broker's alone by now: main() took its
	 * pidfile's lock (pidfile.c), so no other broker is in the middle of
	 * a plan in the places swept here */
	if ((mkdir(b->stage, 0700) < 0 && errno != EEXIST) ||
	    (mkdir(b->park, 0700) < 0 && errno != EEXIST))
		return -errno;
	sweep(b->stage);
	sweep(b->park);
	check_state(b);
	return 0;
}

/* STATE/ns/PID.ID: a broker started again numbers its namespaces from
 * the start, and its predecessor's copies may still be mounted there. */
/* The executor's places in it (exec.c): stage, park and newroot. */
int statedir_places(struct broker *b)
{
	if (asprintf(&b->stage, "%s/stage", b->state_dir) < 0 ||
	    asprintf(&b->park, "%s/park", b->state_dir) < 0 ||
	    asprintf(&b->newroot, "%s/newroot", b->state_dir) < 0)
		return -ENOMEM;
	return 0;
}

int ns_dir(const struct broker *b, const struct ns *ns, char *buf,
	   size_t size)
{
	if (ns)
		return snprintf(buf, size, "%s/ns/%d.%u", b->state_dir,
				(int)getpid(), ns->id);
	return snprintf(buf, size, "%s/ns", b->state_dir);
}
