/* signals.c: sharebrokerd's signals (admin.h).  The handlers only note
 * what was asked; the work happens in admin_tick(), between requests,
 * where the graph is consistent and no plan is open. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker.h"
#include "base/log.h"
#include "hold/holder.h"
#include "main/admin.h"

static struct broker *the_broker;
static void (*on_reload)(struct broker *);
static volatile sig_atomic_t hup, usr1;
/* a child ended: the holder, maybe (holder_check()); 1 at first, for one
 * that ended before the handler was there */
static volatile sig_atomic_t chld = 1;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		hup = 1;
	else if (sig == SIGUSR1)
		usr1 = 1;
	else if (sig == SIGCHLD)
		chld = 1;
	else           /* read by every serving thread (door/loop.c) */
		__atomic_store_n(&the_broker->stop, true, __ATOMIC_RELAXED);
}

void signals_init(struct broker *b, void (*reload)(struct broker *))
{
	/* no SA_RESTART: poll() returns, and the loop looks at once */
	struct sigaction sa = { .sa_handler = on_signal };
	the_broker = b;
	on_reload = reload;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	/* SA_RESTART: a mount's staging child (newmount.c) ends inside a
	 * request, whose calls go on; poll() returns all the same */
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The host's mount tree with its propagation, as `sharectl tree` shows
 * it, one log line per mount. */
static void dump_tree(struct broker *b)
{
	char *text = NULL, *line, *next;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	struct loc root = { b->ns->root, b->ns->root->root, false };
	if (!f) {
		log_msg(LOG_ERR, "SIGUSR1: no memory for the tree");
		return;
	}
	render_tree(b->ns, root, false, f);
	fclose(f);
	log_msg(LOG_INFO, "SIGUSR1: the mount tree, %u mounts:", b->ns->count);
	for (line = text; line && *line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		log_msg(LOG_INFO, "  %s", line);
	}
	free(text);
}

void admin_tick(struct broker *b)
{
	/* a wait4() only when a child ended, not one a request */
	if (chld) {
		chld = 0;      /* first: one that ends meanwhile is seen */
		holder_check(b);
	}
	if (hup) {
		hup = 0;
		on_reload(b);
	}
	if (usr1) {
		usr1 = 0;
		dump_tree(b);
	}
}
