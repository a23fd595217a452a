/* mntns.c: callers in another mount namespace than the broker's.
 *
 * On a systemd host the broker runs in a namespace of its own where every
 * mount is private (libshare.service; docs/design.md, a kernel that
 * propagates already).  A jail started outside it names paths of another
 * table: the broker would mount into its own namespace, where the caller
 * never sees the result, and read places the caller does not have.  Such
 * a caller is refused with EXDEV (the mount cannot cross namespaces) and a
 * log line naming the way in, libshare-enter.  A kernel without mount
 * namespaces has one table for all, and nothing to check.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/log.h"
#include "door/door.h"
#include "libshare_proto.h"

/* The namespaces by their links' text, "mnt:[INODE]": the kernel makes
 * it without the dentry a stat of the namespace costs (about 3.5 us
 * against 9 a request here; identity.c's same_userns()). */
static char own[64];
static bool known;

void mntns_init(void)
{
	ssize_t n = readlink("/proc/self/ns/mnt", own, sizeof own - 1);
	known = n > 0;
	own[known ? n : 0] = '\0';
}

int mntns_check(unsigned op, pid_t pid, int proc)
{
	char ns[64];
	if (!known || op == LS_OP_STATUS)
		return 0;
	/* gone already, or /proc hides it: the request fails later on its
	 * own (identity.c reads the same /proc/<pid>) */
	ssize_t n = readlinkat(proc, "ns/mnt", ns, sizeof ns - 1);
	if (n <= 0)
		return 0;
	ns[n] = '\0';
	if (strcmp(ns, own) == 0)
		return 0;
	log_msg(LOG_WARNING, "pid %d is in mount namespace %s, not the "
		"broker's %s: its %s cannot reach the broker's mounts "
		"nor the broker its; start it through libshare-enter(8), "
		"which enters the broker's namespace (nsenter -m -t %d)",
		(int)pid, ns, own, ls_op_name(op), (int)getpid());
	return -EXDEV;
}
