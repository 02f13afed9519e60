/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

int read_full_file(const char *path, int open_flags, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t n = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | open_flags);
	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	/* The file may change under us: never read past the buffer. */
	while (n < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + n, (size_t)st.st_size - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return negative_errno();
		if (k == 0)
			break;
		n += (size_t)k;
	}
	buf[n] = 0;
	*ret = TAKE_PTR(buf);
	*ret_len = n;
	return 0;
}

int read_virtual_file(const char *path, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t n = 0, cap = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return negative_errno();
	for (;;) {
		ssize_t k;

		if (n + 1 >= cap) {
			char *grown;

			if (cap > max)
				return -EFBIG;
			cap = cap ? cap * 2 : 4096;
			grown = realloc(buf, cap);
			if (!grown)
				return -ENOMEM;
			buf = grown;
		}
		k = read(fd, buf + n, cap - n - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return negative_errno();
		if (k == 0)
			break;
		n += (size_t)k;
	}
	if (n > max)
		return -EFBIG;
	buf[n] = 0;
	*ret = TAKE_PTR(buf);
	*ret_len = n;
	return 0;
}

int write_file_atomic_full(const char *path, const uint8_t *data, size_t len, mode_t mode, unsigned flags)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	_cleanup_close_ int fd = -1, dfd = -1;
	size_t off = 0;
	int r;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return negative_errno();
	/* open() applied the umask: readers named by mode must be able to read. */
	if (fchmod(fd, mode) < 0) {
		r = negative_errno();
		goto fail;
	}
	while (off < len) {
		ssize_t l = write(fd, data + off, len - off);

		if (l < 0) {
			r = negative_errno();
			goto fail;
		}
		off += (size_t)l;
	}
	if (((flags & WRITE_FILE_SYNC) && fsync(fd) < 0) || rename(tmp, path) < 0) {
		r = negative_errno();
		goto fail;
	}
	if (!(flags & WRITE_FILE_SYNC))
		return 0;
	/* The rename itself must be on disk too. */
	snprintf(dir, sizeof(dir), "%s", path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return 0;
fail:
	(void)unlink(tmp);
	return r;
}

int write_file_atomic(const char *path, const uint8_t *data, size_t len)
{
	return write_file_atomic_full(path, data, len, 0600, WRITE_FILE_SYNC);
}
