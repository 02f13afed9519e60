/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kyber-tunectl's JSON: one object per line, keys in snake_case, built with
 * json-c. Strings: invalid UTF-8 bytes become U+FFFD, so the line is
 * always valid JSON whatever the input; NULL is null. Doubles: "%.10g",
 * null when not finite. A failure (-ENOMEM; -EINVAL for a member without
 * a key in an object, or nesting deeper than the stack) is kept and
 * returned by tf_json_end(), which then writes nothing.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;

#define TF_JSON_DEPTH_MAX 8

struct tf_json {
	FILE *f;
	struct json_object *stack[TF_JSON_DEPTH_MAX];	/* [0]: the line's object */
	unsigned depth;
	int error;
};

void tf_json_begin(struct tf_json *j, FILE *f);	/* { */
int tf_json_end(struct tf_json *j);			/* } and a newline; 0 or -errno */
void tf_json_object(struct tf_json *j, const char *key);	/* "key": { */
void tf_json_object_end(struct tf_json *j);
void tf_json_array(struct tf_json *j, const char *key);	/* "key": [ */
void tf_json_array_end(struct tf_json *j);
/* Members; key NULL inside an array. */
void tf_json_str(struct tf_json *j, const char *key, const char *v);
void tf_json_u64(struct tf_json *j, const char *key, uint64_t v);
void tf_json_dbl(struct tf_json *j, const char *key, double v);
void tf_json_bool(struct tf_json *j, const char *key, bool v);
void tf_json_null(struct tf_json *j, const char *key);
