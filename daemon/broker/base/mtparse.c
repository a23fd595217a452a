/* mtparse.c: the kernel's mount table as text: /proc/self/mountinfo, and
 * /proc/mounts before Linux 2.6.26.  Parsing and the table's own walk
 * only, no system call but opening and reading a file;
 * test/unit/mtparse-test.c checks it on golden files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "base/mtparse.h"
#include "vec.h"

/* mountinfo's octal escapes (\040 and friends), in place. */
char *unescape(char *s)
{
	char *o = s;
	for (char *i = s; *i; i++, o++)
		if (i[0] == '\\' && i[1] >= '0' && i[1] <= '3' &&
		    i[2] >= '0' && i[2] <= '7' && i[3] >= '0' && i[3] <= '7') {
			*o = (char)((i[1] - '0') << 6 | (i[2] - '0') << 3 |
				    (i[3] - '0'));
			i += 3;
		} else {
			*o = *i;
		}
	*o = '\0';
	return s;
}

/* Splits one line into e (pointing into it); -EINVAL when malformed. */
int mt_parse_line(char *line, struct entry *e)
{
	char *f[32], *save = NULL;
	int n = 0, dash = -1;
	for (char *t = strtok_r(line, " \n", &save); t && n < 32;
	     t = strtok_r(NULL, " \n", &save)) {
		if (dash < 0 && n >= 6 && strcmp(t, "-") == 0)
			dash = n;
		f[n++] = t;
	}
	if (dash < 0 || n != dash + 4)
		return -EINVAL;
	memset(e, 0, sizeof *e);
	e->id = atoi(f[0]);
	e->parent = atoi(f[1]);
	snprintf(e->dev, sizeof e->dev, "%s", f[2]);
	e->root = unescape(f[3]);
	e->mp = unescape(f[4]);
	e->opts = f[5];
	for (int i = 6; i < dash; i++)
		e->propagates = true;  /* shared:N, master:N, unbindable */
	e->type = unescape(f[dash + 1]);
	e->source = unescape(f[dash + 2]);
	e->sbopts = f[dash + 3];
	return 0;
}

/* A line of /proc/mounts, where mountinfo is missing (before Linux
 * 2.6.26): no ids, parents or roots.  Ids are made up, each mount's parent
 * is the last earlier mount at or above its mountpoint, its root is taken
 * to be the filesystem's root, and block devices stand for superblocks. */
int mt_parse_mounts_line(char *line, struct entry *e, struct entry *v,
			     size_t i)
{
	char *f[6], *save = NULL;
	int n = 0;
	for (char *t = strtok_r(line, " \n", &save); t && n < 6;
	     t = strtok_r(NULL, " \n", &save))
		f[n++] = t;
	if (n < 4)
		return -EINVAL;
	memset(e, 0, sizeof *e);
	e->id = (int)i + 1;
	e->guessed = true;
	e->source = unescape(f[0]);
	e->mp = unescape(f[1]);
	e->type = unescape(f[2]);
	e->opts = e->sbopts = f[3];
	e->root = "/";
	for (size_t j = i; j-- > 0; )
		if (dir_under(e->mp, v[j].mp)) {
			e->parent = v[j].id;
			break;
		}
	if (strncmp(e->source, "/dev/", 5) == 0)
		snprintf(e->dev, sizeof e->dev, "%s", e->source);
	else
		snprintf(e->dev, sizeof e->dev, "#%zu", i);
	return 0;
}

/* The kernel's superblock of an entry ("major:minor"). */
dev_t entry_dev(const struct entry *e)
{
	unsigned maj, min;
	return sscanf(e->dev, "%u:%u", &maj, &min) == 2 ? makedev(maj, min) : 0;
}

/* The lines of fd from where it is to its end, malloc'ed; -errno when it
 * cannot be read.  fd stays open at the end: a mountinfo read on later
 * gives the mounts made since (fslearn.c). */
int fd_read_lines(int fd, char ***out, size_t *count)
{
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	FILE *f = own < 0 ? NULL : fdopen(own, "r");
	char *line = NULL, **lines = NULL;
	size_t cap = 0, n = 0, room = 0;
	if (!f) {
		int err = -errno;
		if (own >= 0)
			close(own);
		return err;
	}
	while (getline(&line, &cap, f) > 0 && !VEC_PUSH(lines, n, room, line))
		line = NULL;
	free(line);
	fclose(f);
	*out = lines;
	*count = n;
	return 0;
}

/* The lines of a file, malloc'ed; -errno when it cannot be read. */
int read_lines(const char *path, char ***out, size_t *count)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = fd_read_lines(fd, out, count);
	close(fd);
	return err;
}

void free_lines(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

static int by_id(const void *a, const void *b)
{
	int x = (*(struct entry *const *)a)->id;
	int y = (*(struct entry *const *)b)->id;
	return (x > y) - (x < y);
}

/* Sorted by id, so that an entry is found in log n: with 100,000 mounts
 * a linear search per entry is 10^10 steps. */
struct entry **entry_index(struct entry *v, size_t n)
{
	struct entry **ix = malloc((n ? n : 1) * sizeof *ix);
	for (size_t i = 0; ix && i < n; i++)
		ix[i] = &v[i];
	if (ix)
		qsort(ix, n, sizeof *ix, by_id);
	return ix;
}

struct entry *entry_find(struct entry **ix, size_t n, int id)
{
	struct entry key = { .id = id }, *k = &key;
	struct entry **e = bsearch(&k, ix, n, sizeof *ix, by_id);
	return e ? *e : NULL;
}

void table_free(struct table *t)
{
	if (t->watch >= 0)
		close(t->watch);
	free(t->by_mp);
	free(t->ix);
	free(t->v);
	free_lines(t->lines, t->n);
	memset(t, 0, sizeof *t);
	t->watch = -1;
}

/* The kernel notes its table's state when mountinfo is opened, and flags
 * a change after it once, to that reader (POLLPRI): opened before the
 * read, the watch sees a change made while the table is read too. */
int table_watch(void)
{
	return open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
}

int table_read(struct table *t)
{
	memset(t, 0, sizeof *t);
	t->watch = -1;
	int err = read_lines("/proc/self/mountinfo", &t->lines, &t->n);
	if (err) {
		table_free(t);
		return err;
	}
	t->v = calloc(t->n ? t->n : 1, sizeof *t->v);
	/* -fanalyzer: read_lines() gives a line for each of its n */
	for (size_t i = 0; t->v && i < t->n; i++)
		if (mt_parse_line(t->lines[i], &t->v[i]) < 0)
			memset(&t->v[i], 0, sizeof t->v[i]);
	if (!t->v || !(t->ix = entry_index(t->v, t->n))) {
		table_free(t);
		return -ENOMEM;
	}
	return 0;
}

int table_read_watched(struct table *t)
{
	int watch = table_watch(), err = table_read(t);
	if (!err)
		t->watch = watch;
	else if (watch >= 0)
		close(watch);
	return err;
}

struct entry *table_find(const struct table *t, int id)
{
	return entry_find(t->ix, t->n, id);
}

/* e against a mount on mp of parent, in by_mp's order: by parent, then
 * mountpoint; the lines that did not parse (id 0) last. */
static int place_cmp(const struct entry *e, int parent, const char *mp)
{
	if (!e->id)
		return 1;
	if (e->parent != parent)
		return e->parent < parent ? -1 : 1;
	int c = strcmp(e->mp, mp);
	return (c > 0) - (c < 0);
}

/* Equal places in the table's order: a lookup takes the first, as a scan
 * of the table does. */
static int by_place(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a;
	const struct entry *y = *(struct entry *const *)b;
	int c = y->id ? place_cmp(x, y->parent, y->mp) : -(x->id != 0);
	return c ? c : (x > y) - (x < y);
}

struct place {
	int parent;
	const char *mp;
};

static int place_key(const void *key, const void *e)
{
	const struct place *k = key;
	return -place_cmp(*(struct entry *const *)e, k->parent, k->mp);
}

/* The first mount the table lists on dir of parent, not parent itself (a
 * root may be its own parent), or NULL. */
static const struct entry *child_on(const struct table *t,
				    const struct entry *parent,
				    const char *dir)
{
	struct place k = { parent->id, dir };
	struct entry **e;
	if (!t->by_mp) {
		for (size_t i = 0; i < t->n; i++) {
			const struct entry *c = &t->v[i];
			if (c->id && c != parent && c->parent == parent->id &&
			    strcmp(c->mp, dir) == 0)
				return c;
		}
		return NULL;
	}
	e = bsearch(&k, t->by_mp, t->n, sizeof *e, place_key);
	while (e && e > t->by_mp && place_key(&k, e - 1) == 0)
		e--;
	for (; e && e < t->by_mp + t->n && place_key(&k, e) == 0; e++)
		if (*e != parent)
			return *e;
	return NULL;
}

/* The table's root: the first mount on "/" whose parent the table does
 * not have, or is itself. */
static struct entry *root_of(const struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct entry *e = &t->v[i];
		if (e->id && (e->parent == e->id || !table_find(t, e->parent)) &&
		    strcmp(e->mp, "/") == 0)
			return e;
	}
	return NULL;
}

/* The top of the mounts stacked on dir of parent, parent when none is. */
static const struct entry *top_at(const struct table *t,
				  const struct entry *parent, const char *dir)
{
	for (const struct entry *up; (up = child_on(t, parent, dir)); )
		parent = up;
	return parent;
}

const struct entry *table_walk(const struct table *t, const char *path)
{
	char dir[PATH_MAX];
	const struct entry *root = t->by_mp ? t->root : root_of(t);
	const struct entry *cur = root ? top_at(t, root, "/") : NULL;
	size_t n = strlen(path);
	if (n >= sizeof dir)
		return NULL;
	for (size_t i = 1; cur && i <= n; i++)
		if (path[i] == '/' || path[i] == '\0') {
			memcpy(dir, path, i);
			dir[i] = '\0';
			cur = top_at(t, cur, dir);
		}
	return cur;
}

/* A walk is a lookup per directory on the path: the scan of the table
 * each costs makes a question per mount (the import's) quadratic. */
int table_sort(struct table *t)
{
	if (t->by_mp)
		return 0;
	struct entry **v = malloc((t->n ? t->n : 1) * sizeof *v);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		v[i] = &t->v[i];
	qsort(v, t->n, sizeof *v, by_place);
	t->root = root_of(t);
	t->by_mp = v;
	return 0;
}
