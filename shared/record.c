/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "record.h"

/* Records bigger than this are corrupt, not real: a record is < 1 KiB. */
#define RECORD_MAX (64 * 1024)

struct recorder {
	int fd;
};

size_t varint_encode(uint64_t v, uint8_t out[10])
{
	size_t n = 0;

	do {
		out[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			out[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

size_t varint_decode(const uint8_t *buf, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	for (size_t i = 0; i < len && i < 10; i++) {
		v |= (uint64_t)(buf[i] & 0x7f) << (7 * i);
		if (!(buf[i] & 0x80)) {
			*ret = v;
			return i + 1;
		}
	}
	return 0;
}

int recorder_open(struct recorder **ret, const char *path)
{
	struct recorder *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (r->fd < 0) {
		int e = negative_errno();

		free(r);
		return e;
	}
	*ret = r;
	return 0;
}

struct recorder *recorder_close(struct recorder *r)
{
	if (r) {
		close(r->fd);
		free(r);
	}
	return NULL;
}

int recorder_append(struct recorder *r, const Kybertune__IntervalRecord *rec)
{
	size_t n = kybertune__interval_record__get_packed_size(rec), h;
	_cleanup_free_ uint8_t *buf = NULL;
	ssize_t l;

	if (n > RECORD_MAX)
		return -E2BIG;
	buf = malloc(n + 10);
	if (!buf)
		return -ENOMEM;
	h = varint_encode(n, buf);
	kybertune__interval_record__pack(rec, buf + h);
	/* One write: with O_APPEND a record is never interleaved or split by
	 * a reader looking at the file meanwhile. */
	l = write(r->fd, buf, h + n);
	if (l < 0)
		return negative_errno();
	return (size_t)l == h + n ? 0 : -EIO;
}

int record_next(const uint8_t *buf, size_t len, size_t *offset, Kybertune__IntervalRecord **ret)
{
	size_t off = *offset, h;
	uint64_t n;

	if (off >= len)
		return 0;
	h = varint_decode(buf + off, len - off, &n);
	if (!h || n > RECORD_MAX || n > len - off - h)
		return -EBADMSG;
	*ret = kybertune__interval_record__unpack(NULL, (size_t)n, buf + off + h);
	if (!*ret)
		return -EBADMSG;
	*offset = off + h + (size_t)n;
	return 1;
}
