/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What state.c and originals.c share: their tables of entries keyed by a
 * device's stable id, and how a file of either is read. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "macro.h"
#include "state-table.h"

/*
 * Both tables (learned state, originals) are arrays of entries that start
 * with three owned strings, the first the device's stable id: one
 * implementation of find / put / remove for both. The strings are reached
 * as char * objects at the entry's start, never through another struct
 * type.
 */
#define ENTRY_STRINGS 3

static char **entry_strings(void *e)
{
	return (char **)e;
}

static void entry_done(void *e, size_t size)
{
	for (int i = 0; i < ENTRY_STRINGS; i++)
		free(entry_strings(e)[i]);
	memset(e, 0, size);
}

void *state_table_find(void *v, size_t n, size_t size, const char *id)
{
	for (size_t i = 0; i < n; i++) {
		void *e = (char *)v + i * size;

		if (strcmp(entry_strings(e)[0], id) == 0)
			return e;
	}
	return NULL;
}

int state_table_put(void **v, size_t *n, size_t size, const void *e)
{
	_cleanup_free_ void *copy = malloc(size);
	void *slot;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, e, size);
	for (int i = 0; i < ENTRY_STRINGS; i++) {
		const char *str = entry_strings((void *)e)[i];

		entry_strings(copy)[i] = str && *str ? strdup(str) : NULL;
		if (str && *str && !entry_strings(copy)[i]) {
			entry_done(copy, size);
			return -ENOMEM;
		}
	}
	slot = state_table_find(*v, *n, size, entry_strings(copy)[0]);
	if (!slot) {
		void *grown = realloc(*v, (*n + 1) * size);

		if (!grown) {
			entry_done(copy, size);
			return -ENOMEM;
		}
		*v = grown;
		slot = (char *)grown + (*n)++ * size;
	} else
		entry_done(slot, size);
	memcpy(slot, copy, size);
	return 0;
}

void state_table_remove(void *v, size_t *n, size_t size, const char *id)
{
	void *e = state_table_find(v, *n, size, id);

	if (!e)
		return;
	entry_done(e, size);
	(*n)--;
	if (e != (char *)v + *n * size)
		memcpy(e, (char *)v + *n * size, size);
}

void state_table_done(void **v, size_t *n, size_t size)
{
	for (size_t i = 0; i < *n; i++)
		entry_done((char *)*v + i * size, size);
	free(*v);
	*v = NULL;
	*n = 0;
}

int state_read_file(const char *path, uint8_t **ret, size_t *ret_len)
{
	int r = read_full_file(path, O_NOFOLLOW, STATE_FILE_MAX, (char **)ret, ret_len);

	if (r == -ENOENT) {
		*ret = NULL;
		*ret_len = 0;
		return 0;
	}
	return r == -EINVAL || r == -EFBIG ? -EBADMSG : r;
}

int state_pack(const ProtobufCMessage *m, uint8_t **ret, size_t *ret_len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n ? n : 1);

	if (!buf)
		return -ENOMEM;
	protobuf_c_message_pack(m, buf);
	*ret = buf;
	*ret_len = n;
	return 0;
}
