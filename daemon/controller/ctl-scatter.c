/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scatter of the writes' one-second P99 at the depth Kyber holds them
 * at. Where their rate is flat in the depth, their latency is too, and a
 * second's P99 of the same writes at the same depth scatters around it:
 * flashsim over FUSE, depth 17 for 7 s, 13.6 to 27.3 ms. A freeze's target
 * put at one such second's P99 sits inside that scatter, and Kyber grows
 * the writes on the next noisy window and creeps on until reads miss: in
 * a CI run a freeze at 13.6 ms / 0.8 put 17.2 ms under writes that ran up
 * to 27 ms, and the drift rule took the target back up twice within 11 s.
 * So the law holds the writes by the highest P99 their depth showed
 * lately, not by this second's.
 *
 * Only settled seconds count (the depth as an interval ago): the first
 * second at a new depth still has the old depth's writes in it. A new
 * depth, or a new workload (controller.c, new_regime()), starts the record
 * over: the old one's latency is another load's. So a drift's way up,
 * which comes on a new depth, has only its own second to go by.
 */
#include <string.h>

#include "ctl-internal.h"

void ctl_scatter_forget(struct ctl_scatter *sc)
{
	memset(sc, 0, sizeof(*sc));
}

void ctl_scatter_add(struct ctl_scatter *sc, uint32_t depth, uint32_t prev_depth, uint64_t p99_ns)
{
	if (!depth || depth != sc->depth) {
		ctl_scatter_forget(sc);
		sc->depth = depth;
	}
	if (!depth || depth != prev_depth || !p99_ns)
		return;
	sc->p99_ns[sc->next] = p99_ns;
	sc->next = (sc->next + 1) % CTL_SCATTER_INTERVALS;
	if (sc->n < CTL_SCATTER_INTERVALS)
		sc->n++;
}

uint64_t ctl_scatter_high(const struct ctl_scatter *sc, uint32_t depth)
{
	uint64_t high = 0;

	if (depth != sc->depth)
		return 0;
	for (unsigned i = 0; i < sc->n; i++)
		high = MAX(high, sc->p99_ns[i]);
	return high;
}
