/* caller.h: what the two files of test/broker/caller share. */
#ifndef LS_CALLER_H
#define LS_CALLER_H

enum { MAXTHREADS = 256 };     /* --threads N at most */

void die(const char *what) __attribute__((noreturn));
const char *err_name(int e);
/* One line of output, prefixed with the worker's number (unless -1). */
void report(int worker, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void swap(char *a[3]);
void list_dir(int worker, const char *dir);
void cat_file(int worker, const char *path);
void show_cwd(int worker);

#endif
