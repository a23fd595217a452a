/* mountopt.c: mount(8)'s option words that are mount(2) flags.  One table,
 * so that the dry run and a jailtab read "ro" or "nosuid" the same way. */
#include <stdlib.h>
#include <string.h>
#include "mount_abi.h"
#include "mountopt.h"

/* One mount option: the flag it sets, or clears with clear. */
static const struct opt {
	const char *name;
	unsigned long flag;
	bool clear;
} opts[] = {
	{ "ro", LS_MS_RDONLY, 0 }, { "rw", LS_MS_RDONLY, 1 },
	{ "nosuid", LS_MS_NOSUID, 0 }, { "suid", LS_MS_NOSUID, 1 },
	{ "nodev", LS_MS_NODEV, 0 }, { "dev", LS_MS_NODEV, 1 },
	{ "noexec", LS_MS_NOEXEC, 0 }, { "exec", LS_MS_NOEXEC, 1 },
	{ "noatime", LS_MS_NOATIME, 0 }, { "atime", LS_MS_NOATIME, 1 },
	{ "nodiratime", LS_MS_NODIRATIME, 0 },
	{ "diratime", LS_MS_NODIRATIME, 1 },
	{ "relatime", LS_MS_RELATIME, 0 }, { "norelatime", LS_MS_RELATIME, 1 },
	{ "strictatime", LS_MS_STRICTATIME, 0 },
	{ "nostrictatime", LS_MS_STRICTATIME, 1 },
	{ "nosymfollow", LS_MS_NOSYMFOLLOW, 0 },
	{ "symfollow", LS_MS_NOSYMFOLLOW, 1 },
	{ "sync", LS_MS_SYNCHRONOUS, 0 }, { "async", LS_MS_SYNCHRONOUS, 1 },
	{ "dirsync", LS_MS_DIRSYNC, 0 },
	{ "lazytime", LS_MS_LAZYTIME, 0 }, { "nolazytime", LS_MS_LAZYTIME, 1 },
	{ "mand", LS_MS_MANDLOCK, 0 }, { "nomand", LS_MS_MANDLOCK, 1 },
	{ "bind", LS_MS_BIND, 0 }, { "remount", LS_MS_REMOUNT, 0 },
};

/* word applied to *ms; false when it is not a flag (a filesystem's own
 * option, passed as data). */
bool mount_option(const char *word, unsigned long *ms)
{
	for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
		if (strcmp(word, opts[i].name) == 0) {
			*ms = opts[i].clear ? *ms & ~opts[i].flag
					    : *ms | opts[i].flag;
			return true;
		}
	return false;
}

/* The comma-separated list applied on top of ms, left to right; unknown
 * words are the filesystem's and change nothing here. */
unsigned long mount_options(unsigned long ms, const char *list)
{
	char *copy = strdup(list ? list : ""), *save = NULL;
	if (!copy)
		abort();
	for (char *o = strtok_r(copy, ",", &save); o;
	     o = strtok_r(NULL, ",", &save))
		mount_option(o, &ms);
	free(copy);
	return ms;
}
