/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One cgroup's I/O limits on one disk, in the io controller's hierarchy (cgroup-io.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-io.h"
#include "fileio.h"
#include "macro.h"

/* Limit files and mountinfo are small; anything larger is not them. */
#define CGROUP_FILE_MAX (256 * 1024)
/* Levels of cgroups walked to find an id: deeper trees are unusual. */
#define CGROUP_WALK_DEPTH 16

void cgroup_hierarchy_at(struct cgroup_hierarchy *h, enum cgroup_version v, const char *root)
{
	h->version = v;
	snprintf(h->root, sizeof(h->root), "%s", root);
}

/* cgroup2 serves I/O limits only where its root offers the io controller. */
static bool v2_has_io(const char *root)
{
	_cleanup_free_ char *s = NULL, *path = NULL;
	size_t len;

	if (asprintf(&path, "%s/cgroup.controllers", root) < 0 ||
	    read_virtual_file(path, CGROUP_FILE_MAX, &s, &len) < 0)
		return false;
	for (char *tok = strtok(s, " \n"); tok; tok = strtok(NULL, " \n"))
		if (strcmp(tok, "io") == 0)
			return true;
	return false;
}

int cgroup_hierarchy_find(struct cgroup_hierarchy *h, const char *mountinfo, char *why, size_t n)
{
	_cleanup_free_ char *s = NULL;
	char v2_root[PATH_MAX] = "";
	size_t len;
	int r;

	r = read_virtual_file(mountinfo, CGROUP_FILE_MAX * 16, &s, &len);
	if (r < 0) {
		snprintf(why, n, "cannot read %s: %s", mountinfo, strerror(-r));
		return r;
	}
	for (char *line = s, *next; line && *line; line = next) {
		char mnt[PATH_MAX];
		enum cgroup_version v;
		bool blkio;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (cgroup_parse_mountinfo_line(line, mnt, sizeof(mnt), &v, &blkio) < 0)
			continue;
		if (v == CGROUP_V1 && blkio) {
			cgroup_hierarchy_at(h, CGROUP_V1, mnt);
			return 0;
		}
		if (v == CGROUP_V2 && !v2_root[0])
			snprintf(v2_root, sizeof(v2_root), "%s", mnt);
	}
	if (v2_root[0] && v2_has_io(v2_root)) {
		cgroup_hierarchy_at(h, CGROUP_V2, v2_root);
		return 0;
	}
	snprintf(why, n, "no cgroup hierarchy has the io (blkio) controller%s%s",
		 v2_root[0] ? ": not in the cgroup.controllers of " : "", v2_root);
	return -ENOENT;
}

static char *path_in(const struct cgroup_hierarchy *h, const char *cgroup, const char *file)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s%s%s", h->root, cgroup, file ? "/" : "", file ? file : "") < 0)
		return NULL;
	return p;
}

bool cgroup_exists(const struct cgroup_hierarchy *h, const char *cgroup)
{
	_cleanup_free_ char *p = path_in(h, cgroup, NULL);
	struct stat st;

	return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int read_file_in(const struct cgroup_hierarchy *h, const char *cgroup, const char *file, char **ret)
{
	_cleanup_free_ char *p = path_in(h, cgroup, file);
	size_t len;

	if (!p)
		return -ENOMEM;
	return read_virtual_file(p, CGROUP_FILE_MAX, ret, &len);
}

/* One write, as the kernel parses it: a whole line at once. */
static int write_file_in(const struct cgroup_hierarchy *h, const char *cgroup, const char *file,
			 const char *text)
{
	_cleanup_free_ char *p = path_in(h, cgroup, file);
	size_t len = strlen(text);
	ssize_t w;
	int fd;

	if (!p)
		return -ENOMEM;
	fd = open(p, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	w = write(fd, text, len);
	if (w < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	close(fd);
	return (size_t)w == len ? 0 : -EIO;
}

int cgroup_limits_read(const struct cgroup_hierarchy *h, const char *cgroup, uint32_t major, uint32_t minor,
		       struct cgroup_limits *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!cgroup_exists(h, cgroup))
		return -ENOENT;
	if (h->version == CGROUP_V2) {
		_cleanup_free_ char *s = NULL;
		int r = read_file_in(h, cgroup, "io.max", &s);

		return r < 0 ? r : cgroup_v2_max_parse(s, major, minor, ret);
	}
	for (unsigned k = 0; k < _CGROUP_LIMIT_MAX; k++) {
		_cleanup_free_ char *s = NULL;
		int r = read_file_in(h, cgroup, cgroup_v1_limit_file(k), &s);

		if (r < 0)
			return r;
		r = cgroup_v1_limit_parse(s, major, minor, cgroup_limit_field(ret, k));
		if (r < 0)
			return r;
	}
	return 0;
}

int cgroup_limits_write(const struct cgroup_hierarchy *h, const char *cgroup, uint32_t major, uint32_t minor,
			const struct cgroup_limits *cur, const struct cgroup_limits *l)
{
	struct cgroup_limits want = *l, was = cur ? *cur : (struct cgroup_limits){};
	char buf[160];
	int r;

	if (cur && cgroup_limits_equal(cur, l))
		return 0;
	if (h->version == CGROUP_V2) {
		r = cgroup_v2_max_format(buf, sizeof(buf), major, minor, l);
		return r < 0 ? r : write_file_in(h, cgroup, "io.max", buf);
	}
	for (unsigned k = 0; k < _CGROUP_LIMIT_MAX; k++) {
		uint64_t v = *cgroup_limit_field(&want, k);

		if (cur && *cgroup_limit_field(&was, k) == v)
			continue;
		r = cgroup_v1_limit_format(buf, sizeof(buf), major, minor, v);
		if (r < 0)
			return r;
		r = write_file_in(h, cgroup, cgroup_v1_limit_file(k), buf);
		if (r < 0)
			return r;
	}
	return 0;
}

/* kernfs hands out its node's 64-bit id as the file handle of a cgroup
 * directory (FILEID_KERNFS): the id BPF reads from kn->id. */
static int id_at(int dirfd, const char *name, uint64_t *ret)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	int mnt;

	if (name_to_handle_at(dirfd, name, &h.fh, &mnt, 0) < 0)
		return -errno;
	if (h.fh.handle_bytes != sizeof(uint64_t))
		return -EOPNOTSUPP;
	memcpy(ret, h.fh.f_handle, sizeof(*ret));
	return 0;
}

int cgroup_id_of(const struct cgroup_hierarchy *h, const char *cgroup, uint64_t *ret)
{
	_cleanup_free_ char *p = path_in(h, cgroup, NULL);

	return p ? id_at(AT_FDCWD, p, ret) : -ENOMEM;
}

/* Depth-first under dir (path rel below the root) for the cgroup with id. */
static int walk(int dirfd, char *rel, size_t n, uint64_t id, unsigned depth)
{
	DIR *d;
	struct dirent *de;
	size_t len = strlen(rel);
	int r = -ENOENT;

	if (depth > CGROUP_WALK_DEPTH)
		return -ENOENT;
	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return -errno;
	}
	while (r == -ENOENT && (de = readdir(d))) {
		uint64_t this;
		int sub;

		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(rel + len, n - len, "%s%s", len ? "/" : "", de->d_name) >= (int)(n - len))
			continue;
		if (id_at(dirfd, de->d_name, &this) == 0 && this == id)
			r = 0;
		else if ((sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
			r = walk(sub, rel, n, id, depth + 1);
		if (r == -ENOENT)
			rel[len] = 0;
	}
	closedir(d);
	return r;
}

int cgroup_path_of_id(const struct cgroup_hierarchy *h, uint64_t id, char *out, size_t n)
{
	uint64_t root_id;
	int fd;

	if (!n)
		return -ENOBUFS;
	out[0] = 0;
	if (id_at(AT_FDCWD, h->root, &root_id) == 0 && root_id == id)
		return 0;
	fd = open(h->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return walk(fd, out, n, id, 0);
}
