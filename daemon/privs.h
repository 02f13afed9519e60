/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Least privilege: after the BPF programs are loaded and attached, keep only
 * the capabilities the steady state needs (docs/security.md says why each). */
#pragma once

#include <stddef.h>
#include <sys/capability.h>

/* Drop every capability but keep[] from the effective, permitted and
 * inheritable sets and the bounding set. -errno on failure. */
int privs_drop(const cap_value_t *keep, size_t n);

/* Whether probe() fails without cap in the effective set (tried with it
 * lowered, then raised again): 1 needed, 0 not, -errno. */
int privs_needed(cap_value_t cap, int (*probe)(void *userdata), void *userdata);
