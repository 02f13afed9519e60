/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for the cgroup files kyber-tuned parses
 * (daemon/cgroup-parse.c): a v1 limit file, io.max, a mountinfo line and a
 * cgroup path as a user types it. Besides not crashing: io.max's limits
 * format and parse back to the same values, and a normalized path is one
 * the normalizer keeps as it is.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), mnt[256], buf[256], path[CGROUP_PATH_MAX], again[CGROUP_PATH_MAX];
	struct cgroup_limits l, back;
	enum cgroup_version v;
	const char *why;
	uint64_t value;
	bool blkio;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	(void)cgroup_v1_limit_parse(s, 7, 0, &value);
	(void)cgroup_parse_mountinfo_line(s, mnt, sizeof(mnt), &v, &blkio);
	if (cgroup_v2_max_parse(s, 7, 0, &l) == 0) {
		if (cgroup_v2_max_format(buf, sizeof(buf), 7, 0, &l) < 0 ||
		    cgroup_v2_max_parse(buf, 7, 0, &back) < 0 || !cgroup_limits_equal(&l, &back))
			abort();
	}
	if (cgroup_path_normalize(s, path, sizeof(path), &why) == 0) {
		if (cgroup_path_normalize(path, again, sizeof(again), &why) < 0 || strcmp(path, again) != 0 ||
		    !path[0] || strstr(path, "//"))
			abort();
	}
	free(s);
	return 0;
}
