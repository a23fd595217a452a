/* wire-test: the codec of include/libshare_wire.h, which the shim,
 * sharectl, the broker and the test clients all call, against golden byte
 * strings: every malformed form is refused with the one errno of its side,
 * and what decodes encodes back to the same bytes.  The address, and what
 * only the kernel does to descriptors, are in wire-socket-test.c. */
#include "libshare_wire.h"
#define TAP_MAIN
#include "tap.h"

#define GOLDEN(s) s, sizeof s - 1

/* mount("none", "/mnt", "tmpfs", MS_NOSUID, NULL) from thread 7. */
static const char mount_req[] =
	"LSH1" "\x01\x00" "\x01\x00"               /* magic, version, op */
	"\x02\0\0\0\0\0\0\0"                       /* arg */
	"\x04\0\0\0" "\x04\0\0\0" "\x05\0\0\0"     /* field lengths */
	"\xff\xff\xff\xff"                         /* data: absent */
	"\x07\0\0\0" "\0\0\0\0"                    /* tid, fd1 */
	"none" "/mnt" "tmpfs";
/* An empty field 0 and an absent one are not the same request. */
static const char umount_req[] =
	"LSH1" "\x01\x00" "\x02\x00" "\x02\0\0\0\0\0\0\0"
	"\0\0\0\0" "\x02\0\0\0" "\xff\xff\xff\xff" "\xff\xff\xff\xff"
	"\0\0\0\0" "\0\0\0\0" "/m";
static const char status_req[] =
	"LSH1" "\x01\x00" "\x05\x00" "\0\0\0\0\0\0\0\0"
	"\xff\xff\xff\xff" "\xff\xff\xff\xff" "\xff\xff\xff\xff"
	"\xff\xff\xff\xff" "\0\0\0\0" "\0\0\0\0";
/* pivot_root's answer: 0, and "cwd" (the caller's cwd was its root). */
static const char pivot_rep[] =
	"LSH1" "\x01\x00" "\x03\x00" "\0\0\0\0" "\x03\0\0\0" "cwd";

static char buf[LS_REPLY_MAX + 64];

/* The bytes an encoded request sends, flattened into buf. */
static size_t flatten(const struct msghdr *mh)
{
	size_t n = 0;
	for (size_t i = 0; i < mh->msg_iovlen; i++) {
		memcpy(buf + n, mh->msg_iov[i].iov_base, mh->msg_iov[i].iov_len);
		n += mh->msg_iov[i].iov_len;
	}
	return n;
}

static int req_round_trip(const char *golden, size_t n)
{
	struct ls_req_view q;
	struct ls_req_out o;
	return ls_req_decode(golden, n, &q) == 0 && ls_req_encode(&o, &q) == 0 &&
	       o.size == n && flatten(&o.mh) == n && memcmp(buf, golden, n) == 0;
}

static void test_requests(void)
{
	struct ls_req_view q;
	ok(ls_req_decode(GOLDEN(mount_req), &q) == 0 && q.op == LS_OP_MOUNT &&
	   q.arg == 2 && q.tid == 7 && q.len[0] == 4 &&
	   memcmp(q.field[0], "none", 4) == 0 && q.len[2] == 5 &&
	   memcmp(q.field[2], "tmpfs", 5) == 0 && !q.field[3],
	   "a mount request decodes into views, data absent");
	ok(ls_req_decode(GOLDEN(umount_req), &q) == 0 && q.field[0] &&
	   q.len[0] == 0 && !q.field[2], "an empty field is present, not absent");
	ok(req_round_trip(GOLDEN(mount_req)), "mount: encode(decode(x)) == x");
	ok(req_round_trip(GOLDEN(umount_req)), "umount: encode(decode(x)) == x");
	ok(req_round_trip(GOLDEN(status_req)), "status: encode(decode(x)) == x");
}

/* A golden message with nbytes at `at` replaced. */
struct mutant {
	const char *why;
	size_t at;
	const char *bytes;
	size_t nbytes;
	size_t n;              /* bytes sent; 0: the golden's */
};

static const struct mutant bad_requests[] = {
	{ "one byte", 0, "L", 1, 1 },
	{ "a header one byte short", 0, NULL, 0, 39 },
	{ "a byte over LS_REQUEST_MAX", 0, NULL, 0, LS_REQUEST_MAX + 1 },
	{ "a foreign magic", 0, "LSH2", 4, 0 },
	{ "version 0", 4, "\0", 1, 0 },
	{ "version 2", 4, "\x02", 1, 0 },
	{ "op LS_OP_NONE", 6, "\0", 1, 0 },
	{ "a field longer than what is left", 24, "\x06", 1, 0 },
	{ "fields that stop short of the end", 24, "\x04", 1, 0 },
	{ "a byte after the fields", 0, NULL, 0, sizeof mount_req },
	{ "a length of LS_ABSENT - 1", 28, "\xfe", 1, 0 },
	{ "a length past 4 GiB minus the rest", 16, "\xfc\xff\xff\xff", 4, 0 },
	{ "a NUL inside a field", 41, "\0", 1, 0 },
	{ "a NUL ending a field", 43, "\0", 1, 0 },
};

/* The golden bytes with m applied, in buf; the length to send. */
static size_t mutate(const struct mutant *m, const char *golden, size_t n)
{
	memset(buf, 'x', sizeof buf);
	memcpy(buf, golden, n);
	if (m->bytes)
		memcpy(buf + m->at, m->bytes, m->nbytes);
	return m->n ? m->n : n;
}

static void test_bad_requests(void)
{
	struct ls_req_view q;
	for (size_t i = 0; i < sizeof bad_requests / sizeof *bad_requests; i++) {
		size_t n = mutate(&bad_requests[i], GOLDEN(mount_req));
		ok(ls_req_decode(buf, n, &q) == -EINVAL,
		   "request refused, EINVAL: %s", bad_requests[i].why);
	}
	ok(ls_req_decode(buf, 0, &q) == -EINVAL,
	   "request refused, EINVAL: an empty message");
}

/* A request of fields of these lengths (LS_ABSENT: absent) into buf. */
static size_t request_of(uint32_t l0, uint32_t l1, uint32_t l2, uint32_t l3)
{
	struct ls_request h = { LS_MAGIC, LS_VERSION, LS_OP_MOUNT, 0,
				{ l0, l1, l2, l3 }, 0, 0 };
	size_t n = sizeof h;
	memcpy(buf, &h, sizeof h);
	for (int i = 0; i < LS_NFIELDS; i++)
		if (h.len[i] != LS_ABSENT) {
			memset(buf + n, 'a', h.len[i]);
			n += h.len[i];
		}
	return n;
}

static void test_field_bounds(void)
{
	static char field[LS_FIELD_MAX + 1];
	struct ls_req_view q;
	struct ls_req_out o;
	size_t n = request_of(LS_FIELD_MAX, LS_FIELD_MAX, LS_FIELD_MAX,
			      LS_FIELD_MAX);
	ok(n == LS_REQUEST_MAX && req_round_trip(buf, n),
	   "four fields of LS_FIELD_MAX make LS_REQUEST_MAX, and round trip");
	n = request_of(LS_ABSENT, LS_FIELD_MAX + 1, LS_ABSENT, LS_ABSENT);
	ok(ls_req_decode(buf, n, &q) == -EINVAL,
	   "request refused, EINVAL: a field over LS_FIELD_MAX");

	memset(field, 'a', sizeof field);
	q = (struct ls_req_view){ .op = LS_OP_MOUNT, .field = { field },
				  .len = { LS_FIELD_MAX + 1 } };
	ok(ls_req_encode(&o, &q) == -EINVAL, "no field over LS_FIELD_MAX is sent");
	q.len[0] = LS_FIELD_MAX;
	ok(ls_req_encode(&o, &q) == 0 && o.size == 40 + LS_FIELD_MAX,
	   "a field of LS_FIELD_MAX is sent");
	q = (struct ls_req_view){ .op = LS_OP_MOUNT, .field = { "a\0b" },
				  .len = { 3 } };
	ok(ls_req_encode(&o, &q) == -EINVAL, "no field with a NUL inside is sent");
	q = (struct ls_req_view){ .op = LS_OP_NONE };
	ok(ls_req_encode(&o, &q) == -EINVAL, "no request of LS_OP_NONE is sent");
}

/* A reply as recvmsg would leave it in in: n bytes scattered over the
 * header and text, nfd descriptors in one SCM_RIGHTS, msg_flags flags. */
static void fake_recv(struct ls_rep_in *in, char *text, size_t size,
		      const char *bytes, size_t n, const int *fds, int nfd,
		      int flags)
{
	size_t head = n < sizeof in->h ? n : sizeof in->h;
	size_t rest = n - head < size ? n - head : size;
	ls_rep_expect(in, text, size);
	memcpy(&in->h, bytes, head);
	memcpy(text, bytes + head, rest);
	in->mh.msg_flags = flags | (n > head + rest ? MSG_TRUNC : 0);
	in->mh.msg_controllen = nfd ? CMSG_SPACE(nfd * sizeof(int)) : 0;
	if (nfd) {
		struct cmsghdr *cm = CMSG_FIRSTHDR(&in->mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfd * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfd * sizeof(int));
	}
}

static int decode_golden(const char *bytes, size_t n, uint16_t op,
			 struct ls_rep_view *a)
{
	static struct ls_rep_in in;
	static char text[64];
	fake_recv(&in, text, sizeof text, bytes, n, NULL, 0, 0);
	return ls_rep_decode(&in, n, op, a);
}

static const struct mutant bad_replies[] = {
	{ "8 bytes", 0, NULL, 0, 8 },
	{ "a header one byte short", 0, NULL, 0, 15 },
	{ "a foreign magic", 3, "2", 1, 0 },
	{ "version 2", 4, "\x02", 1, 0 },
	{ "the answer to another op", 6, "\x04", 1, 0 },
	{ "op LS_OP_NONE with no error", 6, "\0", 1, 0 },
	{ "a negative errno", 8, "\xff\xff\xff\xff", 4, 0 },
	{ "an errno over LS_ERRNO_MAX", 8, "\0\x10", 2, 0 },
	{ "text longer than came", 12, "\x04", 1, 0 },
	{ "text shorter than came", 12, "\x02", 1, 0 },
};

static void test_replies(void)
{
	struct ls_rep_view a;
	struct ls_rep_out o;
	size_t n = sizeof pivot_rep - 1;
	ok(decode_golden(pivot_rep, n, LS_OP_PIVOT_ROOT, &a) == 0 &&
	   a.op == LS_OP_PIVOT_ROOT && a.error == 0 && a.len == 3 &&
	   memcmp(a.text, "cwd", 3) == 0 && a.fd == -1,
	   "a pivot_root reply decodes: text, no descriptor");
	ok(ls_rep_encode(&o, &a) == 0 && flatten(&o.mh) == n &&
	   memcmp(buf, pivot_rep, n) == 0 && o.mh.msg_controllen == 0,
	   "reply: encode(decode(x)) == x");
	for (size_t i = 0; i < sizeof bad_replies / sizeof *bad_replies; i++) {
		size_t k = mutate(&bad_replies[i], pivot_rep, n);
		ok(decode_golden(buf, k, LS_OP_PIVOT_ROOT, &a) == -EIO,
		   "reply refused, EIO: %s", bad_replies[i].why);
	}
	ok(decode_golden(pivot_rep, 0, LS_OP_PIVOT_ROOT, &a) == -EIO,
	   "reply refused, EIO: an empty message");
	memcpy(buf, "LSH1\x01\0\0\0\x16\0\0\0\0\0\0\0", 16);  /* op 0, EINVAL */
	ok(decode_golden(buf, 16, LS_OP_MOUNT, &a) == 0 && a.op == 0 &&
	   a.error == EINVAL, "op 0 with EINVAL answers any request");
	memcpy(buf, "LSH1\x01\0\x01\0\xff\x0f\0\0\0\0\0\0", 16);
	ok(decode_golden(buf, 16, LS_OP_MOUNT, &a) == 0 && a.error == 4095,
	   "an errno of LS_ERRNO_MAX passes");
}

static void test_reply_bounds(void)
{
	static struct ls_rep_in in;
	struct ls_rep_view a = { .op = LS_OP_STATUS, .text = buf,
				 .len = LS_TEXT_MAX, .fd = -1 };
	struct ls_rep_out o;
	char text[4];
	ok(ls_rep_encode(&o, &a) == 0, "a text of LS_TEXT_MAX is sent");
	a.len++;
	ok(ls_rep_encode(&o, &a) == -EINVAL, "no text over LS_TEXT_MAX is sent");
	a = (struct ls_rep_view){ .op = LS_OP_MOUNT, .error = -1, .fd = -1 };
	ok(ls_rep_encode(&o, &a) == -EINVAL, "no negative errno is sent");
	a = (struct ls_rep_view){ .op = LS_OP_NONE, .fd = -1 };
	ok(ls_rep_encode(&o, &a) == -EINVAL, "no op 0 without EINVAL is sent");

	memcpy(buf, "LSH1\x01\0\x05\0\0\0\0\0", 12);
	memcpy(buf + 12, &(uint32_t){ LS_TEXT_MAX }, 4);
	fake_recv(&in, text, sizeof text, buf, LS_REPLY_MAX, NULL, 0, 0);
	ok(ls_rep_decode(&in, LS_REPLY_MAX, LS_OP_STATUS, &a) == 0 &&
	   a.len == sizeof text && a.text == text,
	   "LS_REPLY_MAX passes, its text cut to the buffer");
	memcpy(buf + 12, &(uint32_t){ LS_TEXT_MAX + 1 }, 4);
	fake_recv(&in, text, sizeof text, buf, LS_REPLY_MAX + 1, NULL, 0, 0);
	ok(ls_rep_decode(&in, LS_REPLY_MAX + 1, LS_OP_STATUS, &a) == -EIO,
	   "reply refused, EIO: a byte over LS_REPLY_MAX");
}

static void test_reply_fds(void)
{
	static struct ls_rep_in in;
	static const int two[] = { 40, 41 };
	struct ls_rep_view a;
	char text[8];
	size_t n = sizeof pivot_rep - 1;
	fake_recv(&in, text, sizeof text, pivot_rep, n, two, 1, 0);
	ok(ls_rep_decode(&in, n, LS_OP_PIVOT_ROOT, &a) == 0 && a.fd == 40 &&
	   in.nfd == 1, "one descriptor rides along");
	fake_recv(&in, text, sizeof text, pivot_rep, n, two, 2, 0);
	ok(ls_rep_decode(&in, n, LS_OP_PIVOT_ROOT, &a) == -EIO && a.fd == -1 &&
	   in.nfd == 2 && in.fds[0] == 40 && in.fds[1] == 41,
	   "reply refused, EIO: two descriptors, both listed to close");
	fake_recv(&in, text, sizeof text, pivot_rep, n, two, 1, MSG_CTRUNC);
	ok(ls_rep_decode(&in, n, LS_OP_PIVOT_ROOT, &a) == -EIO && in.nfd == 1,
	   "reply refused, EIO: more descriptors than the room (MSG_CTRUNC)");
	fake_recv(&in, text, sizeof text, pivot_rep, n, two, 1, 0);
	CMSG_FIRSTHDR(&in.mh)->cmsg_type = SCM_CREDENTIALS;
	ok(ls_rep_decode(&in, n, LS_OP_PIVOT_ROOT, &a) == -EIO && in.nfd == 0,
	   "reply refused, EIO: control data that is not SCM_RIGHTS");
	fake_recv(&in, text, sizeof text, pivot_rep, n - 1, two, 1, 0);
	ok(ls_rep_decode(&in, n - 1, LS_OP_PIVOT_ROOT, &a) == -EIO &&
	   in.nfd == 1 && in.fds[0] == 40,
	   "a malformed reply still lists its descriptor to close");
}

int main(void)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	printf("1..0 # SKIP the golden bytes are little-endian\n");
	return 0;
#endif
	test_requests();
	test_bad_requests();
	test_field_bounds();
	test_replies();
	test_reply_bounds();
	test_reply_fds();
	return tap_done();
}
