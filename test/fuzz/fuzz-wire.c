/* fuzz-wire: the codec of include/libshare_wire.h, the broker's first
 * contact with untrusted bytes (a request) and the shim's (a reply).
 *
 * The first byte chooses the decoder; the rest is the message.  Besides
 * not crashing, each decoder keeps its promise: what a decoder takes, the
 * encoder turns back into the same bytes, and no view reaches past the
 * message.
 */
#include <string.h>
#include "libshare_wire.h"
#include "fuzz.h"

static uint8_t flat[LS_REQUEST_MAX + LS_REPLY_MAX];

static size_t flatten(const struct msghdr *mh)
{
	size_t n = 0;
	for (size_t i = 0; i < mh->msg_iovlen; i++) {
		memcpy(flat + n, mh->msg_iov[i].iov_base,
		       mh->msg_iov[i].iov_len);
		n += mh->msg_iov[i].iov_len;
	}
	return n;
}

/* A request as the broker's server.c takes it (a message of exactly n
 * bytes: ASan sees a read past it). */
static void request(const uint8_t *msg, size_t n)
{
	struct ls_req_view q;
	struct ls_req_out o;
	if (ls_req_decode(msg, n, &q) < 0)
		return;
	for (int i = 0; i < LS_NFIELDS; i++)
		FUZZ_ASSERT(!q.field[i] ||
			    ((const uint8_t *)q.field[i] >= msg &&
			     (const uint8_t *)q.field[i] + q.len[i] <= msg + n));
	FUZZ_ASSERT(ls_req_encode(&o, &q) == 0);
	FUZZ_ASSERT(o.size == n && flatten(&o.mh) == n &&
		    memcmp(flat, msg, n) == 0);
}

/* A reply as the shim receives it: the header, then up to a buffer's
 * worth of text (the rest is cut, as recvmsg() would); no descriptor. */
static void reply(const uint8_t *msg, size_t n, uint16_t op)
{
	static char text[256];
	struct ls_rep_in in;
	struct ls_rep_view a;
	struct ls_rep_out o;
	ls_rep_expect(&in, text, sizeof text);
	in.mh.msg_controllen = 0;
	memset(&in.h, 0, sizeof in.h);
	memcpy(&in.h, msg, n < sizeof in.h ? n : sizeof in.h);
	if (n > sizeof in.h)
		memcpy(text, msg + sizeof in.h,
		       n - sizeof in.h < sizeof text ? n - sizeof in.h :
						       sizeof text);
	if (ls_rep_decode(&in, n, op, &a) < 0)
		return;
	FUZZ_ASSERT(a.fd == -1 && a.len <= sizeof text &&
		    a.len <= n - sizeof in.h);
	if (a.len != in.h.len)
		return;                /* cut: not the same bytes again */
	FUZZ_ASSERT(ls_rep_encode(&o, &a) == 0);
	FUZZ_ASSERT(flatten(&o.mh) == n && memcmp(flat, msg, n) == 0);
}

/* An address, as LIBSHARE_SOCKET or --socket gives it. */
static void address(const uint8_t *s, size_t n)
{
	char name[sizeof ((struct sockaddr_un *)0)->sun_path + 8];
	struct sockaddr_un sa;
	socklen_t len;
	n = n < sizeof name - 1 ? n : sizeof name - 1;
	memcpy(name, s, n);
	name[n] = '\0';
	if (ls_address(name, &sa, &len) == 0)
		FUZZ_ASSERT(len <= sizeof sa &&
			    len > offsetof(struct sockaddr_un, sun_path));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* a copy of exactly the message's size, for ASan to bound */
	uint8_t *msg = malloc(size - 1 ? size - 1 : 1);
	if (!msg)
		return 0;
	memcpy(msg, data + 1, size - 1);
	switch (data[0] % 3) {
	case 0:
		request(msg, size - 1);
		break;
	case 1:
		if (size - 1 <= LS_REPLY_MAX)
			reply(msg, size - 1, (uint16_t)(data[0] / 3 % 17));
		break;
	default:
		address(msg, size - 1);
	}
	free(msg);
	return 0;
}
