/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whole small files: the configuration and the state files. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * The whole file at path, NUL-terminated (*ret_len excludes the NUL).
 * open_flags are added to O_RDONLY|O_CLOEXEC|O_NOCTTY|O_NONBLOCK (a FIFO in
 * place of the file must not hang the daemon). -ENOENT when missing,
 * -EINVAL when not a regular file, -EFBIG when larger than max bytes,
 * other -errno from the system.
 */
int read_full_file(const char *path, int open_flags, size_t max, char **ret, size_t *ret_len);

/* Atomic replace of path with data: temp file in the same directory,
 * fsync, rename, fsync of the directory. Mode 0600. */
int write_file_atomic(const char *path, const uint8_t *data, size_t len);
