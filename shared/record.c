/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "record.h"

/* Records bigger than this are corrupt, not real: a record is < 1 KiB. */
#define RECORD_MAX (64 * 1024)

struct recorder {
	int fd;
	char *path;
	uint64_t size, max;
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

static int open_append(struct recorder *r)
{
	struct stat st;

	r->fd = open(r->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (r->fd < 0)
		return negative_errno();
	r->size = fstat(r->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	return 0;
}

int recorder_open(struct recorder **ret, const char *path, uint64_t max_bytes)
{
	struct recorder *r = calloc(1, sizeof(*r));
	int e;

	if (!r)
		return -ENOMEM;
	r->path = strdup(path);
	r->max = max_bytes;
	e = r->path ? open_append(r) : -ENOMEM;
	if (e < 0) {
		free(r->path);
		free(r);
		return e;
	}
	*ret = r;
	return 0;
}

struct recorder *recorder_close(struct recorder *r)
{
	if (r) {
		if (r->fd >= 0)
			close(r->fd);
		free(r->path);
		free(r);
	}
	return NULL;
}

/* The file is full: it becomes PATH.1, and a fresh one takes its place. */
static int rotate(struct recorder *r)
{
	_cleanup_free_ char *old = NULL;

	if (asprintf(&old, "%s.1", r->path) < 0)
		return -ENOMEM;
	if (rename(r->path, old) < 0)
		return negative_errno();
	close(r->fd);
	r->fd = -1;
	return open_append(r);
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
	if (r->fd < 0 || (r->size && r->size + h + n > r->max)) {
		/* A failed reopen is retried with the next record. */
		int e = r->fd < 0 ? open_append(r) : rotate(r);

		if (e < 0)
			return e;
	}
	/* One write: with O_APPEND a record is never interleaved or split by
	 * a reader looking at the file meanwhile. */
	l = write(r->fd, buf, h + n);
	if (l < 0)
		return negative_errno();
	r->size += (uint64_t)l;
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
