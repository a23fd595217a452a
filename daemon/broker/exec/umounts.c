/* umounts.c: many mounts detached at once.  umount2() waits for an RCU
 * grace period whenever it took mounts out (namespace_unlock() calls
 * synchronize_rcu_expedited() once the namespace lock is dropped), so N
 * calls in a row wait N times; calls made from several threads at once
 * share their waits.  A fan-out's umount (a mount and its N copies on
 * N receivers) is such a batch (execplan.c, step.alone).
 *
 * The threads only call umount2() on /proc/self/fd/N of handles the
 * main thread holds and keeps open, and store the errno; the main thread
 * takes its share and waits for the rest.  They are started at the first
 * batch and kept, every signal blocked in them: the handlers (signals.c)
 * must interrupt the main thread's poll().  Without threads the main
 * thread does the whole batch alone.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include "broker.h"
#include "base/log.h"
#include "exec/exec.h"

enum {
	THREADS = 15,          /* besides the main thread: measured, 16
				  calls at once wait about 4x less per
				  call than one (2 cores, kernel 6.18) */
	STACK = 64 * 1024,     /* a path of 64 bytes and umount2() */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	const int *fds;        /* the batch: handles to detach */
	int *errs;             /* their results, 0 or -errno */
	size_t n, next, left;  /* size, next to take, not yet finished */
	int threads;
} pool = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

/* Takes and does items of the batch until none is left to take; called
 * and returns with pool.mu held. */
static void drain(void)
{
	char at[64];
	while (pool.next < pool.n) {
		size_t i = pool.next++;
		pthread_mutex_unlock(&pool.mu);
		snprintf(at, sizeof at, "/proc/self/fd/%d", pool.fds[i]);
		int err = umount2(at, MNT_DETACH) < 0 ? -errno : 0;
		pthread_mutex_lock(&pool.mu);
		pool.errs[i] = err;
		if (--pool.left == 0)
			pthread_cond_signal(&pool.done);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool.mu);
	for (;;) {
		drain();
		pthread_cond_wait(&pool.work, &pool.mu);
	}
	return NULL;
}

/* As many threads as may be started, up to THREADS. */
static void start(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	if (pthread_attr_init(&attr))
		return;
	pthread_attr_setstacksize(&attr, STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);   /* the threads inherit it */
	while (pool.threads < THREADS &&
	       pthread_create(&t, &attr, worker, NULL) == 0)
		pool.threads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (pool.threads < THREADS)
		log_msg(LOG_INFO, "umounts: %d threads of %d", pool.threads,
			THREADS);
}

/* umount2(MNT_DETACH) of each of fds[0..n), at once; errs[i] its result. */
void umount_all(const int *fds, int *errs, size_t n)
{
	if (n > 1 && !pool.threads)
		start();
	pthread_mutex_lock(&pool.mu);
	pool.fds = fds;
	pool.errs = errs;
	pool.n = n;
	pool.next = 0;
	pool.left = n;
	pthread_cond_broadcast(&pool.work);
	drain();
	while (pool.left)
		pthread_cond_wait(&pool.done, &pool.mu);
	pool.n = pool.next = 0;
	pthread_mutex_unlock(&pool.mu);
}
