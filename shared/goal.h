/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The goal grammar, the same everywhere (config, CLI, D-Bus):
 *
 *   read-pNN=DURATION  [write-iops-min=COUNT]  [mode=latency|balanced|throughput|advise]
 *   [scheduler=kyber|auto]
 *
 * tokens separated by blanks or commas; NN is 50, 90, 95, 99 or 99.9;
 * DURATION has a unit (ns, us, ms, s); COUNT takes k/M/G. The read goal is
 * required except with mode=throughput. Pure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

enum goal_mode {
	GOAL_MODE_LATENCY,	/* meet the read goal, spend as little write throughput as possible */
	GOAL_MODE_BALANCED,	/* the study's G-5: keep read and write throughput high */
	GOAL_MODE_THROUGHPUT,	/* never throttle: targets at the non-throttling point */
	GOAL_MODE_ADVISE,	/* decide as latency would, write nothing */
	_GOAL_MODE_MAX,
};

/* Which scheduler the device runs. */
enum goal_scheduler {
	GOAL_SCHEDULER_KYBER,	/* Kyber always */
	GOAL_SCHEDULER_AUTO,	/* its original scheduler where Kyber buys nothing (ctl-sched.h) */
	_GOAL_SCHEDULER_MAX,
};

/* What a goal without scheduler= means: Kyber costs CPU per I/O and buys
 * something only where writes hurt reads, so by default it runs only
 * there. (A zeroed struct goal is scheduler=kyber.) */
#define GOAL_SCHEDULER_DEFAULT GOAL_SCHEDULER_AUTO

struct goal {
	bool has_read;
	double read_pct;		/* 50, 90, 95, 99, 99.9 */
	uint64_t read_ns;
	uint64_t write_iops_min;	/* 0: no floor */
	enum goal_mode mode;
	enum goal_scheduler scheduler;
};

#define GOAL_LATENCY_MIN_NS 1000ULL		/* 1 us */
#define GOAL_LATENCY_MAX_NS 100000000000ULL	/* 100 s */
#define GOAL_IOPS_MAX 1000000000ULL
#define GOAL_TEXT_MAX 128

/* -EINVAL on a malformed goal, with a sentence naming the bad token in error (error.h). */
int goal_parse(const char *text, struct goal *out, sd_bus_error *error);
/* Canonical text, parseable again: "read-p99=2ms write-iops-min=20000 mode=latency"
 * (and " scheduler=kyber" when not the default). */
char *goal_format(const struct goal *g, char *buf, size_t n);
const char *goal_mode_to_string(enum goal_mode m);
const char *goal_scheduler_to_string(enum goal_scheduler s);
/* The same goal (field by field; padding aside). */
bool goal_equal(const struct goal *a, const struct goal *b);
