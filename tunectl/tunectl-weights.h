/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tunectl's weights: the table and JSON of Device.GetShares, pure. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One cgroup sharing a disk (BUS_SHARE_ROW). */
struct tf_share {
	const char *cgroup;
	uint32_t weight;
	bool weighted;			/* set for it, else the default */
	double share;			/* 0-1 */
	double read_iops, write_iops, read_bps, write_bps;
	uint64_t read_p99_ns, write_p99_ns;	/* 0: none */
	uint64_t limit_read_iops, limit_write_iops, limit_read_bps, limit_write_bps;	/* 0: none */
};

/* A header and one row per cgroup (control characters in a cgroup's
 * name escaped). */
void tf_shares_print(FILE *f, const char *device, const struct tf_share *s, size_t n);
/* One JSON line: {"device": ..., "cgroups": [...]}; 0 or -errno. */
int tf_shares_json(FILE *f, const char *device, const struct tf_share *s, size_t n);
