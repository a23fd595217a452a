/* sock.h: the broker's socket address, "@name" (abstract) or an absolute
 * path, by the codec's one rule (libshare_wire.h). */
#ifndef LS_SOCK_H
#define LS_SOCK_H

#include <sys/socket.h>
#include <sys/un.h>

/* Fills sa; 0 when the codec refuses addr. */
socklen_t sock_address(const char *addr, struct sockaddr_un *sa);
/* A connected SOCK_SEQPACKET descriptor, or a negative errno. */
int sock_connect(const char *addr);

#endif
