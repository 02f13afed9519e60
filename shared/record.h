/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The flight recorder: one length-delimited kybertune.IntervalRecord
 * (proto/kyber_tuned.proto) per interval and device, appended to a file.
 * The reader is pure (a buffer in, records out) so it can be fuzzed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kyber_tuned.pb-c.h"

struct recorder;

/* The flight record's default size cap, bytes: about four days of one
 * device at 1 s intervals (records are ~200 bytes). */
#define RECORD_FILE_MAX_DEFAULT (64ull << 20)

/*
 * Opens (creating, appending) with O_CLOEXEC; mode 0640. The file grows to
 * max_bytes at most: the record that would take it past is written to a
 * fresh file after the full one is renamed to PATH.1 (replacing an older
 * PATH.1), so the record takes at most twice max_bytes on disk, and the
 * newest intervals are always kept.
 */
int recorder_open(struct recorder **ret, const char *path, uint64_t max_bytes);
struct recorder *recorder_close(struct recorder *r);
/* Appends one record; the write is a single write(2) of length + bytes. */
int recorder_append(struct recorder *r, const Kybertune__IntervalRecord *rec);

/*
 * Decode the record at *offset of buf (len bytes). On success returns 1,
 * sets *ret (free with kybertune__interval_record__free_unpacked(*ret,
 * NULL)) and advances *offset; returns 0 at the clean end of the buffer;
 * -EBADMSG for a truncated or corrupt record (offset not advanced).
 */
int record_next(const uint8_t *buf, size_t len, size_t *offset, Kybertune__IntervalRecord **ret);

/* Varint helpers, shared with the state store. */
size_t varint_encode(uint64_t v, uint8_t out[10]);
/* Returns bytes consumed, 0 if truncated or longer than 10 bytes. */
size_t varint_decode(const uint8_t *buf, size_t len, uint64_t *ret);
