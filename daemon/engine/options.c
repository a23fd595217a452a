/* options.c: per-mount and superblock options from mount(2) flags, and
 * remount (semantics.md 1.5.1, 2.1).  Remounts are never propagated (3.4).
 */
#include <errno.h>
#include "journal.h"

/* Which operation mount(2) performs for these flags (path_mount(): the
 * first that applies wins, so MS_BIND|MS_SHARED is a plain bind and
 * MS_MOVE|MS_SHARED a type change, EINVAL there).  Drops the old magic
 * number from *ms; -EINVAL for MS_NOUSER. */
int mount_call(unsigned long *ms)
{
	if ((*ms & LS_MS_MGC_MSK) == LS_MS_MGC_VAL)
		*ms &= ~LS_MS_MGC_MSK;
	if (*ms & LS_MS_NOUSER)
		return -EINVAL;
	if ((*ms & (LS_MS_REMOUNT | LS_MS_BIND)) == (LS_MS_REMOUNT | LS_MS_BIND))
		return CALL_REMOUNT_BIND;
	if (*ms & LS_MS_REMOUNT)
		return CALL_REMOUNT;
	if (*ms & LS_MS_BIND)
		return CALL_BIND;
	if (*ms & (LS_MS_SHARED | LS_MS_PRIVATE | LS_MS_SLAVE | LS_MS_UNBINDABLE))
		return CALL_CHANGE;
	return *ms & LS_MS_MOVE ? CALL_MOVE : CALL_NEW;
}

/* The per-mount flags mount(2) asks for (the kernel's path_mount()):
 * relatime unless noatime, strictatime clears both, and a remount that
 * names no atime option keeps the mount's. */
unsigned mount_flags(unsigned long ms, unsigned old)
{
	/* MS_RELATIME itself is not read: relatime is the default */
	unsigned f = flags_of_ms(&mnt_flag_table, ms) & ~MNT_RELATIME;
	if (!(ms & LS_MS_NOATIME))
		f |= MNT_RELATIME;
	if (ms & LS_MS_STRICTATIME)
		f &= ~(MNT_RELATIME | MNT_NOATIME);
	if ((ms & LS_MS_REMOUNT) &&
	    !(ms & (LS_MS_NOATIME | LS_MS_NODIRATIME | LS_MS_RELATIME |
		    LS_MS_STRICTATIME)))
		f = (f & ~MNT_ATIME_MASK) | (old & MNT_ATIME_MASK);
	return f;
}

/* The superblock flags mount(2) sets; mask says which it may change. */
unsigned sb_flags(unsigned long ms, unsigned old, unsigned mask)
{
	return (old & ~mask) | (flags_of_ms(&sb_flag_table, ms) & mask);
}

/* mount(2) with MS_REMOUNT: with MS_BIND only the mount's own flags
 * change; without, the filesystem's too (ro, sync, mand, lazytime: the
 * kernel's MS_RMT_MASK; dirsync stays).  Checks in do_remount()'s order. */
int op_remount(struct graph *g, const struct caller *c, struct loc at,
	       unsigned long ms)
{
	struct mount *m = at.m;

	if (!c->privileged)
		return -EPERM;
	if (m->ns != c->ns || strcmp(at.dir, m->root) != 0)
		return -EINVAL;
	int err = 0;
	if (!(ms & LS_MS_BIND))
		err = JSET(g, m->fs->flags, sb_flags(ms, m->fs->flags,
						     SB_RDONLY | SB_SYNC |
						     SB_MAND | SB_LAZYTIME));
	return err ?: JSET(g, m->flags, mount_flags(ms, m->flags)) ?:
	       plan_step(g, STEP_REMOUNT, m, NULL, NULL, NULL,
		  ms & (LS_MS_REMOUNT | LS_MS_BIND | LS_MS_RDONLY |
			LS_MS_NOSUID | LS_MS_NODEV | LS_MS_NOEXEC |
			LS_MS_SYNCHRONOUS | LS_MS_MANDLOCK | LS_MS_DIRSYNC |
			LS_MS_NOSYMFOLLOW | LS_MS_NOATIME | LS_MS_NODIRATIME |
			LS_MS_RELATIME | LS_MS_STRICTATIME | LS_MS_LAZYTIME));
}
