/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The controller's parts, shared between its files: controller.c decides
 * (the one control function), ctl-metric.c estimates the read metric and
 * notices workload shifts, ctl-protect.c steers the targets while reads
 * are protected. Pure: no I/O, no clock.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "controller.h"
#include "macro.h"

static inline uint64_t clamp_target(double ns)
{
	if (!(ns >= KYBER_TARGET_MIN_NS))
		return KYBER_TARGET_MIN_NS;
	if (ns > KYBER_TARGET_MAX_NS)
		return KYBER_TARGET_MAX_NS;
	return (uint64_t)ns;
}

static inline double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static inline bool writes_active(const struct ctl_sample *s)
{
	return s->write.completed > 0 && s->write.iops >= 10;
}

/* How far the writes' latency is above its unthrottled level. */
static inline double inflation(const struct controller *c, const struct ctl_sample *s)
{
	return c->w_ref_ns > 0 ? (double)s->write.total_p99_ns / c->w_ref_ns : 1.0;
}

/* controller.c */
void ctl_say(struct ctl_decision *d, const char *fmt, ...) _printf_(2, 3);
/* Park both targets at the open point (unless already there); stop protecting. */
void ctl_go_open(struct controller *c, const struct ctl_sample *s,
		 const struct kyber_targets *cur, struct ctl_decision *d);

/* ctl-metric.c */
bool ctl_estimate_metric(struct controller *c, const struct ctl_sample *s, uint64_t *ret);
void ctl_forget_window(struct controller *c);
bool ctl_workload_shifted(struct controller *c, const struct ctl_sample *s, char *what, size_t n);
void ctl_learn_write_ref(struct controller *c, const struct ctl_sample *s, bool shifted);

/* ctl-protect.c */
void ctl_forget_depths(struct controller *c);
bool ctl_o8_evidence(struct controller *c, const struct ctl_sample *s, uint64_t metric);
void ctl_protect(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		 uint64_t metric, struct ctl_decision *d);
