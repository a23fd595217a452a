/* loop.c: the threads that serve the connections (server.c serves each
 * request).  Each thread has connections of its own and waits for them
 * in poll(); the first, the main thread, also accepts new ones, handing
 * each to the thread with the fewest, and does the daemon's own work
 * between requests.  Who asks is read outside the graph's lock, in the
 * thread of the connection; deciding, carrying out and saving a request
 * take the lock, as the kernel takes namespace_sem: one request changes
 * the graph at a time, two callers are identified at once.  A connection's
 * requests are served in the order they come.
 *
 * A connection that sends nothing holds only its slot, for at most IDLE
 * seconds, and the one quiet longest gives way when all MAXCLIENTS of a
 * thread's slots are taken.  Requests parked on a stalled filesystem
 * (slow.c) keep their connection and message, in the main thread, which
 * serves them again when a lookup ends; MAXPARKED of them, then the next
 * gets EAGAIN.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "broker.h"
#include "base/log.h"
#include "door/door.h"
#include "door/server.h"
#include "hold/hold.h"
#include "ns/ns.h"
#include "resolve/resolve.h"
#include "tab/tab.h"

enum { MAXCLIENTS = 128, IDLE = 10, MAXPARKED = 64, BATCH = 16,
       THREADS_MAX = 8, THREADS_DEFAULT = 4, INBOX = 16 };

struct loop {                  /* a serving thread */
	struct broker *b;
	struct client c[MAXCLIENTS];
	size_t n;
	size_t load;           /* n, as the main thread reads it */
	int wake;              /* eventfd: an inbox entry, a park, the stop */
	pthread_mutex_t mu;    /* the inbox: connections handed over */
	struct client in[INBOX];
	size_t nin;
	pthread_t th;
};

static pthread_mutex_t graph = PTHREAD_MUTEX_INITIALIZER;
static struct loop loops[THREADS_MAX];     /* [0]: the main thread's */
static unsigned nloops;
/* the main thread's, under the graph's lock */
static struct client park[MAXPARKED];
static size_t nparked;

void server_lock(void)
{
	pthread_mutex_lock(&graph);
}

void server_unlock(void)
{
	pthread_mutex_unlock(&graph);
}

static void wake(struct loop *l)
{
	uint64_t one = 1;
	if (l->wake >= 0 && write(l->wake, &one, sizeof one) < 0)
		log_msg(LOG_WARNING, "a serving thread not woken: %s",
			strerror(errno));
}

static bool stopping(const struct loop *l)
{
	return __atomic_load_n(&l->b->stop, __ATOMIC_RELAXED);
}

bool server_park(struct client *c)
{
	if (nparked == MAXPARKED) {
		log_msg(LOG_WARNING, "pid %d: %d requests already wait for "
			"stalled filesystems: EAGAIN", (int)c->from.pid,
			MAXPARKED);
		return false;
	}
	park[nparked++] = *c;
	wake(&loops[0]);       /* to watch its connection too */
	return true;
}

static void drop(struct client *c, size_t *n, size_t i)
{
	close(c[i].fd);
	free(c[i].msg);
	peer_seen_forget(&c[i].seen);
	c[i] = c[--*n];
}

/* c into l's slots, the quietest giving way when they are all taken. */
static void add(struct loop *l, const struct client *c)
{
	if (l->n == MAXCLIENTS)
		drop(l->c, &l->n, server_quietest(l->c, l->n));
	l->c[l->n++] = *c;
	__atomic_store_n(&l->load, l->n, __ATOMIC_RELAXED);
}

/* c's request served; c is ready for the next. */
static void served(struct client *c)
{
	free(c->msg);
	c->msg = NULL;
	c->since = time(NULL);
}

/* A connection of l's with a request to read: served, or parked (then
 * the main thread's); one whose request has not come yet stays, and so
 * does one served. */
static void serve(struct loop *l, size_t i)
{
	struct client *cl = &l->c[i];
	if (!server_take(cl)) {
		if (cl->n)             /* hung up */
			drop(l->c, &l->n, i);
		return;
	}
	int err = server_handle(l->b, cl, false);
	if (err == MALFORMED)
		drop(l->c, &l->n, i);
	else if (err == -EINPROGRESS)
		l->c[i] = l->c[--l->n];        /* parked has it */
	else
		served(cl);
	if (l != loops && stopping(l))
		wake(&loops[0]);       /* sharectl stop, served here */
}

/* A lookup ended (woken): the parked requests are served again, under
 * the graph's lock, which the caller holds, and their connections go
 * back among the main thread's (l), where there is room; those whose
 * callers hung up (p: the poll of the first polled) are dropped. */
static void unpark(struct loop *l, const struct pollfd *p, size_t polled,
		   bool woken)
{
	if (woken)
		slow_retrying(true);
	for (size_t i = nparked; i-- > 0; ) {
		struct client *cl = &park[i];
		if (i < polled && p[i].revents & (POLLHUP | POLLERR)) {
			log_msg(LOG_WARNING, "pid %d gave up waiting for a "
				"stalled filesystem, or died: nothing done",
				(int)cl->from.pid);
			drop(park, &nparked, i);
		} else if (woken && server_handle(l->b, cl, true) !=
			   -EINPROGRESS) {
			served(cl);
			if (l->n == MAXCLIENTS) {
				drop(park, &nparked, i);
				continue;
			}
			l->c[l->n++] = *cl;
			park[i] = park[--nparked];
		}
	}
	if (woken)
		slow_retrying(false);
	if (nparked == 0)
		slow_forget();
}

/* The thread with the fewest connections, the main thread first. */
static struct loop *least(void)
{
	struct loop *to = &loops[0];
	for (unsigned i = 1; i < nloops; i++)
		if (__atomic_load_n(&loops[i].load, __ATOMIC_RELAXED) <
		    __atomic_load_n(&to->load, __ATOMIC_RELAXED))
			to = &loops[i];
	return to;
}

/* c handed to another thread, l; false when its inbox is full. */
static bool hand(struct loop *l, const struct client *c)
{
	bool room;
	pthread_mutex_lock(&l->mu);
	if ((room = l->nin < INBOX))
		l->in[l->nin++] = *c;
	pthread_mutex_unlock(&l->mu);
	if (room) {            /* counted now: a burst spreads */
		__atomic_add_fetch(&l->load, 1, __ATOMIC_RELAXED);
		wake(l);
	}
	return room;
}

/* l's connections that poll() found ready (p, the first polled of
 * them): served; those quiet for IDLE seconds are closed. */
static void serve_ready(struct loop *l, const struct pollfd *p,
			size_t polled)
{
	time_t now = time(NULL);
	for (size_t i = polled; i-- > 0; )  /* back to front: drop() swaps */
		if (p[i].revents)
			serve(l, i);
		else if (now - l->c[i].since > IDLE)
			drop(l->c, &l->n, i);
}

/* A first request mostly comes with the connection: served at once,
 * not after another round of poll(); with many callers, up to BATCH of
 * them before the others' turn.  Each goes to the thread that has the
 * fewest. */
static void accept_new(struct loop *l)
{
	struct client c;
	for (int i = 0; i < BATCH && server_accept(l->b->listen_fd, &c); i++) {
		struct loop *to = least();
		if (to != l && hand(to, &c))
			continue;
		add(l, &c);
		serve(l, l->n - 1);
	}
}

/* The connections handed to l, taken and served at once. */
static void take_inbox(struct loop *l)
{
	struct client in[INBOX];
	size_t n;
	uint64_t v;
	if (read(l->wake, &v, sizeof v) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&l->mu);
	n = l->nin;
	memcpy(in, l->in, n * sizeof *in);
	l->nin = 0;
	pthread_mutex_unlock(&l->mu);
	for (size_t i = 0; i < n; i++) {
		add(l, &in[i]);
		serve(l, l->n - 1);
	}
}

static void *worker(void *arg)
{
	struct loop *l = arg;
	struct pollfd p[MAXCLIENTS + 1];
	char name[16];         /* "serving-1": its comm, in ps -L and /proc */
	snprintf(name, sizeof name, "serving-%u", (unsigned)(l - loops));
	pthread_setname_np(pthread_self(), name);
	while (!stopping(l)) {
		size_t polled = l->n;
		p[0] = (struct pollfd){ .fd = l->wake, .events = POLLIN };
		for (size_t i = 0; i < polled; i++)
			p[i + 1] = (struct pollfd){ .fd = l->c[i].fd,
						    .events = POLLIN };
		if (poll(p, polled + 1, 1000) < 0)
			continue;
		serve_ready(l, p + 1, polled);
		if (p[0].revents & POLLIN)
			take_inbox(l);
		__atomic_store_n(&l->load, l->n, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* The main thread's round: the daemon's own work, then the requests. */
static void main_loop(struct loop *l, void (*tick)(struct broker *b))
{
	struct broker *b = l->b;
	struct pollfd p[MAXCLIENTS + MAXPARKED + 6];
	int lookups = slow_wake_fd();
	while (!stopping(l)) {
		server_lock();
		tick(b);               /* SIGHUP, SIGUSR1: between requests */
		ns_tick(b);            /* namespaces nobody is in any more */
		size_t np = nparked, n = l->n, at = np + 3, k;
		p[0] = (struct pollfd){ .fd = b->listen_fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = lookups, .events = POLLIN };
		p[2] = (struct pollfd){ .fd = l->wake, .events = POLLIN };
		for (size_t i = 0; i < np; i++)
			p[i + 3] = (struct pollfd){ .fd = park[i].fd };
		for (size_t i = 0; i < n; i++)
			p[at + i] = (struct pollfd){ .fd = l->c[i].fd,
						     .events = POLLIN };
		k = tab_loop_fds(b, p + at + n);
		/* a token's last close: ns_tick() at once (nslife.c) */
		p[at + n + k] = (struct pollfd){ .fd = ns_wake_fd(),
						 .events = POLLIN };
		server_unlock();
		if (poll(p, at + n + k + 1, 1000) < 0)
			continue;      /* EINTR: a signal, maybe SIGTERM */
		server_lock();
		tab_loop_events(b, p + at + n, k);
		unpark(l, p + 3, np, p[1].revents & POLLIN);
		server_unlock();
		serve_ready(l, p + at, n);
		if (p[2].revents & POLLIN)
			take_inbox(l);
		if (p[0].revents & POLLIN)
			accept_new(l);
		__atomic_store_n(&l->load, l->n, __ATOMIC_RELAXED);
	}
}

/* The serving threads but the main one, started with every signal
 * blocked: SIGTERM, SIGHUP and SIGUSR1 are the main thread's. */
static void start_workers(void)
{
	sigset_t all, was;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &was);
	for (unsigned i = 1; i < nloops; i++) {
		int err = pthread_create(&loops[i].th, NULL, worker, &loops[i]);
		if (err) {
			log_msg(LOG_WARNING, "%u serving threads, not %u: %s",
				i, nloops, strerror(err));
			nloops = i;
		}
	}
	pthread_sigmask(SIG_SETMASK, &was, NULL);
}

static void close_loop(struct loop *l)
{
	while (l->n > 0)
		drop(l->c, &l->n, 0);
	while (l->nin > 0)
		drop(l->in, &l->nin, 0);
	if (l->wake >= 0)
		close(l->wake);
}

/* Without an eventfd a thread is not started; the main thread does
 * without its own (wake -1): a park waits for its next round of poll(). */
void server_loop(struct broker *b, unsigned threads,
		 void (*tick)(struct broker *b))
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want = threads ? threads : cpus < 1 ? 1 :
			cpus > THREADS_DEFAULT ? THREADS_DEFAULT : (unsigned)cpus;
	for (nloops = 0; nloops < want && nloops < THREADS_MAX; nloops++) {
		struct loop *l = &loops[nloops];
		*l = (struct loop){ .b = b, .mu = PTHREAD_MUTEX_INITIALIZER,
				    .wake = eventfd(0, EFD_CLOEXEC |
						    EFD_NONBLOCK) };
		if (l->wake < 0 && nloops > 0)
			break;
	}
	start_workers();
	if (nloops > 1)            /* the main thread's own (import.c) */
		table_watch_also(open("/proc/self/mountinfo",
				      O_RDONLY | O_CLOEXEC));
	main_loop(&loops[0], tick);
	for (unsigned i = 1; i < nloops; i++) {
		wake(&loops[i]);
		pthread_join(loops[i].th, NULL);
	}
	for (unsigned i = 0; i < nloops; i++)
		close_loop(&loops[i]);
	while (nparked > 0)
		drop(park, &nparked, 0);
	if (table_watch_fd(b) != b->watch)
		close(table_watch_fd(b));
	table_watch_also(-1);
}
