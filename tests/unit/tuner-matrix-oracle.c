/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tuner matrix's devices, workloads and static grid, and the oracle
 * found in it (tuner-matrix.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "macro.h"
#include "parse-util.h"
#include "tuner-matrix.h"

/* Each table is as long as tuner-matrix.h says (declared there with its
 * length, so a table of another length does not compile). */

const uint64_t grid_read_ns[] = {
	25 * USEC, 100 * USEC, 400 * USEC, 1600 * USEC, 6400 * USEC,
};
const uint64_t grid_write_ns[] = {
	200 * USEC, 400 * USEC, 800 * USEC, 1600 * USEC, 3200 * USEC, 6400 * USEC,
	12800 * USEC, 25600 * USEC, 51200 * USEC, 102400 * USEC, 204800 * USEC, 409600 * USEC,
};

const struct workload workloads[] = {
	{ "R1+W256", 1, 256 },
	{ "R4+W64", 4, 64 },
	{ "R16+W16", 16, 16 },
	{ "R1+W16", 1, 16 },
	{ "R256+W256", 256, 256 },
};

const struct matrix_device matrix_devices[] = {
	{ "flash", SIM_FLASH, 0, 0, false },
	{ "optane", SIM_OPTANE, 0, 0, false },
	{ "tlc", SIM_TLC, 0, 0, false },
	{ "gc", SIM_GC, 0, 0, false },
	{ "qdlat", SIM_QDLAT, 0, 0, false },
	{ "hiccup", SIM_QDLAT, HICCUP_NS, HICCUPS_PER_MIN, false },
	{ "noisy", SIM_QDLAT, NOISY_HICCUP_NS, NOISY_HICCUPS_PER_MIN, true },
};

int tuned_seed_from_env(uint64_t *ret)
{
	const char *e = getenv("KT_MATRIX_SEED");

	if (!e || !*e) {
		*ret = TUNED_SEED_DEFAULT;
		return 0;
	}
	return parse_u64_strict(e, false, ret) < 0 ? -EINVAL : 0;
}

void sim_params_for(const struct matrix_device *dev, uint64_t seed, struct sim_params *p)
{
	sim_params_default(p, dev->profile);
	p->seed = seed;
	p->host_jitter_ns = LOOP_HOST_JITTER_NS;
	p->hiccup_ns = dev->hiccup_ns;
	p->hiccups_per_min = dev->hiccups_per_min;
}

struct static_run static_run_for(const struct matrix_device *dev, const struct workload *w, bool kyber,
				 uint64_t read_ns, uint64_t write_ns, unsigned warm_s, unsigned measure_s)
{
	return (struct static_run){
		.kyber = kyber, .read_ns = read_ns, .write_ns = write_ns,
		.read_qd = w->read_qd, .write_qd = w->write_qd, .pct = 99,
		.warm_s = warm_s, .measure_s = measure_s, .judge_hiccups = dev->hiccups_judged,
	};
}

void measure_device(struct device_data *dd, size_t wi)
{
	const struct workload *w = &workloads[wi];
	struct static_run run = static_run_for(dd->dev, w, false, 0, 0, STATIC_WARM_S, STATIC_MEASURE_S);
	struct sim_params p;

	sim_params_for(dd->dev, STATIC_SEED, &p);
	static_point(&p, &run, &dd->none[wi]);
	for (size_t r = 0; r < N_READ; r++)
		for (size_t k = 0; k < N_WRITE; k++) {
			run = static_run_for(dd->dev, w, true, grid_read_ns[r], grid_write_ns[k], STATIC_WARM_S,
					     STATIC_MEASURE_S);
			static_point(&p, &run, &dd->grid[wi][r][k]);
		}
}

void find_oracle(const struct device_data *dd, size_t wi, uint64_t goal_ns, struct oracle *o)
{
	memset(o, 0, sizeof(*o));
	o->lowest_p99_ns = UINT64_MAX;
	for (size_t r = 0; r < N_READ; r++)
		for (size_t k = 0; k < N_WRITE; k++) {
			const struct static_result *res = &dd->grid[wi][r][k];

			o->lowest_p99_ns = MIN(o->lowest_p99_ns, res->p99_ns);
			if (static_windows_met(res, goal_ns) < MET_SHARE * res->windows)
				continue;
			if (!o->feasible || res->write_iops > o->best.write_iops) {
				o->feasible = true;
				o->best = *res;
				o->read_ns = grid_read_ns[r];
				o->write_ns = grid_write_ns[k];
			}
		}
	for (size_t r = 0; r < N_READ; r++)
		for (size_t k = 0; k < N_WRITE; k++) {
			const struct static_result *res = &dd->grid[wi][r][k];

			if (res->p99_ns <= INFEASIBLE_READ_SLACK * o->lowest_p99_ns)
				o->lowest_write_iops = MAX(o->lowest_write_iops, res->write_iops);
		}
}

void print_grid(const struct device_data *dd, size_t wi)
{
	print_message("%s %s: none %.0fus %.0f writes; read P99 us / write IOPS, rows read target, "
		      "columns write target\n", dd->name, workloads[wi].name, dd->none[wi].p99_ns / 1e3,
		      dd->none[wi].write_iops);
	for (size_t r = 0; r < N_READ; r++) {
		print_message("%7.0fus", grid_read_ns[r] / 1e3);
		for (size_t k = 0; k < N_WRITE; k++)
			print_message(" %5.0f/%-6.0f", dd->grid[wi][r][k].p99_ns / 1e3,
				      dd->grid[wi][r][k].write_iops);
		print_message("\n");
	}
}

double writes_at_reads(const struct device_data *dd, size_t wi, uint64_t p99_ns)
{
	double most = 0;

	for (size_t r = 0; r < N_READ; r++)
		for (size_t k = 0; k < N_WRITE; k++) {
			const struct static_result *res = &dd->grid[wi][r][k];

			if (res->p99_ns <= INFEASIBLE_SAME_READS * p99_ns)
				most = MAX(most, res->write_iops);
		}
	return most;
}

/* The oracle's setting on the tuned run's seed: warm_s seconds of warm-up
 * (0: a cold Kyber), then measure_s one-second windows. */
static void oracle_on_tuned_seed(const struct device_data *dd, const struct workload *w,
				 const struct oracle *o, unsigned warm_s, unsigned measure_s,
				 struct static_result *out)
{
	struct static_run run = static_run_for(dd->dev, w, true, o->read_ns, o->write_ns, warm_s,
					       measure_s);
	struct sim_params p;

	sim_params_for(dd->dev, dd->seed, &p);
	static_point(&p, &run, out);
}

void oracle_replay(const struct device_data *dd, const struct workload *w, const struct oracle *o,
		   struct static_result *out)
{
	_Static_assert(RUN_S - CONVERGE_S <= STATIC_WINDOWS_MAX, "the replay's windows fit a static_result");
	oracle_on_tuned_seed(dd, w, o, CONVERGE_S, RUN_S - CONVERGE_S, out);
}

unsigned oracle_cold_first_met(const struct device_data *dd, const struct workload *w,
			       const struct oracle *o, uint64_t goal_ns)
{
	struct static_result cold;

	if (!o->feasible)
		return 0;
	oracle_on_tuned_seed(dd, w, o, 0, FLOOR_CONVERGE_S, &cold);
	for (unsigned i = 0; i < cold.windows; i++)
		if (cold.window_ns[i] && cold.window_ns[i] <= goal_ns)
			return i + 1;
	return 0;
}
