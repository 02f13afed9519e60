/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The simulator's media model, the same rules as tests/flashsim/model.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim-device.h"
#include "sim-util.h"

int sim_device_init(struct sim_device *d, const struct sim_params *p)
{
	memset(d, 0, sizeof(*d));
	if (p->dies < 1 || p->dies > 4096)
		return -EINVAL;
	switch (p->profile) {
	case SIM_FLASH:
		/* A zero program time would make the model interference-free. */
		if (!p->read_ns || !p->program_ns)
			return -EINVAL;
		break;
	case SIM_OPTANE:
		if (!p->optane_ns)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}

	d->profile = p->profile;
	d->dies = p->dies;
	d->read_ns = p->read_ns;
	d->program_ns = p->program_ns;
	d->optane_ns = p->optane_ns;
	if (p->optane_write_iops)
		d->write_gap_ns = SIM_NSEC_PER_SEC / p->optane_write_iops;
	d->die_free = calloc(p->dies, sizeof(*d->die_free));
	if (!d->die_free)
		return -ENOMEM;
	return 0;
}

void sim_device_free(struct sim_device *d)
{
	free(d->die_free);
	d->die_free = NULL;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* One FIFO per die: an operation starts when both it and the die are there,
 * so a read queued behind programs waits for all of them. */
static uint64_t die_run(struct sim_device *d, unsigned die, uint64_t now, uint64_t cost)
{
	uint64_t end = max_u64(now, d->die_free[die]) + cost;

	d->die_free[die] = end;
	return end;
}

uint64_t sim_device_submit(struct sim_device *d, int op, uint64_t page, uint64_t now)
{
	uint64_t start;
	unsigned die;

	if (d->profile == SIM_OPTANE) {
		if (op == KT_OP_READ)
			return die_run(d, (unsigned)(page % d->dies), now, d->optane_ns);
		/* Writes never touch the read channels: the rate cap spaces
		 * their starts, then each takes optane_ns. */
		start = max_u64(now, d->write_next);
		d->write_next = start + d->write_gap_ns;
		return start + d->optane_ns;
	}

	if (op == KT_OP_READ)
		return die_run(d, (unsigned)(page % d->dies), now, d->read_ns);
	/* Programs go round-robin over the dies wherever the page lives,
	 * as a flash translation layer appending to open blocks would. */
	die = d->next_die;
	d->next_die = (d->next_die + 1) % d->dies;
	return die_run(d, die, now, d->program_ns);
}
