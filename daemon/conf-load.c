/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loading the configuration: the main file, then every *.conf drop-in in
 * byte order, each parsed by conf.c into the same struct conf (later wins).
 * A missing file or directory is no error, an unreadable one is; a file that
 * is not regular or too big is a warning. Settle= against Interval= is
 * checked here, once every file is read, since either may come from any.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf-internal.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"

/* A configuration file is a few lines; anything this big is a mistake. */
#define CONF_FILE_MAX (1024 * 1024)

/* The whole file, NUL-terminated. 0 and *ret = NULL: nothing to parse
 * (missing; or not a regular file or too big, warned about). */
static int read_file(const char *path, char **ret, size_t *ret_len, struct conf *c)
{
	int r;

	*ret = NULL;
	r = read_full_file(path, 0, CONF_FILE_MAX, ret, ret_len);
	if (r == -ENOENT)
		return 0;
	if (r == -EINVAL || r == -EFBIG) {
		if (r == -EINVAL)
			log_warning("%s: Not a regular file, ignoring.", path);
		else
			log_warning("%s: File too large (more than %d bytes), ignoring.", path, CONF_FILE_MAX);
		c->warnings++;
		return 0;
	}
	if (r < 0)
		return log_error_errno(r, "Failed to read %s: %m", path);
	return 0;
}

static int load_file(struct conf *c, const char *path, struct conf_origin *o)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	r = read_file(path, &text, &len, c);
	if (r < 0 || !text)
		return r;
	log_debug("Reading %s", path);
	return conf_parse_text_origin(c, text, len, path, o);
}

/* Hidden files are editor and package manager leftovers. */
static int dropin_filter(const struct dirent *de)
{
	size_t l = strlen(de->d_name);

	return de->d_name[0] != '.' && l > strlen(".conf") &&
		strcmp(de->d_name + l - strlen(".conf"), ".conf") == 0;
}

/* Byte order, not the locale's (alphasort): the order must not depend on LANG. */
static int dropin_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int load_dropins(struct conf *c, const char *dir, struct conf_origin *o)
{
	struct dirent **list = NULL;
	int n, r = 0;

	n = scandir(dir, &list, dropin_filter, dropin_cmp);
	if (n < 0) {
		if (errno == ENOENT)
			return 0;
		return log_error_errno(negative_errno(), "Failed to read %s: %m", dir);
	}
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *path = NULL;

		if (r >= 0 && asprintf(&path, "%s/%s", dir, list[i]->d_name) < 0)
			r = -ENOMEM;
		if (r >= 0)
			r = load_file(c, path, o);
		free(list[i]);
	}
	free(list);
	return r;
}

/*
 * Settle= must be shorter than Interval=, but either may come from any file:
 * checked once everything is read, and only when both are set here (the
 * command line may override either; the daemon checks what it ends up with).
 */
static void check_settle(struct conf *c, const struct conf_origin *o)
{
	char a[DURATION_BUF_MAX], b[DURATION_BUF_MAX];

	if (!c->has_settle || !c->has_interval || c->settle_ns < c->interval_ns)
		return;
	log_warning("%s: Settle=%s is not shorter than Interval=%s, ignoring.", o->settle ?: "(config)",
		    format_duration(a, sizeof(a), c->settle_ns),
		    format_duration(b, sizeof(b), c->interval_ns));
	c->has_settle = false;
	c->warnings++;
}

int conf_load(struct conf *c, const char *path, const char *dropin_dir)
{
	struct conf_origin o = {};
	int r = 0;

	if (path)
		r = load_file(c, path, &o);
	if (r >= 0 && dropin_dir)
		r = load_dropins(c, dropin_dir, &o);
	if (r >= 0)
		check_settle(c, &o);
	free(o.interval);
	free(o.settle);
	return r;
}
