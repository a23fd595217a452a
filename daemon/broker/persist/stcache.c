/* stcache.c: the saved state as keyed lines, in memory and on disk
 * (state.c says what the lines are; docs/design.md, "Persistence").
 *
 * A line's key is its first word when that is a number (a mount's line:
 * its kernel id), else its first two words ("children 12", and any other
 * kind of line, "<kind> <id> ..."): the journal knows no kind, so a new
 * kind of line journals as it is.  The state is a sequence of lines, at
 * most one per key; what a request changed is a record of operations:
 *     + <tag> <line>    the line of its key, set, and put last
 *     - <key>           the line of that key, gone
 * (tag: 0; format 2 numbered the propagation tree written whole with it,
 * and its readers need the field).  The order of lines means nothing:
 * a mount's line names its neighbours in its peer ring and slave list
 * (state.c).
 *
 * On disk: <state dir>/state, the snapshot (magic, "# plan N", lines),
 * and <state dir>/journal, records appended since the snapshot, each
 *     @ <plan serial> <length> <checksum>\n<length bytes of operations>
 * A record whose length runs past the end or whose checksum does not
 * match was cut short by a crash: it and what follows are ignored, and
 * cut off before anything is appended again.  Once the journal is larger
 * than twice the snapshot (and than JOURNAL_MIN), the snapshot is written
 * again from memory (a new file renamed over the old) and the journal
 * emptied; a crash between the two leaves records the snapshot holds
 * already, which read again change nothing (each key's last operation
 * wins, in the same order).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "persist/persist.h"

#define MAGIC "libshare-state 3"
#define MAGIC2 "libshare-state 2"    /* read too: its lines lack links */
enum { JOURNAL_MIN = 64 * 1024 };

/* A line's key: its first word, a number, or else its first two words;
 * a namespace's token, three (nsstate.c: a namespace has several). */
static size_t key_len(const char *line, size_t len)
{
	size_t n = strcspn(line, " \n");
	int words = line[0] >= '0' && line[0] <= '9' ? 1 :
		    strncmp(line, "nstoken ", 8) == 0 ? 3 : 2;
	while (--words > 0 && n < len)
		n += 1 + strcspn(line + n + 1, " \n");
	return n < len ? n : len;
}

static struct stline *find(const struct stcache *c, const char *key,
			   size_t klen)
{
	struct stline *l;
	HASH_FIND(hh, c->lines, key, klen, l);
	return l;
}

/* The lines of the part a room above keeps in the state (the
 * namespaces', ns/nsstate.c), handed in at start: persistence writes,
 * counts and hands them back, and knows nothing of what they say. */
static const struct state_part *part;

void state_part_set(const struct state_part *p)
{
	part = p;
}

bool state_part_line(const char *line)
{
	return part && part->has(line);
}

void state_part_put(struct broker *b, FILE *f, const char *pre)
{
	if (part)
		part->put(b, f, pre);
}

void state_part_load(struct broker *b, char **lines, size_t n)
{
	if (part)
		part->load(b, lines, n);
}

const struct stline *cache_get(const struct stcache *c, const char *key)
{
	return find(c, key, strlen(key));
}

static void drop(struct stcache *c, struct stline *l)
{
	c->nns -= state_part_line(l->line);
	HASH_DELETE(hh, c->lines, l);
	free(l->line);
	free(l);
}

/* One operation; -EINVAL for a line that is none. */
static int apply_one(struct stcache *c, const char *op, size_t len)
{
	struct stline *l;
	int at = 0;
	if (len > 2 && op[0] == '-' && op[1] == ' ') {
		size_t k = key_len(op + 2, len - 2);
		if ((l = find(c, op + 2, k)))
			drop(c, l);
		return 0;
	}
	char *end;
	if (len < 3 || op[0] != '+' || op[1] != ' ' || op[2] < '0' ||
	    op[2] > '9')
		return -EINVAL;
	strtoul(op + 2, &end, 10);      /* the tag */
	at = (int)(end - op) + 1;      /* the line, after its tag's space */
	if (*end != ' ' || (size_t)at >= len)
		return -EINVAL;
	op += at;
	len -= (size_t)at;
	size_t k = key_len(op, len);
	if ((l = find(c, op, k)))
		drop(c, l);
	if (!(l = calloc(1, sizeof *l)) || !(l->line = strndup(op, len))) {
		free(l);
		return -ENOMEM;
	}
	l->key = l->line;      /* the key is the line's head */
	HASH_ADD_KEYPTR(hh, c->lines, l->key, k, l);
	c->nns += state_part_line(l->line);
	return 0;
}

/* A record's operations, in order; what cannot be read is skipped. */
int cache_apply(struct stcache *c, const char *body, size_t len)
{
	int err = 0;
	while (len) {
		const char *nl = memchr(body, '\n', len);
		size_t n = nl ? (size_t)(nl - body) : len;
		/* -fanalyzer: apply_one()'s line is in c->lines (uthash) */
		int e = apply_one(c, body, n);
		if (e == -ENOMEM)
			return e;
		err = err ?: e;
		body += n + (nl != NULL);
		len -= n + (nl != NULL);
	}
	return err;
}

void cache_clear(struct stcache *c)
{
	struct stline *l, *tmp;
	HASH_ITER(hh, c->lines, l, tmp)
		drop(c, l);
	c->valid = false;
}

/* The lines, in order, as the state file has them. */
static void cache_put(const struct stcache *c, FILE *f)
{
	for (const struct stline *l = c->lines; l; l = l->hh.next) {
		fputs(l->line, f);
		fputc('\n', f);
	}
}

static uint32_t checksum(const char *p, size_t n)
{
	uint32_t h = 2166136261u;          /* FNV-1a */
	while (n--)
		h = (h ^ (unsigned char)*p++) * 16777619u;
	return h;
}

static int journal_open(struct broker *b)
{
	char path[PATH_MAX];
	if (b->st.jfd >= 0)
		return 0;
	snprintf(path, sizeof path, "%s/journal", b->state_dir);
	b->st.jfd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
			 0600);
	return b->st.jfd < 0 ? -errno : 0;
}

/* One record at the journal's end, whole, or the errno and the journal
 * as it was (what the write took goes back). */
int journal_append(struct broker *b, const char *body, size_t len,
		   unsigned long long serial)
{
	char *rec = NULL;
	int err = journal_open(b), n;
	if (err)
		return err;
	n = asprintf(&rec, "@ %llu %zu %08x\n%.*s", serial, len,
		     checksum(body, len), (int)len, body);
	if (n < 0)
		return -ENOMEM;
	if ((err = save_put(b->st.jfd, rec, (size_t)n, b->st.jlen)) &&
		 ftruncate(b->st.jfd, b->st.jlen) < 0)
		log_msg(LOG_WARNING, "%s/journal: %s", b->state_dir,
			strerror(errno));
	free(rec);
	if (err)
		log_msg(LOG_WARNING, "%s/journal: %s", b->state_dir,
			strerror(-err));
	else
		b->st.jlen += n;
	b->st.serial = err ? b->st.serial : serial;
	return err;
}

/* The records of the journal read (into the cache with apply), up to
 * the first that is not whole, where the journal is cut. */
int journal_read(struct broker *b, bool apply)
{
	char *text = NULL, *p;
	size_t size = 0;
	int err = journal_open(b);
	FILE *f = err ? NULL : fdopen(dup(b->st.jfd), "r");
	if (!f)
		return err ?: -errno;
	rewind(f);
	ssize_t len = getdelim(&text, &size, '\0', f);
	fclose(f);
	p = text;
	while (len > 0) {
		unsigned long long serial;
		size_t n;
		unsigned sum;
		int at = 0;
		char *nl = memchr(p, '\n', (size_t)len);
		if (!nl || sscanf(p, "@ %llu %zu %x%n", &serial, &n, &sum,
				  &at) != 3 || p + at != nl ||
		    n > (size_t)(len - (nl + 1 - p)) ||
		    checksum(nl + 1, n) != sum)
			break;
		if (apply && (err = cache_apply(&b->st, nl + 1, n)) == -ENOMEM)
			break;
		b->st.serial = serial;
		len -= nl + 1 + n - p;
		p = nl + 1 + n;
	}
	b->st.jlen = p ? p - text : 0;
	off_t end = lseek(b->st.jfd, 0, SEEK_END);
	if (end > b->st.jlen) {
		log_msg(LOG_WARNING, "%s/journal: a record cut short, %lld "
			"bytes dropped", b->state_dir,
			(long long)(end - b->st.jlen));
		if (ftruncate(b->st.jfd, b->st.jlen) < 0)
			err = err ?: -errno;
	}
	free(text);
	return err == -ENOMEM ? err : 0;
}

/* The cache as the snapshot, atomically (a new file renamed over the
 * old), then the journal emptied: it holds nothing the snapshot lacks. */
int cache_snapshot(struct broker *b)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	int err = 0, fd;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, MAGIC "\n# plan %llu\n", b->st.serial);
	cache_put(&b->st, f);
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	snprintf(path, sizeof path, "%s/state", b->state_dir);
	snprintf(tmp, sizeof tmp, "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		err = -errno;
	} else {
		err = save_put(fd, text, len, 0);
		if (close(fd) < 0 && !err)
			err = -errno;
		if (!err && rename(tmp, path) < 0)
			err = -errno;
		if (err)
			unlink(tmp);   /* what it took goes back */
	}
	free(text);
	if (!err && !(err = journal_open(b)) &&
	    ftruncate(b->st.jfd, 0) < 0)
		err = -errno;
	if (err)
		log_msg(LOG_WARNING, "%s: %s", path, strerror(-err));
	else
		b->st.jlen = 0, b->st.snap = (off_t)len;
	return err;
}

/* Whether the journal has grown past its bound: time for a snapshot. */
bool journal_full(const struct broker *b)
{
	return fault_compact() ||
	       (b->st.jlen > JOURNAL_MIN && b->st.jlen > 2 * b->st.snap);
}

/* The snapshot's lines into the cache, and its plan serial: 2, or 0 when
 * there is none, 1 when it is of another format (set aside). */
int cache_read_snapshot(struct broker *b)
{
	char path[PATH_MAX], *line = NULL;
	size_t size = 0;
	ssize_t n;
	snprintf(path, sizeof path, "%s/state", b->state_dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	n = getline(&line, &size, f);
	if (n <= 0 || (strcmp(line, MAGIC "\n") != 0 &&
		       strcmp(line, MAGIC2 "\n") != 0)) {
		fclose(f);             /* another format, or no state at all */
		free(line);
		statedir_set_aside(b, "not a state file of format 2 or 3");
		return 1;
	}
	int err = 0;
	b->st.snap = n;
	while (!err && (n = getline(&line, &size, f)) > 0) {
		b->st.snap += n;
		/* -fanalyzer's leak: of op, freed below whatever
		 * cache_apply() did */
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (sscanf(line, "# plan %llu", &b->st.serial) == 1 ||
		    line[0] == '#')
			continue;
		/* snapshot lines carry no tag: a save from the graph
		 * follows every load (state_load()) */
		char *op = NULL;
		if (asprintf(&op, "+ 0 %s", line) < 0)
			err = -ENOMEM;
		else if (cache_apply(&b->st, op, strlen(op)) == -ENOMEM)
			err = -ENOMEM;
		free(op);
	}
	free(line);
	fclose(f);
	return err ?: 2;
}

/* A clean stop leaves the state whole in one file, the journal empty. */
void state_close(struct broker *b)
{
	if (b->st.valid && b->st.jlen > 0 && !b->intent.behind)
		cache_snapshot(b);
}
