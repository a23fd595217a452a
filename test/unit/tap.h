/* tap.h: the Test Anything Protocol, enough for automake's TAP driver. */
#ifndef LS_TAP_H
#define LS_TAP_H
#include <stdio.h>

/* One count per program: the file with main defines TAP_MAIN. */
#ifdef TAP_MAIN
int tap_n, tap_failed;
#else
extern int tap_n, tap_failed;
#endif

#define ok(cond, ...) do { \
	int ok_ = !!(cond); \
	printf("%sok %d - ", ok_ ? "" : "not ", ++tap_n); \
	printf(__VA_ARGS__); \
	printf("\n"); \
	if (!ok_) { \
		tap_failed++; \
		printf("# failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
#endif
