/* fuzz-state: the broker's saved state read back at start
 * (daemon/broker/persist/state.c's state_load(): snapshot and journal,
 * stcache.c; their lines put back in a whole save's order, stload.c; the
 * namespace lines, nsstate.c).  What a crash or a full disk leaves, or a
 * hand edit, must never crash the broker nor corrupt its graph: the load
 * takes all of it or none.
 *
 * Input: a flags byte, then the state file's bytes, then journal records
 * each after a line "@@", which the harness frames with their length and
 * checksum as stcache.c writes them (else a mutation would almost never
 * get past the checksum); flags bit 0: the journal's bytes as given,
 * frames and all.  The graph loaded into is a bare one (no kernel mount
 * behind it): the lines' parsing, ordering and rejection are under test;
 * restoring onto live mounts is the broker suites' (broker-restart.bats,
 * broker-journal.bats).
 */
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include "broker.h"
#include "persist/persist.h"
#include "fuzz.h"

static char dir[] = "/tmp/fuzz-state.XXXXXX";

/* The files a load reads, sets aside or writes; then the directory. */
static void cleanup(void)
{
	static const char *const names[] = { "state", "state.old",
		"state.new", "journal", "intent", NULL };
	int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; d >= 0 && names[i]; i++)
		unlinkat(d, names[i], 0);
	if (d >= 0)
		close(d);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	return 0;
}

static void put(const char *name, const void *p, size_t n)
{
	char path[sizeof dir + 16];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FUZZ_ASSERT(fd >= 0 && write(fd, p, n) == (ssize_t)n);
	close(fd);
}

static uint32_t checksum(const char *p, size_t n)
{
	uint32_t h = 2166136261u;          /* FNV-1a, as stcache.c */
	while (n--)
		h = (h ^ (unsigned char)*p++) * 16777619u;
	return h;
}

/* The records after the state's bytes, each framed; serials count up. */
static void journal(const char *p, size_t n, bool raw)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = raw ? NULL : open_memstream(&text, &len);
	if (raw) {
		put("journal", p, n);
		return;
	}
	FUZZ_ASSERT(f);
	for (unsigned long long serial = 1; n; serial++) {
		const char *end = memmem(p, n, "\n@@\n", 4);
		size_t k = end ? (size_t)(end - p) + 1 : n;
		fprintf(f, "@ %llu %zu %x\n", serial, k, checksum(p, k));
		fwrite(p, 1, k, f);
		p += k + (end ? 3 : 0);
		n -= k + (end ? 3 : 0);
	}
	FUZZ_ASSERT(fclose(f) == 0);
	put("journal", text, len);
	free(text);
}

static void files(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data + 1;
	size_t n = size - 1;
	const char *sep = memmem(p, n, "\n@@\n", 4);
	size_t k = sep ? (size_t)(sep - p) + 1 : n;
	char old[sizeof dir + 16];
	snprintf(old, sizeof old, "%s/state.old", dir);
	unlink(old);
	put("state", p, k);
	if (sep)
		journal(sep + 4, n - k - 3, data[0] & 1);
	else
		put("journal", "", 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct broker b;
	struct fs *fs;
	if (size < 1)
		return 0;
	files(data, size);
	b = (struct broker){ .state_dir = dir, .listen_fd = -1, .watch = -1 };
	b.st.jfd = b.intent.fd = -1;
	graph_init(&b.g, 0);
	FUZZ_ASSERT((b.ns = ns_new(&b.g)) && (fs = fs_new(&b.g, "ext4", "")) &&
		    graph_set_root(&b.g, b.ns, fs, "/dev/root", 0) == 0);
	int err = state_load(&b);
	FUZZ_ASSERT(err <= 1);
	FUZZ_ASSERT(check_invariants(&b.g) == 0);
	if (err > 0)               /* the broker's next step: a whole save */
		FUZZ_ASSERT(state_full(&b) == 0);
	if (b.st.jfd >= 0)
		close(b.st.jfd);
	cache_clear(&b.st);
	graph_free(&b.g);
	return 0;
}
