/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* What the FUSE operations (fsops.c) and the event loop (flashsim.c) share. */

#define FUSE_USE_VERSION 35

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "model.h"
#include "options.h"
#include "stats.h"

struct pending {
	fuse_req_t req;
	enum model_op op;
	uint64_t off;
	size_t len;
};

struct flashsim {
	struct flashsim_config cfg;
	struct model model;
	struct heap pending;
	struct flashsim_stats stats;
	uint8_t *data;
	struct fuse_session *se;
	int timer_fd;
	int signal_fd;
	uint64_t armed_ns;	/* due time the timerfd is armed for, 0 = none */
	time_t mounted_at;	/* for the file times: a 1970 date puzzles people */
};

extern const struct fuse_lowlevel_ops flashsim_ops;

uint64_t now_ns(void);

/*
 * Accounts a disk request with the model and replies to it when it is due
 * (at once if it already is). @len is clamped to the disk by the caller.
 */
void flashsim_submit(struct flashsim *fs, fuse_req_t req, enum model_op op,
		     uint64_t off, size_t len);
