/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The profile directories, read at start: every NAME.profile of them, in
 * the order of NAME; one in an earlier directory (/etc) masks the one of
 * the same name in a later one (/usr/lib), as systemd's configuration
 * directories do. A file that cannot be read or parsed is skipped with a
 * warning naming it and the problem; the others still count.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "profile-dirs.h"

#define PROFILE_SUFFIX ".profile"

struct entry {
	char *name;
	const char *dir;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static bool is_profile_name(const char *n)
{
	size_t l = strlen(n), s = strlen(PROFILE_SUFFIX);

	return n[0] != '.' && l > s && strcmp(n + l - s, PROFILE_SUFFIX) == 0;
}

static bool seen(const struct entry *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return true;
	return false;
}

/* Adds dir's profile files not masked by an earlier directory. */
static int list_dir(const char *dir, struct entry **v, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d) {
		if (errno != ENOENT)
			log_warning_errno(negative_errno(), "Failed to open the profile directory %s: %m", dir);
		return 0;
	}
	while (r == 0 && (de = readdir(d))) {
		struct entry *nv;

		if (!is_profile_name(de->d_name) || seen(*v, *n, de->d_name))
			continue;
		nv = reallocarray(*v, *n + 1, sizeof(**v));
		if (!nv) {
			r = -ENOMEM;
			break;
		}
		*v = nv;
		nv[*n] = (struct entry) { .name = strdup(de->d_name), .dir = dir };
		if (!nv[*n].name)
			r = -ENOMEM;
		else
			(*n)++;
	}
	closedir(d);
	return r;
}

static void load_one(const struct entry *e, struct profiles *out)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX], why[160];
	size_t len;
	int r;

	snprintf(path, sizeof(path), "%s/%s", e->dir, e->name);
	r = read_full_file(path, 0, PROFILE_FILE_MAX, &text, &len);
	if (r < 0) {
		log_warning_errno(r, "Failed to read the profile %s (skipped): %m", path);
		return;
	}
	r = profiles_parse(text, len, out, why, sizeof(why));
	if (r < 0)
		log_warning("Skipping the profile %s: %s", path, why);
}

int profiles_load(const char *const *dirs, size_t n_dirs, struct profiles *out)
{
	struct entry *v = NULL;
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; i < n_dirs && r >= 0; i++)
		r = list_dir(dirs[i], &v, &n);
	if (r >= 0 && n) {
		qsort(v, n, sizeof(*v), cmp_entry);
		for (size_t i = 0; i < n; i++)
			load_one(&v[i], out);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return r < 0 ? log_oom() : (int)out->n;
}
