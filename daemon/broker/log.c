/* log.c: the broker's messages, to standard error (the log file once
 * detached) or syslog. */
#include <stdarg.h>
#include <stdio.h>
#include "log.h"

static bool use_syslog, debugging;

void log_setup(bool to_syslog, bool debug)
{
	if (to_syslog && !use_syslog)
		openlog("sharebrokerd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	else if (!to_syslog && use_syslog)
		closelog();
	use_syslog = to_syslog;
	debugging = debug;
}

bool log_debugging(void)
{
	return debugging;
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;
	if (level == LOG_DEBUG && !debugging)
		return;
	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		fputs("sharebrokerd: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
