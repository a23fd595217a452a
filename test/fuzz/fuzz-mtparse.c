/* fuzz-mtparse: the broker's reader of the kernel's mount table
 * (daemon/broker/base/mtparse.c), on /proc/self/mountinfo's form and on
 * /proc/mounts' (a kernel before 2.6.26).  The kernel writes that text, but
 * a mountpoint's name is any user's to choose: the escapes, spaces and
 * field counts of a hostile name must not take the parser past its line.
 */
#include <string.h>
#include "base/mtparse.h"
#include "fuzz.h"

enum { MAXLINES = 256 };

/* Each line of data as its own NUL-terminated allocation, so that ASan
 * bounds every read to its line. */
static size_t split_lines(const uint8_t *data, size_t size, char **v)
{
	size_t n = 0;
	while (size && n < MAXLINES) {
		const uint8_t *nl = memchr(data, '\n', size);
		size_t len = nl ? (size_t)(nl - data) + 1 : size;
		if (!(v[n] = strndup((const char *)data, len)))
			break;
		n++;
		data += len;
		size -= len;
	}
	return n;
}

static void mountinfo(char **lines, size_t n)
{
	struct entry *v = calloc(n + 1, sizeof *v), **ix;
	for (size_t i = 0; v && i < n; i++) {
		char *copy = strdup(lines[i]);
		if (copy && mt_parse_line(copy, &v[i]) == 0)
			FUZZ_ASSERT(v[i].root && v[i].mp && v[i].type &&
				    v[i].source && v[i].sbopts &&
				    memchr(v[i].dev, '\0', sizeof v[i].dev));
		entry_dev(&v[i]);
		free(copy);
	}
	if (v && (ix = entry_index(v, n))) {
		for (size_t i = 0; i < n; i++)
			FUZZ_ASSERT(entry_find(ix, n, v[i].id));
		free(ix);
	}
	free(v);
}

static void mounts(char **lines, size_t n)
{
	struct entry *v = calloc(n + 1, sizeof *v);
	char **copies = calloc(n + 1, sizeof *copies);
	size_t k = 0;
	for (size_t i = 0; v && copies && i < n; i++) {
		if (!(copies[k] = strdup(lines[i])))
			break;
		if (mt_parse_mounts_line(copies[k], &v[k], v, k) == 0) {
			FUZZ_ASSERT(v[k].parent < v[k].id);
			k++;
		} else {
			free(copies[k]);
		}
	}
	for (size_t i = 0; copies && i < k; i++)
		free(copies[i]);
	free(copies);
	free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *lines[MAXLINES];
	size_t n = split_lines(data, size, lines);
	mountinfo(lines, n);
	mounts(lines, n);
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	return 0;
}
