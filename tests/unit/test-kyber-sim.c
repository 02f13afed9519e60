/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Self-tests of the Kyber plant simulator (tools/kyber-sim/): Kyber's controller
 * rules on their own, then the whole plant against the behaviour measured
 * on the real flashsim device (tools/kyber-sim/README.md). Every plant test
 * asserts a ratio or an ordering that a wrong model would break.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "hist.h"
#include "kyber-sim.h"
#include "sim-kyber.h"

#define US 1000ULL
#define MS (1000ULL * US)
#define SEC (1000ULL * MS)

/* ---------------------------------------------------------------- helpers */

static struct sim *mk(enum sim_profile prof, bool kyber, uint64_t rt, uint64_t wt,
		      unsigned rq, unsigned wq)
{
	struct sim_params p;
	struct sim *s = NULL;

	sim_params_default(&p, prof);
	assert_int_equal(sim_new(&s, &p), 0);
	if (kyber) {
		sim_set_kyber(s, true);
		if (rt)
			sim_set_targets(s, rt, wt);
	}
	sim_set_workload(s, rq, wq);
	return s;
}

/* Warm up (Kyber needs ~3 s to settle from the caps), then one interval. */
static void settle_and_measure(struct sim *s, uint64_t warm, uint64_t len, struct ctl_sample *c)
{
	if (warm)
		assert_int_equal(sim_run(s, warm, NULL), 0);
	assert_int_equal(sim_run(s, len, c), 0);
}

/* One configuration's steady-state sample, simulator freed. */
static void steady(enum sim_profile prof, bool kyber, uint64_t rt, uint64_t wt,
		   unsigned rq, unsigned wq, struct ctl_sample *c)
{
	struct sim *s = mk(prof, kyber, rt, wt, rq, wq);

	settle_and_measure(s, 5 * SEC, 3 * SEC, c);
	c->read_hist = NULL;	/* dangles after sim_free */
	sim_free(s);
}

/* ---------------------------------------------------------------- Kyber's rules */

static void test_kyber_buckets(void **state)
{
	/* Width target/4; the target itself is still good (bucket 3). */
	assert_int_equal(kyber_model_bucket(1000, 0), 0);
	assert_int_equal(kyber_model_bucket(1000, 1), 0);
	assert_int_equal(kyber_model_bucket(1000, 250), 0);
	assert_int_equal(kyber_model_bucket(1000, 251), 1);
	assert_int_equal(kyber_model_bucket(1000, 1000), 3);
	assert_int_equal(kyber_model_bucket(1000, 1001), 4);
	assert_int_equal(kyber_model_bucket(1000, 1750), 6);
	assert_int_equal(kyber_model_bucket(1000, 1751), 7);
	assert_int_equal(kyber_model_bucket(1000, UINT64_MAX), 7);
	/* target 0 (accepted by sysfs): divisor 1, anything over 7 ns bad. */
	assert_int_equal(kyber_model_bucket(0, 5), 4);
	assert_int_equal(kyber_model_bucket(0, 100), 7);
	/* The divisor is target >> 2, truncated: with a target not divisible
	 * by 4 the target itself is already bad, as in the kernel. */
	assert_int_equal(kyber_model_bucket(1001, 1001), 4);
	assert_int_equal(kyber_model_bucket(UINT64_MAX, UINT64_MAX), 4);
	assert_int_equal(kyber_model_bucket(1 << 20, 1 << 20), 3);
}

static void feed(struct kyber_model *k, unsigned d, unsigned n, uint64_t total, uint64_t io)
{
	for (unsigned i = 0; i < n; i++)
		kyber_model_sample(k, d, total, io);
}

static void test_kyber_scaling(void **state)
{
	struct kyber_model k;

	kyber_model_init(&k);
	assert_int_equal(k.depth[KT_OP_READ], 256);
	assert_int_equal(k.depth[KT_OP_WRITE], 128);

	/* Reads bad at the device -> congestion; writes good -> x(b+1)/4. */
	feed(&k, KT_OP_READ, 500, 3 * MS, 3 * MS);
	feed(&k, KT_OP_WRITE, 500, 1 * MS, 1 * MS);	/* bucket 0 of 10 ms */
	kyber_model_timer(&k, 100 * MS);
	assert_int_equal(k.depth[KT_OP_WRITE], 32);
	/* Reads: own p99 bad (bucket 7) -> x2, clamped at the cap. */
	assert_int_equal(k.depth[KT_OP_READ], 256);
	assert_int_equal(k.info.congested_runs, 1);
	assert_int_equal(k.info.adjusts[KT_OP_WRITE], 1);

	/* No congestion, writes bad (bucket 5): x6/4. */
	feed(&k, KT_OP_READ, 500, 100 * US, 100 * US);
	feed(&k, KT_OP_WRITE, 500, 14 * MS, 1 * MS);
	kyber_model_timer(&k, 200 * MS);
	assert_int_equal(k.depth[KT_OP_WRITE], 48);

	/* No congestion, writes good: nothing changes. */
	feed(&k, KT_OP_READ, 500, 100 * US, 100 * US);
	feed(&k, KT_OP_WRITE, 500, 1 * MS, 1 * MS);
	kyber_model_timer(&k, 300 * MS);
	assert_int_equal(k.depth[KT_OP_WRITE], 48);

	/* Integer arithmetic: depth 1 stays 1 up to bucket 6, 2 at bucket 7. */
	k.depth[KT_OP_WRITE] = 1;
	feed(&k, KT_OP_WRITE, 500, 17 * MS, 1 * MS);	/* bucket 6 */
	kyber_model_timer(&k, 400 * MS);
	assert_int_equal(k.depth[KT_OP_WRITE], 1);
	feed(&k, KT_OP_WRITE, 500, 18 * MS, 1 * MS);	/* bucket 7 */
	kyber_model_timer(&k, 500 * MS);
	assert_int_equal(k.depth[KT_OP_WRITE], 2);
	/* Never below 1. */
	feed(&k, KT_OP_READ, 500, 3 * MS, 3 * MS);
	feed(&k, KT_OP_WRITE, 500, 1 * MS, 1 * MS);
	kyber_model_timer(&k, 600 * MS);
	assert_int_equal(k.depth[KT_OP_WRITE], 1);
	assert_int_equal(k.info.min_depth[KT_OP_WRITE], 1);
}

/* A p99 from an uncongested window is used once by the next congested
 * window in which the domain has too few samples. */
static void test_kyber_p99_memory(void **state)
{
	struct kyber_model k;

	kyber_model_init(&k);
	feed(&k, KT_OP_READ, 500, 100 * US, 100 * US);
	feed(&k, KT_OP_WRITE, 500, 2 * MS, 1 * MS);	/* bucket 0, remembered */
	kyber_model_timer(&k, 100 * MS);
	assert_int_equal(k.depth[KT_OP_WRITE], 128);
	assert_int_equal(k.domain_p99[KT_OP_WRITE], 0);

	feed(&k, KT_OP_READ, 500, 3 * MS, 3 * MS);	/* congested, no write samples */
	kyber_model_timer(&k, 200 * MS);
	assert_int_equal(k.depth[KT_OP_WRITE], 32);
	assert_int_equal(k.domain_p99[KT_OP_WRITE], -1);

	feed(&k, KT_OP_READ, 500, 3 * MS, 3 * MS);	/* memory consumed: no change */
	kyber_model_timer(&k, 300 * MS);
	assert_int_equal(k.depth[KT_OP_WRITE], 32);
}

/* Below 500 samples a domain waits for the 1 s timeout, which is shared by
 * its I/O p90 and total p99: the first to compute restarts it for the other. */
static void test_kyber_shared_timeout(void **state)
{
	struct kyber_model k;

	kyber_model_init(&k);
	feed(&k, KT_OP_WRITE, 100, 1 * MS, 20 * MS);	/* io bad (bucket 7) */
	kyber_model_timer(&k, 100 * MS);		/* starts the second */
	assert_int_equal(k.info.last_io_p90[KT_OP_WRITE], -1);
	kyber_model_timer(&k, 600 * MS);
	assert_int_equal(k.info.last_io_p90[KT_OP_WRITE], -1);
	kyber_model_timer(&k, 1100 * MS);
	/* I/O p90 computed (congestion), total p99 restarted its second. */
	assert_int_equal(k.info.last_io_p90[KT_OP_WRITE], 7);
	assert_int_equal(k.info.last_total_p99[KT_OP_WRITE], -1);
	assert_int_equal(k.info.congested_runs, 1);
	assert_int_equal(k.depth[KT_OP_WRITE], 128);
	/* The total samples kept accumulating: 500 of them decide at once. */
	feed(&k, KT_OP_WRITE, 400, 1 * MS, 1 * MS);
	kyber_model_timer(&k, 1200 * MS);
	assert_int_equal(k.info.last_total_p99[KT_OP_WRITE], 0);
}

/* Samples are bucketed against the target current at completion: the first
 * decision after a target change mixes both. */
static void test_kyber_target_change_mixes(void **state)
{
	struct kyber_model k;

	kyber_model_init(&k);
	/* 3 ms writes: good against 10 ms (bucket 1). */
	feed(&k, KT_OP_WRITE, 300, 3 * MS, 3 * MS);
	k.target[KT_OP_WRITE] = 1 * MS;
	/* Same latency, now bad (bucket 7), 200 of them: p99 lands there,
	 * p90 too; with 10 of them only, p90 would stay good. */
	feed(&k, KT_OP_WRITE, 200, 3 * MS, 3 * MS);
	kyber_model_timer(&k, 100 * MS);
	assert_int_equal(k.info.last_io_p90[KT_OP_WRITE], 7);
	assert_int_equal(k.info.last_total_p99[KT_OP_WRITE], 7);

	kyber_model_init(&k);
	feed(&k, KT_OP_WRITE, 490, 3 * MS, 3 * MS);
	k.target[KT_OP_WRITE] = 1 * MS;
	feed(&k, KT_OP_WRITE, 10, 3 * MS, 3 * MS);
	kyber_model_timer(&k, 100 * MS);
	assert_int_equal(k.info.last_io_p90[KT_OP_WRITE], 1);
	assert_int_equal(k.info.last_total_p99[KT_OP_WRITE], 7);
}

/* ---------------------------------------------------------------- the plant */

static void test_params(void **state)
{
	struct sim_params p;
	struct sim *s = NULL;
	struct ctl_sample c;

	sim_params_default(&p, SIM_FLASH);
	assert_int_equal(p.dies, 8);
	assert_int_equal(p.read_ns, 60 * US);
	assert_int_equal(p.program_ns, 500 * US);
	assert_int_equal(p.tags, 128);
	p.dies = 0;
	assert_int_equal(sim_new(&s, &p), -EINVAL);
	sim_params_default(&p, SIM_FLASH);
	p.tags = 0;
	assert_int_equal(sim_new(&s, &p), -EINVAL);
	sim_params_default(&p, SIM_OPTANE);
	p.optane_ns = 0;
	assert_int_equal(sim_new(&s, &p), -EINVAL);
	sim_params_default(&p, SIM_FLASH);
	p.profile = (enum sim_profile)7;
	assert_int_equal(sim_new(&s, &p), -EINVAL);
	assert_null(s);

	sim_params_default(&p, SIM_FLASH);
	assert_int_equal(sim_new(&s, &p), 0);
	assert_int_equal(sim_run(s, 0, &c), -EINVAL);
	/* Idle: an interval with nothing in it. */
	assert_int_equal(sim_run(s, 100 * MS, &c), 0);
	assert_int_equal(sim_now_ns(s), 100 * MS);
	assert_int_equal(c.duration_ns, 100 * MS);
	assert_int_equal(c.read.completed, 0);
	assert_int_equal(c.read.total_p99_ns, 0);
	assert_int_equal(hist_count(c.read_hist), 0);
	assert_int_equal(sim_run(s, UINT64_MAX, &c), -EINVAL);
	assert_null(sim_free(s));
	assert_null(sim_free(NULL));
}

static void run_trace(uint64_t seed, uint64_t jitter, struct ctl_sample *c, __u64 *hist, unsigned n)
{
	struct sim_params p;
	struct sim *s = NULL;

	sim_params_default(&p, SIM_FLASH);
	p.seed = seed;
	p.host_jitter_ns = jitter;
	assert_int_equal(sim_new(&s, &p), 0);
	sim_set_kyber(s, true);
	sim_set_targets(s, 50 * US, 100 * MS);
	sim_set_workload(s, 4, 256);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(sim_run(s, 250 * MS, &c[i]), 0);
		memcpy(&hist[i * KT_HIST_BUCKETS], c[i].read_hist, KT_HIST_BUCKETS * sizeof(__u64));
		c[i].read_hist = NULL;
	}
	sim_free(s);
}

/* 1. Same seed, same everything; another seed differs somewhere. */
static void test_determinism(void **state)
{
	enum { N = 12 };
	struct ctl_sample a[N], b[N];
	__u64 *ha = calloc(N * KT_HIST_BUCKETS, sizeof(__u64));
	__u64 *hb = calloc(N * KT_HIST_BUCKETS, sizeof(__u64));

	assert_non_null(ha);
	assert_non_null(hb);
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	run_trace(42, 20 * US, a, ha, N);
	run_trace(42, 20 * US, b, hb, N);
	assert_memory_equal(a, b, sizeof(a));
	assert_memory_equal(ha, hb, N * KT_HIST_BUCKETS * sizeof(__u64));

	run_trace(43, 20 * US, b, hb, N);
	assert_true(memcmp(ha, hb, N * KT_HIST_BUCKETS * sizeof(__u64)) != 0);
	free(ha);
	free(hb);
}

/* The sample is internally consistent: Little's law, the histogram. */
static void test_sample_consistency(void **state)
{
	struct sim_params p;
	struct sim *s = NULL;
	struct ctl_sample c;

	/* Without think time a closed loop keeps exactly qd outstanding,
	 * and with none only the 128 that hold a tag are in the block layer. */
	sim_params_default(&p, SIM_FLASH);
	p.think_ns = 0;
	assert_int_equal(sim_new(&s, &p), 0);
	sim_set_workload(s, 0, 256);
	settle_and_measure(s, 1 * SEC, 1 * SEC, &c);
	assert_true(fabs(c.write.outstanding - 128) < 128 * 0.02);
	sim_set_workload(s, 0, 16);
	settle_and_measure(s, 1 * SEC, 1 * SEC, &c);
	assert_true(fabs(c.write.outstanding - 16) < 16 * 0.02);
	sim_free(s);

	s = mk(SIM_FLASH, true, 50 * US, 100 * MS, 1, 256);
	settle_and_measure(s, 4 * SEC, 1 * SEC, &c);
	assert_int_equal(hist_count(c.read_hist), c.read.completed);
	assert_true(c.read.completed > 1000);
	assert_true(fabs(c.read.iops - (double)c.read.completed) < 1e-6);
	assert_true(c.read.total_p99_ns >= c.read.total_p90_ns);
	assert_true(c.read.total_p99_ns >= c.read.device_p99_ns);
	/* Kyber parks writes: total far above device time, and throttles. */
	assert_true(c.write.total_p99_ns > 10 * c.write.device_p99_ns);
	assert_true(c.write.throttled > 0);
	assert_int_equal(c.read.throttled, 0);
	/* Writes hold at most async_depth (192) requests with Kyber. */
	assert_true(c.write.outstanding < 193);
	assert_true(c.write.outstanding > 150);
	assert_int_equal(c.write.kyber_depth, sim_kyber_depth(s, KT_OP_WRITE));
	assert_int_equal(c.read.kyber_depth, 256);
	sim_free(s);
}

/* 2. The flash model with scheduler none. */
static void test_flash_none(void **state)
{
	struct sim_params p;
	struct ctl_sample r1, w256, mix;
	double ideal;

	sim_params_default(&p, SIM_FLASH);
	steady(SIM_FLASH, false, 0, 0, 1, 0, &r1);
	ideal = (double)(p.read_ns + p.host_ns);
	assert_true(fabs((double)r1.read.total_p99_ns - ideal) <= 0.3 * ideal);

	steady(SIM_FLASH, false, 0, 0, 0, 256, &w256);
	ideal = p.dies * 1e9 / (double)p.program_ns;
	assert_true(fabs(w256.write.iops - ideal) <= 0.15 * ideal);

	steady(SIM_FLASH, false, 0, 0, 1, 256, &mix);
	assert_true(mix.read.total_p99_ns >= 5 * r1.read.total_p99_ns);
	/* The reader queues behind ~16 programs on its die, not behind the
	 * writer's waiting requests: about one read per device latency. */
	assert_true(mix.read.iops > 0.8e9 / mix.read.total_mean_ns);
	assert_int_equal(mix.write.kyber_depth, 0);
	assert_int_equal(mix.write.throttled, 0);
}

/* host_jitter_ns reproduces the real R1 tail (README.md): observer total
 * p50 126-150 us, p99 195-266 us on flashsim; the default (0) has none. */
static void test_jitter(void **state)
{
	struct sim_params p;
	struct sim *s = NULL;
	struct ctl_sample c;
	struct sim_client_op cl;

	sim_params_default(&p, SIM_FLASH);
	p.host_ns = 60 * US;
	p.host_jitter_ns = 20 * US;
	assert_int_equal(sim_new(&s, &p), 0);
	sim_set_workload(s, 1, 0);
	settle_and_measure(s, 0, 5 * SEC, &c);
	assert_int_equal(sim_client_stats(s, KT_OP_READ, &cl), 0);
	assert_int_equal(sim_client_stats(s, 2, &cl), -EINVAL);
	assert_int_equal(sim_client_stats(s, KT_OP_READ, &cl), 0);
	assert_true(cl.p50_ns >= 126 * US && cl.p50_ns <= 150 * US);
	assert_true(c.read.total_p99_ns >= 195 * US && c.read.total_p99_ns <= 266 * US);
	/* No tag waits for R1 alone: the client sees what the observer sees. */
	assert_int_equal(cl.p99_ns, c.read.total_p99_ns);
	assert_true(c.read.iops > 5000 && c.read.iops < 6500);
	sim_free(s);
}

/* 3. Kyber 50 us / 100 ms cuts writes and helps reads. */
static void test_flash_kyber_tight_read(void **state)
{
	struct ctl_sample none, kyb;

	steady(SIM_FLASH, false, 0, 0, 1, 256, &none);
	steady(SIM_FLASH, true, 50 * US, 100 * MS, 1, 256, &kyb);
	assert_true(kyb.read.total_p99_ns * 2 <= none.read.total_p99_ns);
	assert_true(kyb.write.kyber_depth < 128);
	assert_true(kyb.write.iops < none.write.iops);
	/* Reads run much faster once they stop queueing behind programs. */
	assert_true(kyb.read.iops > 10 * none.read.iops);
}

/* 4. Default targets never throttle W256: writes' own total p99 (192
 * requests / 16K IOPS = 12 ms) is above their 10 ms target, so every
 * decision grows them back to the cap. */
static void test_flash_kyber_defaults(void **state)
{
	struct sim *s = mk(SIM_FLASH, true, 0, 0, 1, 256);
	struct sim_kyber_info ki;
	struct ctl_sample c;
	uint64_t rt, wt;

	sim_get_targets(s, &rt, &wt);
	assert_int_equal(rt, 2 * MS);
	assert_int_equal(wt, 10 * MS);
	for (int i = 0; i < 50; i++) {
		assert_int_equal(sim_run(s, 100 * MS, &c), 0);
		assert_int_equal(sim_kyber_depth(s, KT_OP_WRITE), 128);
		assert_int_equal(sim_kyber_depth(s, KT_OP_READ), 256);
	}
	sim_kyber_info(s, &ki);
	assert_true(ki.timer_runs >= 45);
	assert_int_equal(ki.min_depth[KT_OP_WRITE], 128);
	assert_true(ki.last_total_p99[KT_OP_WRITE] >= 4);
	assert_true(c.write.total_p99_ns > 10 * MS);
	assert_true(c.write.iops > 15000);
	sim_free(s);
}

/* 5. The harmful pair: write target below write device latency, loose read
 * target: writes are always bad (congestion), reads always look good and
 * are cut to depth 1. */
static void test_harmful_pair(void **state)
{
	struct ctl_sample none, kyb;

	steady(SIM_FLASH, false, 0, 0, 256, 256, &none);
	steady(SIM_FLASH, true, 100 * MS, 20 * US, 256, 256, &kyb);
	assert_true(kyb.read.kyber_depth <= 4);
	assert_int_equal(kyb.write.kyber_depth, 128);
	assert_true(kyb.read.iops * 2 < none.read.iops);
	assert_true(kyb.read.throttled > 0);
}

/* 6. With one request per op Kyber has nothing to throttle. */
static void test_r1w1_untouchable(void **state)
{
	static const uint64_t targets[][2] = {
		{ 0, 0 },			/* defaults */
		{ 50 * US, 100 * MS },
		{ 100 * MS, 20 * US },
		{ 20 * US, 20 * US },
		{ 1 * SEC, 1 * SEC },
	};
	struct ctl_sample none, kyb;

	steady(SIM_FLASH, false, 0, 0, 1, 1, &none);
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		steady(SIM_FLASH, true, targets[i][0], targets[i][1], 1, 1, &kyb);
		assert_true(fabs((double)kyb.read.total_p99_ns / (double)none.read.total_p99_ns - 1) <= 0.2);
		assert_int_equal(kyb.write.throttled, 0);
	}
}

/* 7. Optane: reads never wait for writes inside the device, so throttling
 * writes only costs write throughput (ICPE'24 O-8). */
static void test_optane(void **state)
{
	struct ctl_sample r1, none, kyb;

	steady(SIM_OPTANE, false, 0, 0, 1, 0, &r1);
	steady(SIM_OPTANE, false, 0, 0, 1, 256, &none);
	steady(SIM_OPTANE, true, 50 * US, 100 * MS, 1, 256, &kyb);
	assert_true(none.read.total_p99_ns <= 2 * r1.read.total_p99_ns);
	assert_true(none.write.iops > 15000);
	assert_true(kyb.write.iops < 0.95 * none.write.iops);
	assert_true(kyb.write.kyber_depth < 128);
	assert_true((double)kyb.read.total_p99_ns >= 0.8 * (double)none.read.total_p99_ns);
}

/* Scheduler switches under load: freeze, drain, reset; targets only exist
 * with Kyber. */
static void test_switch(void **state)
{
	struct sim *s = mk(SIM_FLASH, false, 0, 0, 1, 256);
	struct ctl_sample c;
	uint64_t rt, wt;

	settle_and_measure(s, 1 * SEC, 100 * MS, &c);
	sim_set_targets(s, 1, 2);		/* no such files with none */
	sim_get_targets(s, &rt, &wt);
	assert_int_equal(rt, 2 * MS);
	assert_int_equal(sim_kyber_depth(s, KT_OP_WRITE), 0);

	sim_set_kyber(s, true);
	sim_set_targets(s, 50 * US, 100 * MS);
	assert_int_equal(sim_kyber_depth(s, KT_OP_WRITE), 128);
	settle_and_measure(s, 5 * SEC, 1 * SEC, &c);
	assert_true(c.write.kyber_depth < 128);
	assert_true(c.write.throttled > 0);

	/* Back to none: Kyber's queue drains, then writes run free again. */
	sim_set_kyber(s, false);
	assert_int_equal(sim_kyber_depth(s, KT_OP_WRITE), 0);
	settle_and_measure(s, 3 * SEC, 1 * SEC, &c);
	assert_int_equal(c.write.throttled, 0);
	assert_true(c.write.iops > 15000);

	/* And to Kyber again: a fresh instance with the defaults. */
	sim_set_kyber(s, true);
	sim_get_targets(s, &rt, &wt);
	assert_int_equal(rt, 2 * MS);
	assert_int_equal(wt, 10 * MS);
	assert_int_equal(sim_kyber_depth(s, KT_OP_WRITE), 128);
	settle_and_measure(s, 1 * SEC, 1 * SEC, &c);
	assert_int_equal(c.write.kyber_depth, 128);
	assert_true(c.write.iops > 15000);
	sim_free(s);
}

/* Workload changes take effect at once, in both directions. */
static void test_workload_change(void **state)
{
	struct sim *s = mk(SIM_FLASH, false, 0, 0, 0, 256);
	struct ctl_sample c;

	settle_and_measure(s, 1 * SEC, 1 * SEC, &c);
	assert_true(c.write.iops > 15000);
	assert_int_equal(c.read.completed, 0);

	sim_set_workload(s, 1, 1);
	settle_and_measure(s, 100 * MS, 1 * SEC, &c);	/* the 256 drain in ~16 ms */
	assert_true(c.write.iops < 2000);
	assert_true(c.write.outstanding <= 1.01);
	assert_true(c.read.iops > 4000);

	sim_set_workload(s, 0, 0);
	settle_and_measure(s, 10 * MS, 1 * SEC, &c);
	assert_int_equal(c.read.completed + c.write.completed, 0);
	sim_free(s);
}

/* 8. Fast enough to run a minute of a controller's life in a unit test. */
static void test_speed(void **state)
{
	struct sim *s = mk(SIM_FLASH, true, 50 * US, 100 * MS, 1, 256);
	struct timespec a, b;
	struct ctl_sample c;
	double secs;

	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &a), 0);
	for (int i = 0; i < 600; i++)
		assert_int_equal(sim_run(s, 100 * MS, &c), 0);
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &b), 0);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	print_message("60 simulated seconds in %.3f s\n", secs);
	assert_true(secs < 2.0);
	assert_int_equal(sim_now_ns(s), 60 * SEC);
	sim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kyber_buckets),
		cmocka_unit_test(test_kyber_scaling),
		cmocka_unit_test(test_kyber_p99_memory),
		cmocka_unit_test(test_kyber_shared_timeout),
		cmocka_unit_test(test_kyber_target_change_mixes),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_sample_consistency),
		cmocka_unit_test(test_flash_none),
		cmocka_unit_test(test_jitter),
		cmocka_unit_test(test_flash_kyber_tight_read),
		cmocka_unit_test(test_flash_kyber_defaults),
		cmocka_unit_test(test_harmful_pair),
		cmocka_unit_test(test_r1w1_untouchable),
		cmocka_unit_test(test_optane),
		cmocka_unit_test(test_switch),
		cmocka_unit_test(test_workload_change),
		cmocka_unit_test(test_speed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
