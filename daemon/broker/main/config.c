/* config.c: sharebrokerd's configuration file and the checks every
 * setting goes through, whether it came from the file or the command line
 * (config.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "main/config.h"
#include "libshare_wire.h"

void config_init(struct config *c)
{
	*c = (struct config){ .debug = -1 };
}

/* Why ls_address() refuses name: the broker, sharectl and every jailed
 * caller must name the same socket, so nothing is guessed. */
static const char *socket_fault(const char *name)
{
	if (!*name)
		return "an empty name";
	if (strcmp(name, "@") == 0)
		return "'@' alone: an abstract name needs at least one "
		       "character after the @";
	if (name[0] != '@' && name[0] != '/')
		return "a relative path: every jail and the broker would look "
		       "for it from a different directory; give @NAME "
		       "(abstract) or an absolute /PATH";
	return "longer than a socket address can hold (107 bytes)";
}

static int copy(char *to, size_t size, const char *value)
{
	if (strlen(value) >= size)
		return -ENAMETOOLONG;
	strcpy(to, value);
	return 0;
}

/* A decimal from 1 to UINT_MAX, nothing before or after it. */
static int number(const char *s, unsigned *out)
{
	char *end;
	unsigned long long v;
	if (*s < '0' || *s > '9')      /* strtoull would take "-5" */
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || v > UINT_MAX)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int boolean(const char *s, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" },
			  *const no[] = { "no", "false", "off", "0" };
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0) {
			*out = strcmp(s, yes[i]) == 0;
			return 0;
		}
	return -EINVAL;
}

int config_set(struct config *c, const char *key, const char *value,
	       char *why, size_t size)
{
	struct sockaddr_un sa;
	socklen_t len;
	const char *fault = NULL;
	if (strcmp(key, "socket") == 0) {
		if (ls_address(value, &sa, &len) < 0)
			fault = socket_fault(value);
		else
			copy(c->socket, sizeof c->socket, value);
	} else if (strcmp(key, "state-dir") == 0) {
		if (value[0] != '/' || copy(c->state_dir, sizeof c->state_dir,
					    value) < 0)
			fault = "not an absolute directory name";
	} else if (strcmp(key, "max-mounts") == 0) {
		if (number(value, &c->max_mounts) < 0)
			fault = "not a whole number from 1 to 4294967295";
	} else if (strcmp(key, "threads") == 0) {
		unsigned n;
		if (number(value, &n) < 0 || n > 8)
			fault = "not a whole number from 1 to 8";
		else
			c->threads = n;
	} else if (strcmp(key, "log") == 0) {
		if ((strcmp(value, "syslog") && strcmp(value, "stderr") &&
		     value[0] != '/') || copy(c->log, sizeof c->log, value) < 0)
			fault = "neither syslog, stderr nor an absolute file name";
	} else if (strcmp(key, "fallback") == 0) {
		if (strcmp(value, "enosys") && strcmp(value, "native"))
			fault = "neither enosys nor native";
		else
			copy(c->fallback, sizeof c->fallback, value);
	} else if (strcmp(key, "debug") == 0) {
		if (boolean(value, &c->debug) < 0)
			fault = "neither yes nor no";
	} else {
		snprintf(why, size, "unknown setting '%s'", key);
		return -ENOENT;
	}
	if (fault)
		snprintf(why, size, "'%s': %s", value, fault);
	return fault ? -EINVAL : 0;
}

/* s without the blanks around it. */
static char *trim(char *s)
{
	char *e = s + strlen(s);
	while (*s == ' ' || *s == '\t')
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* One line; 0, or -EINVAL with the reason in why. */
static int config_line(struct config *c, char *line, char *why, size_t size)
{
	char *hash = strchr(line, '#'), *eq, *key;
	if (hash)
		*hash = '\0';
	key = trim(line);
	if (!*key)
		return 0;
	if (!(eq = strchr(key, '='))) {
		snprintf(why, size, "'%s': not KEY = VALUE", key);
		return -EINVAL;
	}
	*eq = '\0';
	key = trim(key);
	size_t n = strlen(key);
	if (n + 2 > size)
		return -EINVAL;
	/* "KEY 'VALUE': what is wrong", or config_set's "unknown setting" */
	memcpy(why, key, n);
	why[n] = ' ';
	switch (config_set(c, key, trim(eq + 1), why + n + 1, size - n - 1)) {
	case 0:
		return 0;
	case -ENOENT:
		memmove(why, why + n + 1, strlen(why + n + 1) + 1);
		break;
	}
	return -EINVAL;
}

int config_read(struct config *c, const char *file, char *why, size_t size)
{
	char line[PATH_MAX + 64], reason[PATH_MAX + 160];
	unsigned n = 0;
	int err = 0;
	FILE *f = fopen(file, "re");
	if (!f) {
		snprintf(why, size, "%s: %s", file, strerror(errno));
		return -errno;
	}
	while (!err && fgets(line, sizeof line, f)) {
		n++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(reason, sizeof reason, "line too long");
			err = -EINVAL;
		} else {
			err = config_line(c, line, reason, sizeof reason);
		}
	}
	if (!err && ferror(f)) {
		snprintf(reason, sizeof reason, "%s", strerror(EIO));
		err = -EIO;
	}
	fclose(f);
	if (err)
		snprintf(why, size, "%s:%u: %s", file, n, reason);
	return err;
}

void config_merge(struct config *out, const struct config *over,
		  const struct config *under)
{
#define PICK(field, dflt) \
	strcpy(out->field, *over->field ? over->field : \
			   *under->field ? under->field : (dflt))
	PICK(socket, LS_SOCKET_DEFAULT);
	PICK(state_dir, LS_STATE_DIR);
	PICK(log, "");
	PICK(fallback, "enosys");
#undef PICK
	out->max_mounts = over->max_mounts ? over->max_mounts :
			  under->max_mounts;
	out->threads = over->threads ? over->threads : under->threads;
	out->debug = over->debug >= 0 ? over->debug :
		     under->debug >= 0 ? under->debug : 0;
}

void config_print(const struct config *c, FILE *out)
{
	fprintf(out, "socket = %s\nstate-dir = %s\n", c->socket, c->state_dir);
	if (c->max_mounts)
		fprintf(out, "max-mounts = %u\n", c->max_mounts);
	else
		fputs("# max-mounts: the kernel's fs.mount-max\n", out);
	if (c->threads)
		fprintf(out, "threads = %u\n", c->threads);
	else
		fputs("# threads: one per processor, at most 4\n", out);
	if (*c->log)
		fprintf(out, "log = %s\n", c->log);
	else
		fputs("# log: syslog once detached, stderr with --foreground\n",
		      out);
	fprintf(out, "fallback = %s\ndebug = %s\n", c->fallback,
		c->debug ? "yes" : "no");
}
