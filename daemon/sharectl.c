/* sharectl: the administrator's command.
 *
 *   sharectl [--socket ADDR] status | stop | jails
 *
 * Exit status: 0 on success; 1 when the broker refuses or does not answer
 * (status: no broker); 2 for a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "libshare_proto.h"
#include "sock.h"

static void usage(FILE *out, int code)
{
	fprintf(out, "usage: sharectl [--socket ADDR] status|stop|jails\n");
	exit(code);
}

/* One round trip; the reply's text goes to stdout.  Returns the reply's
 * errno, or a negative errno when no root broker answered. */
static int ask(const char *addr, uint16_t op)
{
	static char buf[sizeof(struct ls_reply) + LS_REPLY_MAX];
	struct ls_request rq = { LS_MAGIC, LS_VERSION, op, 0,
				 { LS_ABSENT, LS_ABSENT, LS_ABSENT, LS_ABSENT },
				 0, 0 };
	struct ucred cred;
	socklen_t cl = sizeof cred;
	int fd = sock_connect(addr);
	if (fd < 0)
		return fd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
	    cred.uid != 0) {           /* a squatter, not the broker */
		close(fd);
		return -EPERM;
	}
	ssize_t n = -1;
	if (send(fd, &rq, sizeof rq, MSG_NOSIGNAL) == (ssize_t)sizeof rq)
		n = recv(fd, buf, sizeof buf, 0);
	close(fd);
	const struct ls_reply *r = (const void *)buf;
	if (n < (ssize_t)sizeof *r || r->magic != LS_MAGIC ||
	    r->len != (size_t)n - sizeof *r)
		return -EPROTO;
	fwrite(buf + sizeof *r, 1, r->len, stdout);
	return r->error;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const struct { const char *name; uint16_t op; } cmds[] = {
		{ "status", LS_OP_STATUS }, { "stop", LS_OP_STOP },
		{ "jails", LS_OP_JAILS },
	};
	const char *addr = getenv(LS_SOCKET_ENV);
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
		if (c == 's')
			addr = optarg;
		else
			usage(c == 'h' ? stdout : stderr, c == 'h' ? 0 : 2);
	if (!addr || !*addr)
		addr = LS_SOCKET_DEFAULT;
	if (optind + 1 != argc)
		usage(stderr, 2);
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		if (strcmp(argv[optind], cmds[i].name) != 0)
			continue;
		int err = ask(addr, cmds[i].op);
		if (err < 0)
			fprintf(stderr, "sharectl: no broker at %s: %s\n", addr,
				strerror(-err));
		else if (err > 0)
			fprintf(stderr, "sharectl: %s: %s\n", cmds[i].name,
				strerror(err));
		return err ? 1 : 0;
	}
	usage(stderr, 2);
}
