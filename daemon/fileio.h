/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whole small files: the configuration and the state files. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The whole file at path, NUL-terminated (*ret_len excludes the NUL).
 * open_flags are added to O_RDONLY|O_CLOEXEC|O_NOCTTY|O_NONBLOCK (a FIFO in
 * place of the file must not hang the daemon). -ENOENT when missing,
 * -EINVAL when not a regular file, -EFBIG when larger than max bytes,
 * other -errno from the system.
 */
int read_full_file(const char *path, int open_flags, size_t max, char **ret, size_t *ret_len);

/*
 * The same for a kernel's virtual file (procfs, cgroupfs), whose size says
 * nothing: read until end of file, -EFBIG past max bytes.
 */
int read_virtual_file(const char *path, size_t max, char **ret, size_t *ret_len);

/* Atomic replace of path with data: temp file in the same directory,
 * fsync, rename, fsync of the directory. Mode 0600. */
int write_file_atomic(const char *path, const uint8_t *data, size_t len);

/* write_file_atomic()'s flags. */
enum {
	WRITE_FILE_SYNC = 1 << 0,	/* fsync the file and the directory: it must survive a crash */
};
/* The same with the file's mode (set as given, whatever the umask) and
 * WRITE_FILE_* flags: without WRITE_FILE_SYNC, readers still never see a
 * partial file, but a crash may leave the old one or none. The temp file
 * is path.tmp.PID. */
int write_file_atomic_full(const char *path, const uint8_t *data, size_t len, mode_t mode, unsigned flags);
