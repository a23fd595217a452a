/* rectable.c: what crash recovery (recover.c) asks of the kernel's mount
 * table, each from a fresh read, and its walks to the mounts it finds:
 * from / and following no symlink, as a jail may have planted one in a
 * path since.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "mtparse.h"

/* The kernel's line of mount kid on dev, from a fresh read: its
 * mountpoint (malloc'ed), or NULL when the kernel has no such mount. */
char *table_where(int kid, dev_t dev)
{
	char **lines, *mp = NULL;
	size_t n;
	struct entry e;
	if (kid <= 0 || read_lines("/proc/self/mountinfo", &lines, &n) < 0)
		return NULL;
	for (size_t i = 0; i < n && !mp; i++)
		if (mt_parse_line(lines[i], &e) == 0 && e.id == kid &&
		    entry_dev(&e) == dev)
			mp = strdup(e.mp);
	free_lines(lines, n);
	return mp;
}

/* A copy made on its place (copy.c): the mount of superblock dev at mp
 * whose parent is top, the mount that was on top of mp when it was
 * made (nothing else can be its child there); its id, or 0. */
int table_child(int top, dev_t dev, const char *mp)
{
	char **lines;
	size_t n;
	struct entry e;
	int kid = 0;
	if (read_lines("/proc/self/mountinfo", &lines, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && !kid; i++)
		if (mt_parse_line(lines[i], &e) == 0 && e.parent == top &&
		    entry_dev(&e) == dev && strcmp(e.mp, mp) == 0)
			kid = e.id;
	free_lines(lines, n);
	return kid;
}

/* path opened O_PATH by a walk from / that follows no symlink. */
int table_walk(const char *path)
{
	int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char name[256];
	while (cur >= 0 && *path) {
		size_t len = strcspn(path, "/");
		if (len == 0 || len >= sizeof name) {
			path += len ? len : 1;
			if (len >= sizeof name) {
				close(cur);
				return -ENAMETOOLONG;
			}
			continue;
		}
		memcpy(name, path, len);
		name[len] = '\0';
		path += len;
		int fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		close(cur);
		if (fd >= 0 && (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode))) {
			close(fd);
			return -ELOOP;
		}
		cur = fd;
	}
	return cur < 0 ? -errno : cur;
}
