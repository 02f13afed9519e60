/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The io controller's hierarchy on this machine, and one cgroup's I/O
 * limits on one disk in it: cgroup v1's blkio.throttle.*_device where the
 * blkio controller has a hierarchy of its own, else cgroup v2's io.max.
 * Cgroups are named by their path relative to the hierarchy's root.
 */
#pragma once

#include <limits.h>
#include <stdint.h>

#include "cgroup-parse.h"

struct cgroup_hierarchy {
	enum cgroup_version version;
	char root[PATH_MAX];		/* its mount point */
};

/*
 * Find it from mountinfo (/proc/self/mountinfo): a v1 mount with blkio,
 * else a cgroup2 mount whose root lists "io" in cgroup.controllers.
 * -ENOENT, with a sentence in why, when there is none.
 */
int cgroup_hierarchy_find(struct cgroup_hierarchy *h, const char *mountinfo, char *why, size_t n);
/* A hierarchy rooted at root (tests: a fake tree). */
void cgroup_hierarchy_at(struct cgroup_hierarchy *h, enum cgroup_version v, const char *root);

/* Does the cgroup exist (a directory under the root)? */
bool cgroup_exists(const struct cgroup_hierarchy *h, const char *cgroup);
/*
 * The cgroup's limits on disk major:minor, read and written. -ENOENT when
 * the cgroup does not exist or (v2) the io controller is not enabled for
 * it; -EINVAL when a file does not parse; other -errno from the system.
 * A write changes only the files whose value differs from cur (NULL:
 * write all).
 */
int cgroup_limits_read(const struct cgroup_hierarchy *h, const char *cgroup, uint32_t major, uint32_t minor,
		       struct cgroup_limits *ret);
int cgroup_limits_write(const struct cgroup_hierarchy *h, const char *cgroup, uint32_t major, uint32_t minor,
			const struct cgroup_limits *cur, const struct cgroup_limits *l);

/* The kernel's id of the cgroup (its kernfs node, as BPF sees it through
 * blkcg->css.cgroup->kn->id). -errno. */
int cgroup_id_of(const struct cgroup_hierarchy *h, const char *cgroup, uint64_t *ret);
/* The path of the cgroup with that id ("" for the root), by a walk of the
 * hierarchy. -ENOENT when none has it (it went away). */
int cgroup_path_of_id(const struct cgroup_hierarchy *h, uint64_t id, char *out, size_t n);
