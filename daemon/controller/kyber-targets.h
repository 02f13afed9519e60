/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kyber's two targets, as the controller decides them and the sysfs module
 * writes them, and the bounds kyber-tuned keeps them in. Pure.
 */
#pragma once

#include <stdint.h>

/* Bounds for any target kyber-tuned writes. Kyber takes any u64, but
 * below 1 us nothing completes in time and above 100 s nothing is ever
 * "late": both ends are dead configuration space. */
#define KYBER_TARGET_MIN_NS 1000ULL
#define KYBER_TARGET_MAX_NS 100000000000ULL

/* Kyber's defaults (block/kyber-iosched.c). */
#define KYBER_DEFAULT_READ_NS 2000000ULL
#define KYBER_DEFAULT_WRITE_NS 10000000ULL

struct kyber_targets {
	uint64_t read_ns;
	uint64_t write_ns;
};
