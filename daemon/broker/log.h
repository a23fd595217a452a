/* log.h: what the broker says, and where (log.c).  The only output of the
 * broker's modules; levels are syslog(3)'s. */
#ifndef LS_LOG_H
#define LS_LOG_H

#include <stdbool.h>
#include <syslog.h>

/* Where messages go from now on: standard error (the default) or, when
 * to_syslog, syslog(3) with ident "sharebrokerd" and LOG_DAEMON.  debug:
 * LOG_DEBUG messages too. */
void log_setup(bool to_syslog, bool debug);
bool log_debugging(void);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
