/* threads: many threads mount through the shim at once, for
 * shim-callers.bats.  Each call has its own connection, so no reply can
 * reach the wrong caller; this checks it by giving every call a target
 * whose answer the fake broker derives from the name (fakebroker.c).
 *
 * usage: threads DIR
 * Thread t makes calls c = 0..CALLS-1 with the target DIR/t-c/WHAT, WHAT
 * cycling through OK, EPERM and ENOENT, and checks each result and that
 * errno is kept on success.  Prints "N calls, M wrong"; exit status 0
 * when none is wrong.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#define THREADS 8
#define CALLS 50

static const char *dir;

static const struct {
	const char *what;
	int err;
} cases[] = { { "OK", 0 }, { "EPERM", EPERM }, { "ENOENT", ENOENT } };

static void *worker(void *p)
{
	long t = (long)p, wrong = 0;
	char target[4096];
	for (int c = 0; c < CALLS; c++) {
		int k = (int)((t + c) % 3), r, e;
		snprintf(target, sizeof target, "%s/%ld-%d/%s", dir, t, c,
			 cases[k].what);
		errno = 1234;
		r = mount("src", target, NULL, MS_BIND, NULL);
		e = errno;
		if (cases[k].err ? r != -1 || e != cases[k].err :
				   r != 0 || e != 1234) {
			fprintf(stderr, "%s: r=%d errno=%s\n", target, r,
				strerror(e));
			wrong++;
		}
	}
	return (void *)wrong;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	long wrong = 0;
	if (argc != 2) {
		fprintf(stderr, "usage: threads DIR\n");
		return 2;
	}
	dir = argv[1];
	for (long t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t))
			return 2;
	for (int t = 0; t < THREADS; t++) {
		void *w;
		pthread_join(th[t], &w);
		wrong += (long)w;
	}
	printf("%d calls, %ld wrong\n", THREADS * CALLS, wrong);
	return wrong != 0;
}
