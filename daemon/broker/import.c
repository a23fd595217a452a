/* import.c: the host's mount table as the broker's first graph, and the
 * handles that keep every mount reachable.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "broker.h"

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

struct entry {                 /* one line of mountinfo */
	int id, parent;
	char dev[32], *root, *mp, *opts, *type, *source, *sbopts;
	bool propagates;       /* shared, master or unbindable */
	bool guessed;          /* from /proc/mounts: id is not the kernel's */
	bool top;              /* guessed: the last line at its mountpoint */
	struct mount *m;
};

static bool has_opt(const char *list, const char *opt)
{
	size_t n = strlen(opt);
	for (const char *p = list; p; p = strchr(p, ',')) {
		p += *p == ',';
		if (strncmp(p, opt, n) == 0 && (p[n] == ',' || !p[n]))
			return true;
	}
	return false;
}

static unsigned mnt_flags_of(const char *o)
{
	static const struct { const char *name; unsigned f; } t[] = {
		{ "ro", MNT_RDONLY }, { "nosuid", MNT_NOSUID },
		{ "nodev", MNT_NODEV }, { "noexec", MNT_NOEXEC },
		{ "noatime", MNT_NOATIME }, { "nodiratime", MNT_NODIRATIME },
		{ "relatime", MNT_RELATIME }, { "nosymfollow", MNT_NOSYMFOLLOW },
	};
	unsigned f = 0;
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (has_opt(o, t[i].name))
			f |= t[i].f;
	return f;
}

static unsigned sb_flags_of(const char *o)
{
	return (has_opt(o, "ro") ? SB_RDONLY : 0) |
	       (has_opt(o, "sync") ? SB_SYNC : 0) |
	       (has_opt(o, "dirsync") ? SB_DIRSYNC : 0) |
	       (has_opt(o, "mand") ? SB_MAND : 0) |
	       (has_opt(o, "lazytime") ? SB_LAZYTIME : 0);
}

/* Splits one line into e (pointing into it); -EINVAL when malformed. */
static int parse_line(char *line, struct entry *e)
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
static int parse_mounts_line(char *line, struct entry *e, struct entry *v,
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

static struct entry *find(struct entry *v, size_t n, int id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return &v[i];
	return NULL;
}

/* The directory of parent's filesystem that the path mp is on. */
static char *dir_in(const struct entry *parent, const char *mp)
{
	const char *rel = mp + strlen(parent->mp);
	char *d;
	if (strcmp(parent->mp, "/") == 0)
		rel = strcmp(mp, "/") == 0 ? "" : mp;
	if (asprintf(&d, "%s%s", strcmp(parent->m->root, "/") == 0 && *rel ?
		     "" : parent->m->root, rel) < 0)
		return NULL;
	return d;
}

/* The kernel's superblock of an entry ("major:minor"). */
static dev_t entry_dev(const struct entry *e)
{
	unsigned maj, min;
	return sscanf(e->dev, "%u:%u", &maj, &min) == 2 ? makedev(maj, min) : 0;
}

/* A mount the broker can reach by its path gets a handle: the top of its
 * stack, when nothing covers it.  Others stay out of reach (logged). */
static void hold(struct broker *b, struct entry *e)
{
	int fd = open(e->mp, O_PATH | O_CLOEXEC);
	if (fd >= 0 && (e->guessed ? e->top : fd_mnt_id(fd) == e->id) &&
	    handle_add(b, e->m, fd) == 0)
		return;
	if (fd >= 0)
		close(fd);
	log_msg(LOG_WARNING, "mount %d on %s is covered: out of the broker's "
		"reach; requests that would unmount it, move it or propagate "
		"to or from it fail with EIO until what covers it goes",
		e->id, e->mp);
	handle_put(b, e->m, -1, e->id, entry_dev(e));
}

static int read_lines(const char *path, char ***out, size_t *count);
static void free_lines(char **lines, size_t n);

/* What the kernel says of a superblock: its device, its flags, and the
 * filesystem's own options (field 11 of mountinfo without the flags the
 * renderer writes itself). */
static void fs_learn(struct fs *fs, dev_t dev, const char *sbopts)
{
	static const char *const flags[] = { "ro", "rw", "sync", "dirsync",
					     "mand", "lazytime" };
	char *own = malloc(strlen(sbopts) + 1), *o = own;
	fs->major = major(dev);
	fs->dev = minor(dev);
	fs->flags = sb_flags_of(sbopts);
	for (const char *p = sbopts; own && *p; ) {
		size_t n = strcspn(p, ",");
		bool flag = false;
		for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
			flag |= strlen(flags[i]) == n && !strncmp(p, flags[i], n);
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

/* The kernel's superblock options of mount kid, for fs_learn(): the
 * broker reads them once per new filesystem. */
int fs_learn_kid(struct fs *fs, int kid)
{
	char **lines;
	size_t n;
	struct entry e;
	int err = read_lines("/proc/self/mountinfo", &lines, &n);
	for (size_t i = 0; !err && i < n; i++)
		if (parse_line(lines[i], &e) == 0 && e.id == kid) {
			fs_learn(fs, entry_dev(&e), e.sbopts);
			break;
		}
	if (!err)
		free_lines(lines, n);
	return err;
}

static struct fs *fs_of(struct broker *b, struct entry *v, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (v[j].m && strcmp(v[j].dev, v[i].dev) == 0)
			return v[j].m->fs;
	struct fs *fs = fs_new(&b->g, v[i].type, "");
	fs_learn(fs, entry_dev(&v[i]), v[i].sbopts);
	return fs;
}

/* Attach every entry whose parent is in the graph, until none is left. */
static int build(struct broker *b, struct entry *v, size_t n)
{
	size_t done = 0;
	for (bool progress = true; progress && done < n; ) {
		progress = false;
		for (size_t i = 0; i < n; i++) {
			struct entry *p = find(v, n, v[i].parent);
			if (v[i].m || (p && !p->m) || (!p && done))
				continue;
			char *dir = p ? dir_in(p, v[i].mp) : NULL;
			v[i].m = graph_import(&b->g, b->ns, p ? p->m : NULL, dir,
					      fs_of(b, v, i), v[i].root,
					      v[i].source,
					      mnt_flags_of(v[i].opts));
			free(dir);
			if (!v[i].m)
				return -EINVAL;
			hold(b, &v[i]);
			done++;
			progress = true;
		}
	}
	return done == n ? 0 : -EINVAL;
}

/* Reads the kernel's table (mountinfo) into an empty graph.  A table in
 * which the kernel itself propagates is refused: kernel and broker must
 * never both propagate (docs/design.md, a kernel that already propagates). */
/* The lines of a file, malloc'ed; -errno when it cannot be read. */
static int read_lines(const char *path, char ***out, size_t *count)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, **lines = NULL;
	size_t cap = 0, n = 0;
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char **nl = realloc(lines, (n + 1) * sizeof *lines);
		if (!nl)
			break;
		lines = nl;
		lines[n++] = line;
		line = NULL;
	}
	free(line);
	fclose(f);
	*out = lines;
	*count = n;
	return 0;
}

static void free_lines(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

/* The kernel's table now, each entry with the graph's mount of its id
 * (NULL for one the graph lacks); the entries point into *lines.  NULL
 * (and no lines) when it cannot be read. */
static struct entry *read_table(struct broker *b, char ***lines, size_t *n)
{
	struct entry *v = NULL;
	if (read_lines("/proc/self/mountinfo", lines, n) == 0 &&
	    (v = calloc(*n ? *n : 1, sizeof *v)) == NULL)
		free_lines(*lines, *n);
	if (!v) {
		*lines = NULL;
		*n = 0;
	}
	for (size_t i = 0; v && i < *n; i++)
		if (parse_line((*lines)[i], &v[i]) == 0)
			v[i].m = mount_of_kid(b, v[i].id);
	return v;
}

/* Mounts made or unmounted behind the broker's back (a static binary, a
 * tool run without the shim): the graph follows the kernel's table before
 * it decides anything.  New mounts join as private mounts under their
 * parents; vanished ones leave with their subtrees.  Returns how many
 * changed. */
int sync_table(struct broker *b)
{
	char **lines;
	size_t n;
	int changed = 0;
	struct entry *v = read_table(b, &lines, &n);
	for (struct handle *h = b->by_seq, *next; v && h; h = next) {
		next = h->hh.next;
		if (!h->m->parent || find(v, n, h->kid))
			continue;
		struct mount *gone = h->m;
		for (struct mount *q = gone; q; q = next_in_tree(q, gone)) {
			struct handle *qh;
			HASH_FIND(hh, b->by_seq, &q->seq, sizeof q->seq, qh);
			if (qh && qh == next)
				next = qh->hh.next;
			if (qh)
				handle_drop(b, qh);
		}
		graph_forget(&b->g, gone);
		changed++;
		next = b->by_seq;      /* the table changed under the walk */
	}
	for (bool more = true; v && more; ) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			struct entry *p = find(v, n, v[i].parent);
			if (v[i].m || !p || !p->m || v[i].propagates)
				continue;
			char *dir = dir_in(p, v[i].mp);
			struct fs *fs = fs_of_dev(b, entry_dev(&v[i]));
			if (!fs) {
				fs = fs_new(&b->g, v[i].type, "");
				fs_learn(fs, entry_dev(&v[i]), v[i].sbopts);
			}
			v[i].m = graph_import(&b->g, b->ns, p->m, dir, fs,
					      v[i].root, v[i].source,
					      mnt_flags_of(v[i].opts));
			free(dir);
			if (v[i].m)
				hold(b, &v[i]);
			more = changed += v[i].m != NULL;
		}
	}
	free(v);
	free_lines(lines, n);
	return changed;
}

/* The kernel flags a change of its mount table on an open mountinfo
 * (POLLPRI, since 2.6.15), once per reader: the broker keeps one open to
 * learn whether anyone else changed the table since its last request. */
bool table_changed(struct broker *b)
{
	struct pollfd p = { .fd = b->watch, .events = POLLPRI };
	return b->watch >= 0 && poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLPRI | POLLERR));
}

/* Directories renamed since the graph learned their names: the kernel
 * follows dentries, the graph keeps names.  Every held mount's root and
 * mountpoint are read again from mountinfo; returns how many changed.
 * Called only when a request met a stale name (EIO), so its cost, linear
 * in the table, is paid only then. */
int refresh_paths(struct broker *b)
{
	char **lines;
	size_t n;
	int changed = 0;
	struct entry *v = read_table(b, &lines, &n);
	for (size_t i = 0; v && i < n; i++)
		if (v[i].m && strcmp(v[i].m->root, v[i].root) != 0) {
			mount_rename(&b->g, v[i].m, v[i].root, NULL);
			changed++;
		}
	for (size_t i = 0; v && i < n; i++) {
		struct entry *p = v[i].m ? find(v, n, v[i].parent) : NULL;
		char *dir = p && p->m && p->m == v[i].m->parent ?
			    dir_in(p, v[i].mp) : NULL;
		if (dir && strcmp(dir, v[i].m->mp) != 0) {
			mount_rename(&b->g, v[i].m, v[i].m->root, dir);
			changed++;
		}
		free(dir);
	}
	free(v);
	free_lines(lines, n);
	return changed;
}

int import_table(struct broker *b, const char *mountinfo)
{
	bool mounts = strcmp(strrchr(mountinfo, '/') ?: mountinfo, "/mounts") == 0;
	char **lines;
	size_t n;
	struct entry *v = NULL;
	int err = read_lines(mountinfo, &lines, &n);
	if (err)
		return err;
	v = calloc(n ? n : 1, sizeof *v);
	for (size_t i = 0; v && !err && i < n; i++)
		if ((err = mounts ? parse_mounts_line(lines[i], &v[i], v, i) :
			   parse_line(lines[i], &v[i])) == 0 && v[i].propagates) {
			fprintf(stderr, "sharebrokerd: the kernel already "
				"propagates mount %d (%s); run the broker where "
				"every mount is private (mount --make-rprivate /, "
				"or unshare -m --propagation private)\n",
				v[i].id, v[i].mp);
			err = -EEXIST;
		}
	if (!v)
		err = -ENOMEM;
	for (size_t i = 0; mounts && !err && i < n; i++) {
		v[i].top = true;
		for (size_t j = i + 1; j < n && v[i].top; j++)
			v[i].top = strcmp(v[i].mp, v[j].mp) != 0;
	}
	if (!err)
		err = build(b, v, n);
	free_lines(lines, n);
	free(v);
	return err;
}
