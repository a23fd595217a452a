/* fault.c: fault injection for the crash tests (test/diff/fault-diff.sh,
 * test/broker/broker-crash.bats), and the writes it strikes.
 *
 * LIBSHARE_FAULT, read once at start: step:K kills the broker (SIGKILL,
 * as an administrator or the OOM killer would) at its K-th kill point:
 * right after a plan step, or after a covering mount is moved aside
 * within one (exec.c, move_to()); save:K in the middle of its K-th write
 * of the intent or the state (half of it written); fail:K makes that
 * write fail with ENOSPC instead; copy:K right after the kernel bound the
 * K-th copy made straight on its place (copy.c), before its record says
 * so; ",compact" after any of them compacts the journal after every
 * record, so that the snapshot's write is one of the K.  holder kills it
 * at start, once the holder file names its new holder beside the
 * previous one, before that one ends (holder.c).  file:PATH reads such a
 * spec from PATH when a plan starts, one of no step included (request.c,
 * apply_plan()), and removes PATH, counting from there the requests of
 * the process that made that one (mount(8)'s second call counts, a later
 * tool's look at the views does not): a test arms it for the one command
 * it means.  Unset, every check is one comparison.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/base.h"
#include "base/log.h"

static struct {
	char kind;             /* 't': after step k, 's': during save k,
				  'f': save k fails, 'c': after copy k,
				  'h': between the holders at start */
	unsigned k, n;
	char *file;
	pid_t cur, armed;      /* file: the caller served now, the one whose
				  request took the spec: only its requests
				  count (not a test's later look at views) */
	bool compact;          /* every save compacts the journal */
} fault;

/* A request from pid is being served. */
void fault_caller(pid_t pid)
{
	fault.cur = pid;
}

/* Whether a kill point or save of the request served now counts. */
static bool counts(char kind)
{
	return fault.kind == kind && (!fault.file || fault.cur == fault.armed);
}

static void fault_parse(const char *spec)
{
	unsigned k = 0;
	fault.kind = 0;
	fault.n = 0;
	if (sscanf(spec, "step:%u", &k) == 1)
		fault.kind = 't';
	else if (sscanf(spec, "save:%u", &k) == 1)
		fault.kind = 's';
	else if (sscanf(spec, "fail:%u", &k) == 1)
		fault.kind = 'f';
	else if (sscanf(spec, "copy:%u", &k) == 1)
		fault.kind = 'c';
	else if (strcmp(spec, "holder") == 0)
		fault.kind = 'h';
	fault.k = k;
	fault.compact = strstr(spec, ",compact") != NULL;
}

/* ",compact" after a spec: each record is followed by a compaction
 * (stcache.c), so that its write too is struck. */
bool fault_compact(void)
{
	return fault.compact;
}

void fault_init(void)
{
	const char *spec = getenv("LIBSHARE_FAULT");
	if (!spec)
		return;
	if (strncmp(spec, "file:", 5) == 0)
		fault.file = strdup(spec + 5);
	else
		fault_parse(spec);
	log_msg(LOG_WARNING, "fault injection: %s", spec);
	unsetenv("LIBSHARE_FAULT");  /* the broker's alone, not its children's */
}

/* A plan starts: a spec waiting in the file takes effect. */
void fault_arm(void)
{
	char spec[64];
	FILE *f = fault.file ? fopen(fault.file, "re") : NULL;
	if (!f)
		return;
	if (fgets(spec, sizeof spec, f)) {
		fault_parse(spec);
		fault.armed = fault.cur;
	}
	fclose(f);
	unlink(fault.file);
}

static void die_now(const char *where)
{
	log_msg(LOG_WARNING, "fault injection: killed %s", where);
	kill(getpid(), SIGKILL);
	_exit(137);
}

void fault_step(void)
{
	if (counts('t') && ++fault.n == fault.k)
		die_now("after a step");
}

void fault_copy(void)
{
	if (counts('c') && ++fault.n == fault.k)
		die_now("after a copy was bound");
}

void fault_holder(void)
{
	if (fault.kind == 'h')
		die_now("with two holders named");
}

/* All of text at fd's offset, or the errno (ENOSPC, EIO...): a write of
 * the intent or the state, where save faults strike. */
int save_put(int fd, const char *text, size_t len, off_t at)
{
	if (counts('f') && len && ++fault.n == fault.k)
		return -ENOSPC;
	if (counts('s') && len && ++fault.n == fault.k) {
		if (pwrite(fd, text, len / 2, at) < 0)
			_exit(137);
		die_now("in a save");
	}
	while (len) {
		ssize_t n = pwrite(fd, text, len, at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		text += n;
		at += n;
		len -= (size_t)n;
	}
	return 0;
}
