/* alloc.h: the engine's allocation functions (alloc.c), the only ones
 * engine code calls: the injector of engine.h can fail any of them.
 * Internal to the engine; free() frees what they return. */
#ifndef LS_ALLOC_H
#define LS_ALLOC_H

#include <stddef.h>

void *eng_malloc(size_t n);
void *eng_calloc(size_t n, size_t size);
void *eng_realloc(void *p, size_t n);
char *eng_strdup(const char *s);
char *eng_asprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
