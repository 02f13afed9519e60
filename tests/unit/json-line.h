/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* For unit tests that check a program's JSON output (after cmocka.h). */
#pragma once

#include <string.h>

#include <json-c/json.h>

/* One line of output as json-c (and Python's json.loads) reads it: a
 * single object, strictly valid (UTF-8 too), then the newline. The caller
 * puts it. */
static inline json_object *parse_json_line(const char *t)
{
	json_tokener *tok = json_tokener_new();
	json_object *o;
	size_t n = strlen(t);

	assert_non_null(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, t, (int)n);
	assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
	assert_int_equal(json_tokener_get_parse_end(tok), n);	/* nothing after it */
	assert_ptr_equal(strchr(t, '\n'), t + n - 1);		/* one line */
	json_tokener_free(tok);
	assert_true(json_object_is_type(o, json_type_object));
	return o;
}
