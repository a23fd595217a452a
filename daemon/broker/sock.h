/* sock.h: "@name" is an abstract AF_UNIX address, anything else a path. */
#ifndef LS_SOCK_H
#define LS_SOCK_H

#include <sys/socket.h>
#include <sys/un.h>

/* Fills sa; 0 when addr is empty or too long. */
socklen_t sock_address(const char *addr, struct sockaddr_un *sa);
/* A connected SOCK_SEQPACKET descriptor, or a negative errno. */
int sock_connect(const char *addr);

#endif
