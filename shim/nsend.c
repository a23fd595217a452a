/* nsend.c: the end of a process that is in one of the broker's mount
 * namespaces (issue 29 item 4).
 *
 * The kernel frees a namespace in its last process's do_exit()
 * (exit_task_namespaces()), before exit_notify() lets a wait() see the
 * process end.  The broker learns of a token's last close only from that
 * same do_exit() (exit_files()) and would race the parent; so, while the
 * process can still wait, the shim closes its membership and has the
 * broker end the namespace if it was the last: LS_OP_LEAVE answers after
 * the teardown.  A process in no namespace pays one getsockopt() that
 * fails; a signal, and a program without the shim, leave it to the
 * broker's wake-up (docs/design.md, "A namespace's end").
 */
#include <sys/socket.h>
#include <sys/syscall.h>
#include "shim.h"

int shim_member = -1;

static long sys(long nr, long a, long b, long c)
{
	return shim_raw(nr, a, b, c, 0, 0, 0);
}

/* Whether fd is a member token, as the holder can tell: a socket whose
 * maker is root (SO_PEERCRED of a socket pair: the broker) and which it
 * cannot write to (shut down: a send of nothing is EPIPE).  Closing one
 * such socket that is no token loses nothing: nothing can be written to
 * it. */
static int token_like(int fd)
{
	struct ucred cr;
	unsigned len = sizeof cr;
	return shim_raw(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, (long)&cr,
			(long)&len, 0) == 0 && cr.uid == 0 &&
	       shim_raw(SYS_sendto, fd, (long)"", 0,
			MSG_DONTWAIT | MSG_NOSIGNAL, 0, 0) == -EPIPE;
}

/* The membership this image took (shim_member), or one inherited across
 * exec at SHIM_MEMBER_FD, closed, and the broker told.  Async-signal-safe
 * as _exit(2) is, and no write to memory: a vfork child's is its
 * parent's. */
static void leave(void)
{
	int fd = shim_member >= 0 ? shim_member : SHIM_MEMBER_FD;
	static const struct ls_req_view q = { .op = LS_OP_LEAVE };
	if (!token_like(fd))
		return;
	sys(SYS_close, fd, 0, 0);
	(void)shim_call(&q);
}

/* exit(3): the shim's destructor runs after the program's own and its
 * atexit handlers.  The one thing a destructor of the shim tears down
 * (pitfall 20): a wrapper called after it, from a later destructor, runs
 * in a namespace that has ended, as a thread of an exiting process
 * would. */
__attribute__((destructor)) static void leave_at_exit(void)
{
	leave();
}

/* _exit(2) and _Exit(3), as programs call them (dash ends so; exit(3)
 * reaches the kernel without them). */
static _Noreturn void end(int status)
{
	leave();
	for (;;)
		sys(SYS_exit_group, status, 0, 0);
}

SHIM_EXPORT void _exit(int status)
{
	end(status);
}

SHIM_EXPORT void _Exit(int status)
{
	end(status);
}
