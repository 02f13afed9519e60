/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal to state.c and originals.c (state.h is the API): the limits of
 * what a state file may hold, one table of entries keyed by a device's
 * stable id for both, and the read of a whole file.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#include "state.h"

/* A state file is a few KiB; anything much bigger is not ours. */
#define STATE_FILE_MAX (4 * 1024 * 1024)
#define STATE_DEVICES_MAX 4096
/* Weights and limited cgroups kept: as many as the observer accounts per
 * device, for every device. */
#define STATE_CGROUPS_MAX (4096 * 4)

/* A table is an array of n entries of `size` bytes, each starting with
 * three owned strings, the first the device's stable id. */
void *state_table_find(void *v, size_t n, size_t size, const char *id);
/* Insert or replace by id, copying the entry and its strings ("" stored as
 * NULL). *v may move. */
int state_table_put(void **v, size_t *n, size_t size, const void *e);
void state_table_remove(void *v, size_t *n, size_t size, const char *id);
void state_table_done(void **v, size_t *n, size_t size);

/* The whole file, or *ret NULL if there is none (both 0); what is not a
 * small regular file is not ours (-EBADMSG). */
int state_read_file(const char *path, uint8_t **ret, size_t *ret_len);
/* A message, packed into a new buffer. */
int state_pack(const ProtobufCMessage *m, uint8_t **ret, size_t *ret_len);
