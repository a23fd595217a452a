/* fslearn.c: what the kernel says of a superblock (its device, flags and
 * own options), from mountinfo: the whole table at import, one new line
 * for a filesystem made since.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "base/base.h"
#include "base/mtparse.h"

static int tail = -1;          /* fs_learn_kid()'s mountinfo */

/* The broker's descriptors are counted against its mounts (wirefuzz and
 * load tests): fs_learn_kid()'s mountinfo is opened with the first
 * filesystem learned, at import, not with the first request. */
static void tail_open(void)
{
	if (tail < 0)
		tail = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
}

/* fs_learn_kid()'s mountinfo, for the import to read the table through:
 * left at its end, it gives the first new filesystem its own line, not
 * the whole table again (with 100,000 mounts, a third of a second). */
int fs_learn_tail(void)
{
	tail_open();
	return tail;
}

/* What the kernel says of a superblock: its device, its flags, and the
 * filesystem's own options (field 11 of mountinfo without the flags the
 * renderer writes itself). */
void fs_learn(struct fs *fs, dev_t dev, const char *sbopts)
{
	char *own = malloc(strlen(sbopts) + 1), *o = own;
	tail_open();
	fs->major = major(dev);
	fs->dev = minor(dev);
	fs->flags = flags_named(&sb_flag_table, sbopts);
	for (const char *p = sbopts; own && *p; ) {
		size_t n = strcspn(p, ",");
		bool flag = flag_by_name(&sb_flag_table, p, n) ||
			    (n == 2 && !strncmp(p, "rw", 2));
		if (!flag) {
			o += sprintf(o, "%s%.*s", o == own ? "" : ",", (int)n, p);
		}
		p += n + (p[n] == ',');
	}
	if (own) {
		*o = '\0';
		free(fs->opts);
		fs->opts = own;
	}
}

/* The lines that fd (mountinfo) has to give from where it is, up to its
 * end; the one of mount kid, if among them, to fs_learn().  -ENOENT when
 * it is not; the lines are read to the end either way. */
static int learn_from(struct fs *fs, int fd, int kid)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap), *line, *nl;
	ssize_t got = 1;
	int err = buf ? -ENOENT : -ENOMEM;
	while (buf && got > 0) {
		if (cap - len < 4096) {        /* a long line: room for it */
			if (!(line = realloc(buf, cap * 2))) {
				err = -ENOMEM;
				break;
			}
			buf = line;
			cap *= 2;
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0)
			err = -errno;
		len += got > 0 ? (size_t)got : 0;
		for (line = buf; (nl = memchr(line, '\n', len - (size_t)(line - buf)));
		     line = nl + 1) {
			struct entry e;
			*nl = '\0';
			if (err == -ENOENT && atoi(line) == kid &&
			    mt_parse_line(line, &e) == 0 && e.id == kid) {
				fs_learn(fs, entry_dev(&e), e.sbopts);
				err = 0;
			}
		}
		len -= (size_t)(line - buf);   /* a line cut short waits */
		memmove(buf, line, len);
	}
	free(buf);
	return err;
}

/* The kernel's superblock options of mount kid, for fs_learn(), once per
 * new filesystem.  A mountinfo kept open past its end goes on with the
 * mounts made since (the kernel lists them in the order of their ids and
 * the reader keeps its place), so a new mount costs its own line, not the
 * whole table (issue 10 item 3); where it is not among them (an older
 * kernel's list moved under the reader) the whole table is read again. */
int fs_learn_kid(struct fs *fs, int kid)
{
	int err = tail >= 0 ? learn_from(fs, tail, kid) : -ENOENT;
	if (err) {
		if (tail >= 0)
			close(tail);
		tail = -1;
		tail_open();
		err = tail < 0 ? -errno : learn_from(fs, tail, kid);
	}
	return err == -ENOENT ? 0 : err;
}
