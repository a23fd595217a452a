/* fuzz-jailtab: sharectl's readers of what an administrator writes
 * (daemon/tools/jailtab.c: a jailtab, man/jailtab.5) and of what the
 * broker answers (mtab.c: a mountinfo text, read by apply and check).
 *
 * The first byte chooses: even, a jailtab (bit 1: read as with --jail
 * DIR); odd, a mountinfo text, then looked up as apply does.  Every line a
 * jailtab reader keeps must be one apply can act on.
 */
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "jailtab.h"
#include "fuzz.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	return 0;
}

static void jailtab(const uint8_t *data, size_t size, bool jail)
{
	struct jt_tab t = { .root = jail ? "/srv/jail" : NULL };
	char path[64];
	int fd = memfd_create("jailtab", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if (jt_read(&t, path, devnull) == 0)
		jt_finish(&t, devnull);
	for (size_t i = 0; i < t.n; i++) {
		const struct jt_entry *e = &t.v[i];
		FUZZ_ASSERT(e->source && e->target && e->type &&
			    e->target[0] == '/' && e->nprop >= 0 &&
			    e->nprop <= JT_MAXPROP);
		/* a jail's line mounts inside that jail alone */
		FUZZ_ASSERT(!e->jail || mtab_under(e->target, e->jail));
	}
	jt_free(&t);
	close(fd);
}

static void mountinfo(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/", "/mnt", "/srv/jail/x",
					     "/a b", "" };
	struct mtab t;
	char *text = strndup((const char *)data, size), *rootpath;
	if (!text)
		return;
	if (mtab_parse(&t, text) == 0) {
		for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
			const struct mline *m = mtab_at(&t, paths[i]);
			if (m)
				mtab_ro(m);
			if (mtab_holder(&t, paths[i], &rootpath))
				free(rootpath);
		}
	}
	mtab_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		mountinfo(data + 1, size - 1);
	else
		jailtab(data + 1, size - 1, data[0] & 2);
	return 0;
}
