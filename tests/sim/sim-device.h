/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulator's device: the media part of tests/flashsim/model.c (flash
 * and optane profiles, one 4 KiB page per request). Pure: a request issued
 * at `now` gets the time its media operation finishes; the host time is
 * added by the caller.
 */
#pragma once

#include <stdint.h>

#include "kyber-sim.h"

/* 256 MiB of 4 KiB pages, flashsim's default size: only page % dies matters. */
#define SIM_DEVICE_PAGES (1u << 16)

struct sim_device {
	enum sim_profile profile;
	unsigned dies;
	uint64_t read_ns, program_ns, optane_ns;
	uint64_t write_gap_ns;	/* optane: spacing of write starts */
	uint64_t *die_free;	/* per die (optane: read channel): idle from */
	unsigned next_die;	/* flash: die of the next program (round-robin) */
	uint64_t write_next;	/* optane: earliest start of the next write */
};

/* -EINVAL, -ENOMEM */
int sim_device_init(struct sim_device *d, const struct sim_params *p);
void sim_device_free(struct sim_device *d);

/* op: KT_OP_READ or KT_OP_WRITE. `now` is nondecreasing across calls. */
uint64_t sim_device_submit(struct sim_device *d, int op, uint64_t page, uint64_t now);
