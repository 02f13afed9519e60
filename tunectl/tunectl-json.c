/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tunectl's JSON lines (tunectl-json.h), built with json-c. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "macro.h"
#include "parse-util.h"
#include "tunectl-json.h"

/* s with each byte that is not part of valid UTF-8 replaced by U+FFFD:
 * json-c copies string bytes as they are. */
static json_object *new_utf8_string(const char *s)
{
	static const char fffd[] = "\xef\xbf\xbd";
	_cleanup_free_ char *fixed = NULL;
	const char *end = s + strlen(s), *p;
	size_t bad = 0, n;
	char *q;

	for (p = s; p < end; p += n ?: 1) {
		n = utf8_sequence_len(p, (size_t)(end - p));
		bad += !n;
	}
	if (!bad)
		return json_object_new_string(s);

	fixed = malloc((size_t)(end - s) + bad * (sizeof(fffd) - 2) + 1);
	if (!fixed)
		return NULL;
	for (p = s, q = fixed; p < end; p += n ?: 1) {
		n = utf8_sequence_len(p, (size_t)(end - p));
		q = n ? mempcpy(q, p, n) : mempcpy(q, fffd, sizeof(fffd) - 1);
	}
	*q = 0;
	return json_object_new_string(fixed);
}

/* json-c owns what it is given; a failed addition leaves it to us. */
static inline void json_object_putp(json_object **o)
{
	json_object_put(*o);
}

#define _cleanup_json_ _cleanup_(json_object_putp)

static void fail(struct tf_json *j, int error)
{
	if (j->error >= 0)
		j->error = error;
}

/* Adds v (NULL: null) to what is open: under key in an object, at the
 * end of an array (key NULL). v is consumed either way. Returns false
 * after a failure, now or before. */
static bool member(struct tf_json *j, const char *key, json_object *v)
{
	json_object *parent = j->stack[j->depth];
	int r;

	if (j->error < 0)
		r = j->error;
	else if ((key != NULL) == (bool)json_object_is_type(parent, json_type_array))
		r = -EINVAL;	/* a key in an array, or none in an object */
	else if (key)
		r = json_object_object_add(parent, key, v) < 0 ? -ENOMEM : 0;
	else
		r = json_object_array_add(parent, v) < 0 ? -ENOMEM : 0;
	if (r < 0) {
		json_object_put(v);
		fail(j, r);
		return false;
	}
	return true;
}

/* A new value: NULL is a failed allocation, not null. */
static void member_new(struct tf_json *j, const char *key, json_object *v)
{
	if (v)
		(void)member(j, key, v);
	else
		fail(j, -ENOMEM);
}

void tf_json_begin(struct tf_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->stack[0] = json_object_new_object();
	if (!j->stack[0])
		j->error = -ENOMEM;
}

int tf_json_end(struct tf_json *j)
{
	_cleanup_json_ json_object *o = TAKE_PTR(j->stack[0]);
	const char *s;

	j->depth = 0;
	if (j->error < 0)
		return j->error;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s)
		return -ENOMEM;
	fprintf(j->f, "%s\n", s);
	return 0;
}

static void open_nested(struct tf_json *j, const char *key, json_object *v)
{
	if (!v) {
		fail(j, -ENOMEM);
		return;
	}
	if (j->depth + 1 >= ELEMENTSOF(j->stack)) {
		json_object_put(v);
		fail(j, -EINVAL);
		return;
	}
	/* The parent owns it now; the stack only points at it. */
	if (member(j, key, v))
		j->stack[++j->depth] = v;
}

static void close_nested(struct tf_json *j)
{
	if (j->depth)
		j->stack[j->depth--] = NULL;
}

void tf_json_object(struct tf_json *j, const char *key) { open_nested(j, key, json_object_new_object()); }
void tf_json_object_end(struct tf_json *j) { close_nested(j); }
void tf_json_array(struct tf_json *j, const char *key) { open_nested(j, key, json_object_new_array()); }
void tf_json_array_end(struct tf_json *j) { close_nested(j); }

void tf_json_str(struct tf_json *j, const char *key, const char *v)
{
	if (v)
		member_new(j, key, new_utf8_string(v));
	else
		(void)member(j, key, NULL);
}

void tf_json_u64(struct tf_json *j, const char *key, uint64_t v)
{
	member_new(j, key, json_object_new_uint64(v));
}

/* As "%.10g" prints it, so 1200 stays 1200 (json-c alone would print
 * 1200.0, or 17 digits); NaN and infinities are null. */
void tf_json_dbl(struct tf_json *j, const char *key, double v)
{
	char buf[32];

	if (!isfinite(v)) {
		(void)member(j, key, NULL);
		return;
	}
	snprintf(buf, sizeof(buf), "%.10g", v);
	member_new(j, key, json_object_new_double_s(v, buf));
}

void tf_json_bool(struct tf_json *j, const char *key, bool v)
{
	member_new(j, key, json_object_new_boolean(v));
}

void tf_json_null(struct tf_json *j, const char *key)
{
	(void)member(j, key, NULL);
}
