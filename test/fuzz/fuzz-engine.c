/* fuzz-engine: the propagation engine (daemon/engine/) fed random
 * sequences of mount operations, through the dry run's commands
 * (daemon/tools/dry.c) as sharedry runs util-linux scripts, with the
 * engine's own checker on (check.c, check_plan.c): after every plan the
 * invariants of docs/semantics.md 1.1 hold and the plan's steps replay to
 * the graph.  Its errors are not failures (most random calls fail, as
 * the kernel's would); a broken invariant is.
 *
 * Input: a flags byte, then four bytes per command (verb, caller, two
 * places) over a few directories, two jails and two namespace copies.
 * Flags: bit 0, render every table after each change (the renderers);
 * bit 1, abandon every plan, after which the table must be as it was
 * (the undo journal); bit 2, a mount limit of 12, else 400: rbinds
 * and propagation double a table per command, and the checker's replay
 * of a plan is quadratic in it (64 commands made 10 s per input).
 */
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include "dry.h"
#include "fuzz.h"

enum { MAXCMDS = 64 };

static const char *const places[] = {
	"/a", "/b", "/a/x", "/b/y", "/j1", "/j1/x", "/j2/x", "/a/x/z",
	"/j1/x/f", "/", "/nonexist", "/b/y/..",
};

static const char *const verbs[] = {
	"mount -t tmpfs T %s", "mount --bind %s %s", "mount --rbind %s %s",
	"mount --move %s %s", "mount --make-shared %s",
	"mount --make-slave %s", "mount --make-private %s",
	"mount --make-unbindable %s", "mount --make-rshared %s",
	"mount --make-rslave %s", "mount --make-rprivate %s",
	"umount %s", "umount -l %s", "umount2 -e %s",
	"mount -o remount,ro %s", "mount -o remount,bind,nosuid %s",
	"mkdir -p %s/d", "unshare n%.0s%c", "pivot_root %s %s",
	"hold h %s", "release h", "cd %s", "touch %s", "use stat %s",
};

#define N(a) (sizeof a / sizeof *a)

/* One command line: who calls (the host, a jail, a namespace copy), then
 * the verb on its places, $B-relative unless chrooted. */
static void command(FILE *f, const uint8_t *c)
{
	const char *who[] = { "", "chroot $B/j1 ", "within n0 ",
			      "within n1 chroot $B/j2 " };
	int caller = c[1] % 4;
	const char *b = caller == 1 || caller == 3 ? "" : "$B";
	char p[2][64];
	snprintf(p[0], sizeof p[0], "%s%s", b, places[c[2] % N(places)]);
	snprintf(p[1], sizeof p[1], "%s%s", b, places[c[3] % N(places)]);
	fputs(who[caller], f);
	if (c[0] % N(verbs) == 17)             /* unshare n0 or n1 */
		fprintf(f, verbs[17], "", '0' + (c[2] & 1));
	else
		fprintf(f, verbs[c[0] % N(verbs)], p[0], p[1]);
	fputc('\n', f);
}

static char *script(const uint8_t *data, size_t size)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fputs("mkdir -p $B/a/x/z $B/b/y $B/j1/x $B/j2/x\n", f);
	for (size_t i = 0; i + 4 <= size && i < 4 * MAXCMDS; i += 4)
		command(f, data + i);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The host's table as text, for the abandon check. */
static char *table(struct dry *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	int err = render_mountinfo(&d->g, d->ns, mount_root(d->ns->root), f);
	FUZZ_ASSERT(fclose(f) == 0 && err == 0);
	return text;
}

/* dry_run() prints a line per command: to /dev/null, not into a TAP
 * stream or the fuzzer's console. */
static int run_quietly(struct dry *d, const char *text)
{
	int save = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int err = -1;
	fflush(stdout);
	if (save >= 0 && null >= 0 && in && dup2(null, STDOUT_FILENO) >= 0) {
		err = dry_run(d, in);
		fflush(stdout);
		dup2(save, STDOUT_FILENO);
	}
	if (in)
		fclose(in);
	if (null >= 0)
		close(null);
	if (save >= 0)
		close(save);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dry d = { .base = "/tmp/w", .check = true };
	char *text, *before = NULL, *after;
	if (size < 1 || !(text = script(data + 1, size - 1)))
		return 0;
	d.tree = data[0] & 1;
	d.abandon = data[0] & 2;
	FUZZ_ASSERT(dry_init(&d, data[0] & 4 ? 12 : 400) == 0);
	if (d.abandon)
		before = table(&d);
	FUZZ_ASSERT(run_quietly(&d, text) == 0);     /* no check failed */
	FUZZ_ASSERT(check_invariants(&d.g) == 0);
	if (d.abandon) {
		after = table(&d);
		FUZZ_ASSERT(strcmp(before, after) == 0);
		free(after);
	}
	free(before);
	free(text);
	dry_free(&d);
	return 0;
}
