/* recover.c: at start, the plan a dead broker was in the middle of
 * (intent.c wrote its record) finished or undone, before the table is
 * imported, so that the graph learns the kernel as one of the two
 * outcomes: the request done, with all its propagation, or not at all.
 *
 * A record whose plan the saved state names (the serial of the journal's
 * last record, or the snapshot's "# plan N") was kept and saved: it only
 * goes.  Otherwise the steps marked done, and the one in flight if
 * the kernel shows it happened, are undone in reverse order: new mounts
 * detached, moved ones moved back.  A plan that unmounted something
 * cannot be undone: it is finished (the rest of its unmounts and moves),
 * and what it changes in the state, which its record carries, is
 * appended to the journal (stcache.c).  The mounts are found by their kernel ids in the kernel's table,
 * and reached by walks that follow no symlink: a jail may have planted
 * one in a path since.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "broker.h"
#include "mtparse.h"

struct rstep {
	int kind;
	int kid;               /* the mount: the step's, or the one it made */
	dev_t dev;
	char prog;             /* '-', 'S', 'D' (intent.c) */
	char *was, *to;        /* NULL: "-" */
};

struct record {
	unsigned long long serial;
	struct rstep *s;
	size_t n;
	char *delta;           /* its operations, "= " taken off */
	size_t ndelta;
};

static int kind_of(const char *name)
{
	for (int k = STEP_NEW; k <= STEP_REMOUNT_RO; k++)
		if (strcmp(step_name(k), name) == 0)
			return k;
	return -1;
}

static char *path_field(char *t)
{
	return t && strcmp(t, "-") ? strdup(unescape(t)) : NULL;
}

/* One step's line; -EINVAL when it is not one. */
static int parse_step(char *line, struct rstep *s)
{
	char *f[10], *save = NULL;
	int n = 0;
	unsigned ma, mi, pma, pmi;
	for (char *t = strtok_r(line, " \n", &save); t && n < 10;
	     t = strtok_r(NULL, " \n", &save))
		f[n++] = t;
	if (n < 7 || (s->kind = kind_of(f[1])) < 0 ||
	    sscanf(f[3], "%u:%u", &ma, &mi) != 2)
		return -EINVAL;
	s->kid = atoi(f[2]);
	s->dev = makedev(ma, mi);
	s->prog = f[4][0];
	int p = 5;
	if (s->prog != '-') {  /* "S|D kid dev" */
		if (n < 9 || sscanf(f[6], "%u:%u", &pma, &pmi) != 2)
			return -EINVAL;
		if (s->kind == STEP_NEW || s->kind == STEP_BIND) {
			s->kid = atoi(f[5]);
			s->dev = makedev(pma, pmi);
		}
		p = 7;
	}
	s->was = path_field(f[p]);
	s->to = path_field(f[p + 1]);
	return 0;
}

/* The record in text; -EINVAL for one cut short (no "end"). */
static int parse(char *text, struct record *r)
{
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	size_t want;
	bool delta = false, end = false;
	if (!line || sscanf(line, "libshare-intent 1 %llu %zu", &r->serial,
			    &want) != 2 || want > 1000000)
		return -EINVAL;
	if (!(r->s = calloc(want + 1, sizeof *r->s)) ||
	    !(r->delta = malloc(strlen(save ? save : "") + 1)))
		return -ENOMEM;
	r->delta[0] = '\0';
	while (!end && (line = strtok_r(NULL, "\n", &save))) {
		if (strcmp(line, "end") == 0)
			end = true;
		else if (strcmp(line, "delta") == 0)
			delta = true;
		else if (delta && strncmp(line, "= ", 2) == 0)
			r->ndelta += (size_t)sprintf(r->delta + r->ndelta,
						     "%s\n", line + 2);
		else if (delta || r->n >= want ||
			 parse_step(line, &r->s[r->n++]) < 0)
			return -EINVAL;
	}
	return end && r->n == want ? 0 : -EINVAL;
}

/* The kernel's line of mount kid on dev, from a fresh read: its
 * mountpoint (malloc'ed), or NULL when the kernel has no such mount. */
static char *where_is(int kid, dev_t dev)
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

/* path opened O_PATH by a walk from / that follows no symlink. */
static int walk(const char *path)
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

/* The mount kid itself (the top of its place), opened. */
static int open_kid(int kid, dev_t dev)
{
	char *mp = where_is(kid, dev);
	int fd = mp ? walk(mp) : -ENOENT;
	free(mp);
	if (fd >= 0 && fd_mnt_id(fd) != kid) {
		close(fd);
		return -EBUSY;         /* covered */
	}
	return fd;
}

/* A park place that the plan's end removed already, made again. */
static void remake(const struct broker *b, const char *place, int fd)
{
	struct stat st;
	char *park = realpath(b->park, NULL);
	size_t n = park ? strlen(park) : 0;
	bool ours = park && !strncmp(place, park, n) && place[n] == '/' &&
		    !strchr(place + n + 1, '/');
	free(park);
	if (!ours || fstat(fd, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode))
		mkdir(place, 0700);
	else
		close(open(place, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
			   0600));
}

/* Mount s->kid moved to place, unless it is there. */
static int move_kid(const struct broker *b, const struct rstep *s,
		    const char *place)
{
	char *now = where_is(s->kid, s->dev), from[64], to[64];
	int err = 0, fd, at = -1;
	if (!now || !place || strcmp(now, place) == 0) {
		free(now);
		return now ? 0 : -ENOENT;
	}
	free(now);
	if ((fd = open_kid(s->kid, s->dev)) < 0)
		return fd;
	remake(b, place, fd);
	if ((at = walk(place)) < 0)
		err = at;
	snprintf(from, sizeof from, "/proc/self/fd/%d", fd);
	snprintf(to, sizeof to, "/proc/self/fd/%d", at);
	if (!err && mount(from, to, NULL, MS_MOVE, NULL) < 0)
		err = -errno;
	close(fd);
	if (at >= 0)
		close(at);
	return err;
}

/* Mount s->kid detached, if the kernel still has it. */
static int drop_kid(const struct rstep *s)
{
	char at[64];
	int fd = open_kid(s->kid, s->dev);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	snprintf(at, sizeof at, "/proc/self/fd/%d", fd);
	int err = umount2(at, MNT_DETACH) < 0 ? -errno : 0;
	close(fd);
	return err;
}

/* Whether the step in flight when the broker died had happened. */
static bool happened(const struct rstep *s)
{
	char *now;
	bool yes = false;
	switch (s->kind) {
	case STEP_NEW:
	case STEP_BIND:
		return s->prog == 'S';
	case STEP_UMOUNT:
		now = where_is(s->kid, s->dev);
		yes = !now;
		break;
	case STEP_MOVE:
	case STEP_PARK:
		now = where_is(s->kid, s->dev);
		yes = now && s->to && strcmp(now, s->to) == 0;
		break;
	default:
		return false;
	}
	free(now);
	return yes;
}

static void undo(const struct broker *b, const struct record *r, size_t done)
{
	while (done-- > 0) {
		const struct rstep *s = &r->s[done];
		int err = 0;
		if (s->kind == STEP_NEW || s->kind == STEP_BIND)
			err = drop_kid(s);
		else if (s->kind == STEP_MOVE || s->kind == STEP_PARK)
			err = move_kid(b, s, s->was);
		else
			log_msg(LOG_WARNING, "recovery: step %zu (%s) stays",
				done, step_name(s->kind));
		if (err)
			log_msg(LOG_WARNING, "recovery: undoing step %zu (%s of "
				"mount %d): %s", done, step_name(s->kind),
				s->kid, strerror(-err));
	}
}

static void finish(const struct broker *b, const struct record *r, size_t i)
{
	for (; i < r->n; i++) {
		const struct rstep *s = &r->s[i];
		int err = -ENOTSUP;
		if (s->kind == STEP_UMOUNT)
			err = drop_kid(s);
		else if (s->kind == STEP_MOVE || s->kind == STEP_PARK)
			err = move_kid(b, s, s->to);
		if (err)
			log_msg(LOG_WARNING, "recovery: finishing step %zu (%s "
				"of mount %d): %s", i, step_name(s->kind),
				s->kid, strerror(-err));
	}
}

/* The plan the record holds: undone, or finished and its state saved. */
static void resolve_plan(struct broker *b, const struct record *r)
{
	size_t done = 0;
	bool removed = false;
	while (done < r->n && r->s[done].prog == 'D')
		done++;
	if (done < r->n && happened(&r->s[done]))
		done++;
	for (size_t i = 0; i < done; i++)
		removed = removed || r->s[i].kind == STEP_UMOUNT;
	log_msg(LOG_WARNING, "recovery: a plan of %zu steps was cut short "
		"after %zu: %s", r->n, done, removed ? "finished" : "undone");
	if (!removed) {
		undo(b, r, done);
		return;
	}
	finish(b, r, done);
	if (journal_append(b, r->delta, r->ndelta, r->serial) < 0)
		log_msg(LOG_ERR, "recovery: the state the plan left cannot be "
			"written: its propagation is lost");
}

/* The last plan the saved state holds: the journal's last whole record
 * (stcache.c), else the snapshot's "# plan N"; 0 if none.  The journal
 * is cut after its last whole record, for what recovery appends. */
static unsigned long long state_plan(struct broker *b)
{
	char path[4200], line[128];
	unsigned long long n = 0;
	snprintf(path, sizeof path, "%s/state", b->state_dir);
	FILE *f = fopen(path, "re");
	if (f && (!fgets(line, sizeof line, f) ||
		  !fgets(line, sizeof line, f) ||
		  sscanf(line, "# plan %llu", &n) != 1))
		n = 0;
	if (f)
		fclose(f);
	b->st.serial = n;
	if (journal_read(b, false) < 0)
		log_msg(LOG_WARNING, "%s/journal: cannot be read",
			b->state_dir);
	return b->st.serial;
}

/* The whole file, NUL-terminated (NULL: empty, unreadable). */
static char *slurp(int fd)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	char buf[8192];
	ssize_t n;
	if (!f)
		return NULL;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		fwrite(buf, 1, (size_t)n, f);
	if (fclose(f) != 0 || n < 0 || !len) {
		free(text);
		return NULL;
	}
	return text;
}

/* At start, before anything of the kernel's table is read: the record
 * resolved, and opened for this broker's plans. */
int intent_recover(struct broker *b)
{
	struct record r = { 0 };
	char *path;
	fault_init();
	b->intent.fd = -1;
	b->st.jfd = -1;
	if (mkdir(b->state_dir, 0700) < 0 && errno != EEXIST)
		return -errno;         /* statedir.c's check comes later */
	if (asprintf(&path, "%s/intent", b->state_dir) < 0)
		return -ENOMEM;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	int err = fd < 0 ? -errno : 0;
	char *text = fd >= 0 ? slurp(fd) : NULL;
	if (text && parse(text, &r) < 0)
		log_msg(LOG_INFO, "%s: a record cut short before its plan "
			"ran: nothing to recover", path);
	else if (text && state_plan(b) == r.serial)
		log_msg(LOG_INFO, "%s: the last plan was kept and saved", path);
	else if (text)
		resolve_plan(b, &r);
	if (fd >= 0 && ftruncate(fd, 0) < 0)
		err = -errno;
	for (size_t i = 0; r.s && i < r.n; i++) {
		free(r.s[i].was);
		free(r.s[i].to);
	}
	free(r.s);
	free(r.delta);
	free(text);
	free(path);
	if (err && fd >= 0)
		close(fd);
	else
		b->intent.fd = fd;
	return err;
}
