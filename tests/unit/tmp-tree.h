/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files under a unit test's temporary root (a mkdtemp() directory that
 * stands in for sysfs, /etc or the like). Include after cmocka.h.
 */
#pragma once

#include <stdio.h>

/* Writes content to root/rel; the test fails if it cannot. */
static inline void tmp_tree_put(const char *root, const char *rel, const char *content)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
}
