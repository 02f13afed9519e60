/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "kyber-sysfs.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"

#define SYSFS_VALUE_MAX 4096

bool blockdev_name_valid(const char *name)
{
	size_t n;

	if (!name)
		return false;
	n = strlen(name);
	if (n == 0 || n >= 64 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (const char *p = name; *p; p++)
		if (*p == '/' || !isgraph((unsigned char)*p))
			return false;
	return true;
}

int sched_parse(const char *content, struct sched_info *out)
{
	const char *p = content;
	bool have_current = false;

	memset(out, 0, sizeof(*out));
	for (;;) {
		const char *start, *end;
		bool current = false;
		size_t len;

		while (*p == ' ' || *p == '\n' || *p == '\t')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != ' ' && *p != '\n' && *p != '\t')
			p++;
		end = p;
		if (*start == '[') {
			if (end - start < 3 || end[-1] != ']')
				return -EBADMSG;
			start++;
			end--;
			current = true;
		}
		len = (size_t)(end - start);
		if (len == 0 || len >= SCHED_NAME_MAX)
			return -EBADMSG;
		for (const char *c = start; c < end; c++)
			if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
				return -EBADMSG;
		if (current) {
			if (have_current)
				return -EBADMSG;
			memcpy(out->current, start, len);
			have_current = true;
		}
		if (out->n_available < SCHED_LIST_MAX)
			memcpy(out->available[out->n_available++], start, len);
	}
	return have_current ? 0 : -EBADMSG;
}

bool sched_info_has(const struct sched_info *s, const char *name)
{
	for (unsigned i = 0; i < s->n_available; i++)
		if (strcmp(s->available[i], name) == 0)
			return true;
	return false;
}

int kyber_target_parse(const char *content, uint64_t *ret)
{
	return parse_u64_strict(content, true, ret) < 0 ? -EBADMSG : 0;
}

int kyber_target_validate(uint64_t ns)
{
	return ns >= KYBER_TARGET_MIN_NS && ns <= KYBER_TARGET_MAX_NS ? 0 : -ERANGE;
}

static int read_small(const char *path, char *buf, size_t n)
{
	_cleanup_close_ int fd = -1;
	ssize_t l;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	l = read(fd, buf, n - 1);
	if (l < 0)
		return negative_errno();
	buf[l] = 0;
	return 0;
}

static int write_small(const char *path, const char *value)
{
	_cleanup_close_ int fd = -1;
	size_t n = strlen(value);
	ssize_t l;

	/* O_TRUNC: what a shell redirect does; needed for the fake tree in tests. */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	l = write(fd, value, n);
	if (l < 0)
		return negative_errno();
	if ((size_t)l != n)
		return -EIO;
	return 0;
}

static int queue_path(char *buf, size_t n, const char *root, const char *dev, const char *file)
{
	if (!blockdev_name_valid(dev))
		return -EINVAL;
	if ((size_t)snprintf(buf, n, "%s/block/%s/queue/%s", root, dev, file) >= n)
		return -ENAMETOOLONG;
	return 0;
}

int kyber_sysfs_read_scheduler(const char *root, const char *dev, struct sched_info *out)
{
	char path[512], buf[SYSFS_VALUE_MAX];
	int r;

	r = queue_path(path, sizeof(path), root, dev, "scheduler");
	if (r < 0)
		return r;
	r = read_small(path, buf, sizeof(buf));
	if (r < 0)
		return log_debug_errno(r, "Failed to read %s: %m", path);
	r = sched_parse(buf, out);
	if (r < 0)
		return log_debug_errno(r, "Unexpected content in %s: %m", path);
	return 0;
}

int kyber_sysfs_set_scheduler(const char *root, const char *dev, const char *name)
{
	char path[512];
	int r;

	r = queue_path(path, sizeof(path), root, dev, "scheduler");
	if (r < 0)
		return r;
	r = write_small(path, name);
	if (r < 0)
		return log_debug_errno(r, "Failed to write '%s' to %s: %m", name, path);
	return 0;
}

static int read_target(const char *root, const char *dev, const char *file, uint64_t *ret)
{
	char path[512], buf[SYSFS_VALUE_MAX];
	int r;

	r = queue_path(path, sizeof(path), root, dev, file);
	if (r < 0)
		return r;
	r = read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r;	/* ENOENT: not on Kyber */
	r = kyber_target_parse(buf, ret);
	if (r < 0)
		return log_debug_errno(r, "Unexpected content in %s: %m", path);
	return 0;
}

int kyber_sysfs_read_targets(const char *root, const char *dev, struct kyber_targets *out)
{
	int r;

	r = read_target(root, dev, "iosched/read_lat_nsec", &out->read_ns);
	if (r < 0)
		return r;
	return read_target(root, dev, "iosched/write_lat_nsec", &out->write_ns);
}

/* No range check: restoring an admin's value is not ours to judge. */
static int write_target_raw(const char *root, const char *dev, const char *file, uint64_t ns)
{
	char path[512], value[32];
	int r;

	r = queue_path(path, sizeof(path), root, dev, file);
	if (r < 0)
		return r;
	snprintf(value, sizeof(value), "%llu", (unsigned long long)ns);
	r = write_small(path, value);
	if (r < 0)
		return log_debug_errno(r, "Failed to write %s to %s: %m", value, path);
	return 0;
}

int kyber_sysfs_write_targets(const char *root, const char *dev, const struct kyber_targets *t)
{
	int r;

	/* Validate both before writing either: all or nothing on bad input. */
	if (kyber_target_validate(t->read_ns) < 0 || kyber_target_validate(t->write_ns) < 0)
		return -ERANGE;
	r = write_target_raw(root, dev, "iosched/read_lat_nsec", t->read_ns);
	if (r < 0)
		return r;
	return write_target_raw(root, dev, "iosched/write_lat_nsec", t->write_ns);
}

int kyber_sysfs_save(const char *root, const char *dev, struct kyber_saved *out)
{
	struct sched_info si;
	int r;

	memset(out, 0, sizeof(*out));
	r = kyber_sysfs_read_scheduler(root, dev, &si);
	if (r < 0)
		return r;
	memcpy(out->scheduler, si.current, sizeof(out->scheduler));
	out->was_kyber = strcmp(si.current, "kyber") == 0;
	if (out->was_kyber) {
		r = kyber_sysfs_read_targets(root, dev, &out->targets);
		if (r < 0)
			return r;
	}
	return 0;
}

int kyber_sysfs_restore(const char *root, const char *dev, const struct kyber_saved *s)
{
	struct sched_info si;
	struct kyber_targets cur;
	int r;

	r = kyber_sysfs_read_scheduler(root, dev, &si);
	if (r < 0)
		return r;
	if (strcmp(si.current, s->scheduler) != 0) {
		r = kyber_sysfs_set_scheduler(root, dev, s->scheduler);
		if (r < 0)
			return r;
	}
	if (!s->was_kyber)
		return 0;
	r = kyber_sysfs_read_targets(root, dev, &cur);
	if (r < 0)
		return r;
	if (cur.read_ns != s->targets.read_ns) {
		r = write_target_raw(root, dev, "iosched/read_lat_nsec", s->targets.read_ns);
		if (r < 0)
			return r;
	}
	if (cur.write_ns != s->targets.write_ns)
		return write_target_raw(root, dev, "iosched/write_lat_nsec", s->targets.write_ns);
	return 0;
}

int kyber_debugfs_read_depth(const char *debugfs_root, const char *dev, const char *domain,
			     unsigned *ret)
{
	char path[512], buf[SYSFS_VALUE_MAX], num[24];
	const char *p;
	uint64_t v;
	size_t n;
	int r;

	if (!blockdev_name_valid(dev))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/block/%s/sched/%s_tokens", debugfs_root, dev, domain);
	r = read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	/* sbitmap_queue_show(): "depth=256\n..." */
	p = strstr(buf, "depth=");
	if (!p)
		return -EBADMSG;
	p += strlen("depth=");
	n = strspn(p, "0123456789");
	if (n == 0 || n >= sizeof(num))
		return -EBADMSG;
	memcpy(num, p, n);
	num[n] = 0;
	if (parse_u64_strict(num, false, &v) < 0 || v > UINT32_MAX)
		return -EBADMSG;
	*ret = (unsigned)v;
	return 0;
}
