/* alloc.c: every allocation of the engine goes through here, so that a
 * test can make any one of them fail (eng_fail_at) and prove engine.h's
 * out-of-memory rule, and so that growing an array is written once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "engine.h"
#include "vec.h"

/* The injector's countdown: a test-only global, as malloc's own state is
 * global; single-threaded like the rest of the engine. */
static long countdown;
static unsigned long failures;

/* Arms the injector (k > 0: the k-th allocation from now fails, and the
 * count of failures restarts) or disarms it (0: the count stays). */
void eng_fail_at(long k)
{
	countdown = k > 0 ? k : 0;
	if (k > 0)
		failures = 0;
}

unsigned long eng_failures(void)
{
	return failures;
}

/* Whether this allocation is the one to fail: only one per arming, so a
 * caller that swallows the failure is caught by the operation succeeding. */
static bool injected(void)
{
	if (!countdown || --countdown)
		return false;
	failures++;
	return true;
}

void *eng_malloc(size_t n)
{
	return injected() ? NULL : malloc(n);
}

void *eng_calloc(size_t n, size_t size)
{
	return injected() ? NULL : calloc(n, size);
}

void *eng_realloc(void *p, size_t n)
{
	return injected() ? NULL : realloc(p, n);
}

char *eng_strdup(const char *s)
{
	return injected() ? NULL : strdup(s);
}

char *eng_asprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = n < 0 ? NULL : eng_malloc((size_t)n + 1);
	if (s) {
		va_start(ap, fmt);
		vsnprintf(s, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	return s;
}

/* vec.h's growth: room for need elements, doubling; NULL (and v and *cap
 * untouched) when that cannot be had. */
void *vec_grow(void *v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
	if (n > SIZE_MAX / size)
		return NULL;
	void *w = eng_realloc(v, n * size);
	if (w)
		*cap = n;
	return w;
}
