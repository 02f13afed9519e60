/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup files kyber-tuned reads and writes to limit a cgroup's I/O on
 * one disk, parsed and formatted: where the io controller's hierarchy is
 * mounted (/proc/self/mountinfo), cgroup v1's blkio.throttle.*_device
 * ("MAJ:MIN VALUE" per line), cgroup v2's io.max ("MAJ:MIN rbps=.. wbps=..
 * riops=.. wiops=.."), and the cgroup paths users type. Pure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per-second limits of one cgroup on one disk; 0: none ("max"). */
struct cgroup_limits {
	uint64_t read_iops, write_iops;
	uint64_t read_bps, write_bps;
};

enum cgroup_limit_kind {
	CGROUP_LIMIT_READ_IOPS,
	CGROUP_LIMIT_WRITE_IOPS,
	CGROUP_LIMIT_READ_BPS,
	CGROUP_LIMIT_WRITE_BPS,
	_CGROUP_LIMIT_MAX,
};

uint64_t *cgroup_limit_field(struct cgroup_limits *l, enum cgroup_limit_kind k);
/* cgroup v1's file for one kind: "blkio.throttle.read_iops_device", ... */
const char *cgroup_v1_limit_file(enum cgroup_limit_kind k);
bool cgroup_limits_equal(const struct cgroup_limits *a, const struct cgroup_limits *b);

enum cgroup_version {
	CGROUP_NONE = 0,
	CGROUP_V1 = 1,			/* the blkio controller on its own hierarchy */
	CGROUP_V2 = 2,			/* the unified hierarchy (io controller, if enabled there) */
};

/*
 * One line of /proc/self/mountinfo: a cgroup mount's point (octal escapes
 * undone) and version; for v1, whether the blkio controller is on it.
 * 0 for a cgroup mount, -ENOENT for any other mount, -EINVAL for a line
 * that is not mountinfo's.
 */
int cgroup_parse_mountinfo_line(const char *line, char *mount_point, size_t n, enum cgroup_version *ret,
				bool *blkio);

/* A v1 limit file's value for disk major:minor; 0 (none) when the disk is
 * not listed. -EINVAL on a malformed line. */
int cgroup_v1_limit_parse(const char *content, uint32_t major, uint32_t minor, uint64_t *ret);
/* What to write to a v1 limit file: "MAJ:MIN VALUE" (0 removes the rule). */
int cgroup_v1_limit_format(char *buf, size_t n, uint32_t major, uint32_t minor, uint64_t value);

/* io.max's limits for disk major:minor; all 0 (max) when not listed.
 * -EINVAL on a malformed line. */
int cgroup_v2_max_parse(const char *content, uint32_t major, uint32_t minor, struct cgroup_limits *ret);
/* What to write to io.max: "MAJ:MIN rbps=.. wbps=.. riops=.. wiops=..". */
int cgroup_v2_max_format(char *buf, size_t n, uint32_t major, uint32_t minor, const struct cgroup_limits *l);

/* Longest cgroup path kyber-tuned takes. */
#define CGROUP_PATH_MAX 512
/*
 * A cgroup path as users type it, relative to the controller's hierarchy
 * root ("system.slice/db.service", "tenants/a"; a leading or trailing '/'
 * is dropped), into its canonical form. -EINVAL, with the reason in
 * *why, for: empty (the root), ".", "..", an empty component, a control
 * character or invalid UTF-8; -ENAMETOOLONG past CGROUP_PATH_MAX.
 */
int cgroup_path_normalize(const char *in, char *out, size_t n, const char **why);
