/* config.h: sharebrokerd's settings (config.c), from its configuration
 * file and its command line, which overrides the file.  One validation for
 * both: a value is refused with a sentence saying why, never cut or
 * guessed at. */
#ifndef LS_CONFIG_H
#define LS_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/un.h>

/* Where the file is when --config does not say (configure's sysconfdir). */
#ifndef LS_CONFIG_FILE
#define LS_CONFIG_FILE "/etc/libshare/libshare.conf"
#endif
/* The state directory when nothing says (configure's runstatedir). */
#ifndef LS_STATE_DIR
#define LS_STATE_DIR "/run/libshare"
#endif

/* An empty string or 0 (debug: -1) is "not set here". */
struct config {
	char socket[sizeof ((struct sockaddr_un *)0)->sun_path];
	char state_dir[PATH_MAX];
	char log[PATH_MAX];     /* "syslog", "stderr" or an absolute path */
	char fallback[8];       /* "enosys" or "native" (libshare(7)) */
	unsigned max_mounts;
	unsigned threads;       /* serving threads (door/loop.c), 1 to 8 */
	int debug;
};

/* Nothing set. */
void config_init(struct config *c);
/* key (a long option's name: socket, state-dir, max-mounts, threads,
 * log, fallback, debug) set to value, after checking it; -EINVAL with the
 * reason in why ("'VALUE': what is wrong") otherwise, -ENOENT for a key
 * that is none of these. */
int config_set(struct config *c, const char *key, const char *value,
	       char *why, size_t size);
/* The file's "key = value" lines into c; '#' starts a comment.  A missing
 * file is -ENOENT (the caller decides whether that matters); an error is
 * reported in why as FILE:LINE: REASON. */
int config_read(struct config *c, const char *file, char *why, size_t size);
/* out: each setting of over, else of under, else the default; log stays
 * empty when neither sets it (it depends on --foreground). */
void config_merge(struct config *out, const struct config *over,
		  const struct config *under);
/* The settings in the file's own syntax (--print-config). */
void config_print(const struct config *c, FILE *out);

#endif
