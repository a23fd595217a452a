/* flags.c: each family of flags named once: the per-mount flags and the
 * superblock flags with the mount(2) flag that asks for each and the name
 * mountinfo gives it (semantics.md 1.5.1), and mount(8)'s -o names with
 * the mount(2) flag each sets or clears.  Everything that names a flag
 * (the renderers, options.c, the dry run, the broker's executor and
 * import) reads these tables.
 */
#include <string.h>
#include "engine.h"

/* In the order the kernel writes them (show_mnt_opts()); "ro" is written
 * apart, as "ro" or "rw", first. */
static const struct flag mnt[] = {
	{ MNT_RDONLY, LS_MS_RDONLY, "ro" },
	{ MNT_NOSUID, LS_MS_NOSUID, "nosuid" },
	{ MNT_NODEV, LS_MS_NODEV, "nodev" },
	{ MNT_NOEXEC, LS_MS_NOEXEC, "noexec" },
	{ MNT_NOATIME, LS_MS_NOATIME, "noatime" },
	{ MNT_NODIRATIME, LS_MS_NODIRATIME, "nodiratime" },
	{ MNT_RELATIME, LS_MS_RELATIME, "relatime" },
	{ MNT_NOSYMFOLLOW, LS_MS_NOSYMFOLLOW, "nosymfollow" },
};

/* In the order of show_sb_opts(), "ro" again apart. */
static const struct flag sb[] = {
	{ SB_RDONLY, LS_MS_RDONLY, "ro" },
	{ SB_SYNC, LS_MS_SYNCHRONOUS, "sync" },
	{ SB_DIRSYNC, LS_MS_DIRSYNC, "dirsync" },
	{ SB_MAND, LS_MS_MANDLOCK, "mand" },
	{ SB_LAZYTIME, LS_MS_LAZYTIME, "lazytime" },
};

const struct flag_table mnt_flag_table = { mnt, sizeof mnt / sizeof *mnt };
const struct flag_table sb_flag_table = { sb, sizeof sb / sizeof *sb };

/* mount(8)'s -o names (util-linux 2.38) that are mount(2) flags: the flag
 * each sets, or clears with clear.  Any other name is the filesystem's. */
static const struct mount_option {
	const char *name;
	unsigned long ms;
	bool clear;
} options[] = {
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

/* The mount(2) flags that ask for bits. */
unsigned long flags_ms(const struct flag_table *t, unsigned bits)
{
	unsigned long ms = 0;
	for (size_t i = 0; i < t->n; i++)
		if (bits & t->v[i].bit)
			ms |= t->v[i].ms;
	return ms;
}

/* The bits that mount(2) flags ms name (no defaults applied). */
unsigned flags_of_ms(const struct flag_table *t, unsigned long ms)
{
	unsigned bits = 0;
	for (size_t i = 0; i < t->n; i++)
		if (ms & t->v[i].ms)
			bits |= t->v[i].bit;
	return bits;
}

/* The entry named by the n bytes at name, or NULL. */
const struct flag *flag_by_name(const struct flag_table *t, const char *name,
				size_t n)
{
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->v[i].name) == n && strncmp(t->v[i].name, name, n) == 0)
			return &t->v[i];
	return NULL;
}

/* The bits a comma-separated option list names (a mountinfo field). */
unsigned flags_named(const struct flag_table *t, const char *list)
{
	unsigned bits = 0;
	for (const char *p = list ? list : ""; *p; p += *p == ',') {
		size_t n = strcspn(p, ",");
		const struct flag *f = flag_by_name(t, p, n);
		bits |= f ? f->bit : 0;
		p += n;
	}
	return bits;
}

/* One mount(8) option word applied to *ms; false when it is no mount(2)
 * flag (a filesystem's own option, passed as data). */
bool mount_option(const char *word, unsigned long *ms)
{
	for (size_t i = 0; i < sizeof options / sizeof *options; i++)
		if (strcmp(options[i].name, word) == 0) {
			*ms = options[i].clear ? *ms & ~options[i].ms
					       : *ms | options[i].ms;
			return true;
		}
	return false;
}

/* mount(8)'s -o list applied on top of ms, left to right; names that are
 * no mount(2) flag are the filesystem's and change nothing. */
unsigned long mount_options(unsigned long ms, const char *list)
{
	for (const char *p = list ? list : ""; *p; p += *p == ',') {
		size_t n = strcspn(p, ",");
		for (size_t i = 0; i < sizeof options / sizeof *options; i++)
			if (strlen(options[i].name) == n &&
			    strncmp(options[i].name, p, n) == 0)
				ms = options[i].clear ? ms & ~options[i].ms
						      : ms | options[i].ms;
		p += n;
	}
	return ms;
}
