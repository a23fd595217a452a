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
 * appended to the journal (stcache.c).  Last, a mount the executor had
 * moved aside for the time of a move (exec.c, move_to(): an "aside" line
 * after "end", P until it is back) returns to its place: the steps undone
 * or finished first reach their places under it.  The moves themselves
 * are recmove.c's.
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
#include "base/base.h"
#include "base/log.h"
#include "base/mtparse.h"
#include "persist/persist.h"
#include "persist/recover.h"
#include "vec.h"

struct record {
	unsigned long long serial;
	struct rstep *s;
	size_t n;
	struct rstep *a;       /* the mounts moved aside, in their order */
	size_t na, capa;
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
	if (s->prog != '-') {  /* "S|D kid dev", "P top dev" */
		if (n < 9 || sscanf(f[6], "%u:%u", &pma, &pmi) != 2)
			return -EINVAL;
		if (s->prog == 'P') {
			s->top = atoi(f[5]);
			s->kid = 0;    /* not known until found */
			s->dev = makedev(pma, pmi);
		} else if (s->kind == STEP_NEW || s->kind == STEP_BIND) {
			s->kid = atoi(f[5]);
			s->dev = makedev(pma, pmi);
		}
		p = 7;
	}
	/* -fanalyzer's leaks: the step's strings, freed with its record */
	s->was = path_field(f[p]);
	s->to = path_field(f[p + 1]);
	return 0;
}

/* "aside <kid> <dev> <P|B> <was> <to>" (intent.c); a line that is not
 * one (cut short by a full disk, then not overwritten) is no aside. */
static int parse_aside(char *line, struct record *r)
{
	char *f[7], *save = NULL;
	int n = 0;
	unsigned ma, mi;
	struct rstep a = { .kind = STEP_PARK };
	for (char *t = strtok_r(line, " ", &save); t && n < 7;
	     t = strtok_r(NULL, " ", &save))
		f[n++] = t;
	if (n != 6 || strcmp(f[0], "aside") ||
	    sscanf(f[2], "%u:%u", &ma, &mi) != 2 || !strchr("PB", f[3][0]))
		return 0;
	a.kid = atoi(f[1]);
	a.dev = makedev(ma, mi);
	a.prog = f[3][0];
	a.was = path_field(f[4]);
	a.to = path_field(f[5]);
	if (VEC_PUSH(r->a, r->na, r->capa, a) == 0)
		return 0;
	free(a.was);
	free(a.to);
	return -ENOMEM;
}

/* Whether line ends the record of serial n: "end n" (intent.c), or
 * "end" alone as records were before they were written over. */
static bool ends(const char *line, unsigned long long n)
{
	unsigned long long m;
	char c;
	return strcmp(line, "end") == 0 ||
	       (sscanf(line, "end %llu%c", &m, &c) == 1 && m == n);
}

/* The record in text, up to its NUL; -EINVAL for one cut short (no
 * "end" with its serial: written over an older one, the older one's
 * is another) or undone (its header spoilt, intent_end()). */
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
		if (ends(line, r->serial))
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
	if (!end || r->n != want)
		return -EINVAL;
	while ((line = strtok_r(NULL, "\n", &save)))
		if (parse_aside(line, r) < 0)
			return -ENOMEM;
	return 0;
}

static void undo(const struct broker *b, const struct record *r, size_t done)
{
	while (done-- > 0) {
		const struct rstep *s = &r->s[done];
		int err = 0;
		if (s->kind == STEP_BIND && s->prog == 'P' && !s->kid)
			continue;  /* a copy of a batch not made */
		if (s->kind == STEP_NEW || s->kind == STEP_BIND)
			err = rec_drop(s);
		else if (s->kind == STEP_MOVE || s->kind == STEP_PARK)
			err = rec_move(b, s, s->was);
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
			err = rec_drop(s);
		else if (s->kind == STEP_MOVE || s->kind == STEP_PARK)
			err = rec_move(b, s, s->to);
		if (err)
			log_msg(LOG_WARNING, "recovery: finishing step %zu (%s "
				"of mount %d): %s", i, step_name(s->kind),
				s->kid, strerror(-err));
	}
}

/* The mounts still aside return, last aside first: their places were
 * reachable for the steps above only while they were away. */
static void put_back(const struct broker *b, const struct record *r)
{
	for (size_t i = r->na; i-- > 0; ) {
		const struct rstep *a = &r->a[i];
		int err = a->prog == 'P' ? rec_move(b, a, a->was) : 0;
		if (err)
			log_msg(LOG_WARNING, "recovery: mount %d, moved aside, "
				"cannot return to %s: %s", a->kid,
				a->was ? a->was : "-", strerror(-err));
	}
}

/* Whether an umount from step i on happened: a run of umounts is carried
 * out at once before their progress is written (umounts.c), so one
 * after the first not marked done may have. */
static bool umounted_from(const struct record *r, size_t i)
{
	for (; i < r->n; i++)
		if (r->s[i].kind == STEP_UMOUNT && rec_happened(&r->s[i]))
			return true;
	return false;
}

/* How many steps from i on are copies marked "P": bound in a batch
 * (execplan.c), whose "P" are written before the first is made, any of
 * them may have been made when the broker died. */
static size_t copies_pending(const struct record *r, size_t i)
{
	size_t n = 0;
	while (i + n < r->n && r->s[i + n].kind == STEP_BIND &&
	       r->s[i + n].prog == 'P')
		n++;
	return n;
}

/* The plan the record holds: undone, or finished and its state saved. */
static void resolve_plan(struct broker *b, struct record *r)
{
	size_t done = 0;
	bool removed = false;
	while (done < r->n && r->s[done].prog == 'D')
		done++;
	size_t run = copies_pending(r, done);
	rec_find_copies(&r->s[done], run);
	if (run > 1)               /* a batch: any of its copies may be */
		done += run;
	else if (done < r->n && rec_happened(&r->s[done]))
		done++;
	for (size_t i = 0; i < done; i++)
		removed = removed || r->s[i].kind == STEP_UMOUNT;
	removed = removed || umounted_from(r, done);
	log_msg(LOG_WARNING, "recovery: a plan of %zu steps was cut short "
		"after %zu: %s", r->n, done, removed ? "finished" : "undone");
	if (!removed) {
		undo(b, r, done);
		put_back(b, r);
		return;
	}
	finish(b, r, done);
	put_back(b, r);
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
	if (text && text[0] == '-')   /* intent_end() */
		log_msg(LOG_INFO, "%s: the last plan was undone", path);
	else if (text && parse(text, &r) < 0)
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
	for (size_t i = 0; i < r.na; i++) {
		free(r.a[i].was);
		free(r.a[i].to);
	}
	free(r.s);
	free(r.a);
	free(r.delta);
	free(text);
	free(path);
	if (err && fd >= 0)
		close(fd);
	else
		b->intent.fd = fd;
	return err;
}
