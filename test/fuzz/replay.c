/* replay.c: a fuzz target's corpus as a test of make check (fuzz.h): the
 * target run once on each file of CORPUS, in name order, a TAP point per
 * file.  A crash ends the program, and the log's last "# file" line names
 * the input.  No libFuzzer, no clang: the ordinary build.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include "fuzz.h"

/* Some targets link a program's sources, whose main() is renamed with
 * -Dmain=... (targets.am): this one is the test's. */
#undef main

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int only_files(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* The whole file, malloc'ed (at least one byte), its size in *n. */
static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len + 1)) &&
	    fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		*n = (size_t)len;
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : CORPUS;
	struct dirent **names;
	int n = scandir(dir, &names, only_files, alphasort);
	if (n < 0) {
		printf("1..0 # SKIP %s: %s\n", dir, strerror(errno));
		return 0;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	printf("1..%d\n", n);
	for (int i = 0; i < n; i++) {
		char path[4096];
		size_t size = 0;
		uint8_t *data;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
		printf("# file %s\n", names[i]->d_name);
		fflush(stdout);
		data = slurp(path, &size);
		if (data)
			LLVMFuzzerTestOneInput(data, size);
		printf("%sok %d - %s\n", data ? "" : "not ", i + 1,
		       names[i]->d_name);
		free(data);
		free(names[i]);
	}
	free(names);
	return 0;
}
