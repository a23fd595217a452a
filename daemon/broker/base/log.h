/* log.h: what the broker says, and where (log.c).  The only output of the
 * broker's modules; levels are syslog(3)'s.  At the default level every
 * message but LOG_DEBUG goes out; --debug adds LOG_DEBUG. */
#ifndef LS_LOG_H
#define LS_LOG_H

#include <stdbool.h>
#include <sys/types.h>
#include <syslog.h>

/* Where messages go from now on: standard error (the default) or, when
 * to_syslog, syslog(3) with ident "sharebrokerd" and LOG_DAEMON.  debug:
 * LOG_DEBUG messages too. */
void log_setup(bool to_syslog, bool debug);
/* The same by name: "syslog", "stderr", or an absolute path, a file the
 * lines are appended to, with a time stamp each; standard output and
 * error go there too (what a library or a child might print).  0 or
 * -errno, in which case nothing changed. */
int log_open(const char *where, bool debug);
/* After SIGHUP: the file opened again by its name (logrotate moved the old
 * one away), or syslog's connection again.  0 or -errno. */
int log_reopen(void);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Where a request's time goes (issue 10 item 8): phase_begin() at its
 * arrival starts the clock in PHASE_IDENTIFY; phase(p) gives the time
 * since the last change to the phase that was running and makes p the
 * running one, returning the one it replaced (to go back to, for a piece
 * of one phase run inside another). */
enum phase { PHASE_IDENTIFY, PHASE_RESOLVE, PHASE_PLAN, PHASE_EXECUTE,
	     PHASE_PERSIST, PHASES };
void phase_begin(void);
enum phase phase(enum phase now);
/* One request's outcome: a refused one (err, negative or positive) at
 * LOG_INFO with the op's name, the caller's pid and root (rootfd, an
 * O_PATH descriptor on it, or -1) and the errno; with --debug every one,
 * with its time since phase_begin() in microseconds, split by phase. */
void log_request(unsigned op, pid_t pid, int rootfd, int err);

#endif
