/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Self-tests of the Kyber plant simulator's device matrix (tools/kyber-sim/):
 * the profiles beyond flash and optane (tlc, gc, qdlat: flashsim's model),
 * the disturbances (host stalls, CPU contention, GC storms) and host
 * hiccups. Like
 * test-kyber-sim.c, every test asserts a ratio or an ordering that a wrong
 * model would break; the figures are in tools/kyber-sim/README.md.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hist.h"
#include "kyber-sim.h"

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
		sim_set_targets(s, rt, wt);
	}
	sim_set_workload(s, rq, wq);
	return s;
}

static void settle_and_measure(struct sim *s, uint64_t warm, uint64_t len, struct ctl_sample *c)
{
	if (warm)
		assert_int_equal(sim_run(s, warm, NULL), 0);
	assert_int_equal(sim_run(s, len, c), 0);
}

/* A steady state: warm-up, then 3 s (tlc's Kyber needs ~12 s to settle). */
static void steady_after(enum sim_profile prof, bool kyber, uint64_t rt, uint64_t wt,
			 unsigned rq, unsigned wq, uint64_t warm, struct ctl_sample *c)
{
	struct sim *s = mk(prof, kyber, rt, wt, rq, wq);

	settle_and_measure(s, warm, 3 * SEC, c);
	c->read_hist = NULL;	/* dangles after sim_free */
	sim_free(s);
}

static void steady(enum sim_profile prof, bool kyber, uint64_t rt, uint64_t wt,
		   unsigned rq, unsigned wq, struct ctl_sample *c)
{
	steady_after(prof, kyber, rt, wt, rq, wq, 5 * SEC, c);
}

/* ---------------------------------------------------------------- the device matrix */

static void expect_einval(const struct sim_params *p)
{
	struct sim *s = NULL;

	assert_int_equal(sim_new(&s, p), -EINVAL);
	assert_null(s);
}

/* Profiles by name, with flashsim's model's defaults; impossible media. */
static void test_profiles(void **state)
{
	static const char *const names[_SIM_PROFILE_MAX] = { "flash", "optane", "tlc", "gc", "qdlat" };
	struct sim_params p;
	struct sim *s = NULL;

	/* Others write code against these two values. */
	assert_int_equal(SIM_FLASH, 0);
	assert_int_equal(SIM_OPTANE, 1);
	for (int i = 0; i < _SIM_PROFILE_MAX; i++) {
		assert_string_equal(sim_profile_to_string((enum sim_profile)i), names[i]);
		assert_int_equal(sim_profile_from_string(names[i]), i);
		sim_params_default(&p, (enum sim_profile)i);
		assert_int_equal(p.profile, i);
		assert_int_equal(p.tags, 128);
		assert_int_equal(sim_new(&s, &p), 0);
		s = sim_free(s);
	}
	assert_null(sim_profile_to_string(_SIM_PROFILE_MAX));
	assert_int_equal(sim_profile_from_string("buffered"), -EINVAL);

	sim_params_default(&p, SIM_TLC);
	assert_int_equal(p.dies, 4);
	assert_int_equal(p.read_ns, 90 * US);
	assert_int_equal(p.program_ns, 1500 * US);
	assert_int_equal(p.gc_pages, 0);
	sim_params_default(&p, SIM_GC);
	assert_int_equal(p.dies, 8);
	assert_int_equal(p.program_ns, 500 * US);
	assert_int_equal(p.gc_pages, 16);
	assert_int_equal(p.gc_ns, 2 * MS);
	sim_params_default(&p, SIM_QDLAT);
	assert_int_equal(p.read_ns, 40 * US);
	assert_int_equal(p.write_ns, 100 * US);
	assert_int_equal(p.contention_ns, 60 * US);

	sim_params_default(&p, SIM_GC);
	p.gc_pages = 0;
	expect_einval(&p);
	sim_params_default(&p, SIM_TLC);
	p.program_ns = 0;
	expect_einval(&p);
	sim_params_default(&p, SIM_QDLAT);
	p.contention_ns = 0;
	expect_einval(&p);
	sim_params_default(&p, SIM_QDLAT);
	p.write_ns = 0;
	expect_einval(&p);
	sim_params_default(&p, SIM_FLASH);
	p.storm_gc_pages = 0;
	expect_einval(&p);
	sim_params_default(&p, SIM_FLASH);
	p.profile = _SIM_PROFILE_MAX;
	expect_einval(&p);
}

/* tlc: reads wait behind 1.5 ms programs on 4 dies. Kyber 50 us / 100 ms
 * helps reads a lot and costs writes little (4 programs keep 4 dies busy),
 * but it needs ~12 s to get there: R1 next to W256 completes ~21 reads/s,
 * and writes (72 ms total) are cut only x3/4 per decision. */
static void test_tlc(void **state)
{
	struct sim_params p;
	struct ctl_sample r1, w256, none, kyb, c;
	struct sim *s;
	double ideal;

	sim_params_default(&p, SIM_TLC);
	steady(SIM_TLC, false, 0, 0, 1, 0, &r1);
	steady(SIM_TLC, false, 0, 0, 0, 256, &w256);
	ideal = p.dies * 1e9 / (double)p.program_ns;
	assert_true(fabs(w256.write.iops - ideal) <= 0.1 * ideal);
	steady(SIM_TLC, false, 0, 0, 1, 256, &none);
	assert_true(none.read.total_p99_ns >= 20 * r1.read.total_p99_ns);
	steady_after(SIM_TLC, true, 50 * US, 100 * MS, 1, 256, 20 * SEC, &kyb);
	print_message("tlc R1 p99 %.0f us; R1+W256 none %.0f us, %.0f w/s; kyber %.0f us, %.0f w/s, "
		      "depth %u\n", r1.read.total_p99_ns / 1e3, none.read.total_p99_ns / 1e3,
		      none.write.iops, kyb.read.total_p99_ns / 1e3, kyb.write.iops, kyb.write.kyber_depth);
	assert_true(kyb.read.total_p99_ns * 10 <= none.read.total_p99_ns);
	assert_true(kyb.write.kyber_depth <= 8);
	assert_true(kyb.write.iops >= 0.8 * none.write.iops);

	/* The slow collapse: still above depth 8 after 5 s. */
	s = mk(SIM_TLC, true, 50 * US, 100 * MS, 1, 256);
	settle_and_measure(s, 4 * SEC, 1 * SEC, &c);
	assert_true(c.write.kyber_depth > 8);
	sim_free(s);
}

/* gc: flash with a 2 ms stall after every 16 programs on a die. Stalls
 * scale with the write volume, cost W256 a fifth of its rate, and stay in
 * the read tail even at Kyber's write depth 1. */
static void test_gc(void **state)
{
	struct ctl_sample f11, g11, fw, gw, r1, none, kyb, fkyb;

	steady(SIM_FLASH, false, 0, 0, 1, 1, &f11);
	steady(SIM_GC, false, 0, 0, 1, 1, &g11);
	/* A stall follows an acknowledged program: writes do not wait... */
	assert_true(fabs(g11.write.iops / f11.write.iops - 1) <= 0.05);
	/* ...but reads that land on a collecting die do. */
	assert_true(g11.read.total_p99_ns >= 2 * f11.read.total_p99_ns);

	steady(SIM_FLASH, false, 0, 0, 0, 256, &fw);
	steady(SIM_GC, false, 0, 0, 0, 256, &gw);
	/* 8 dies x 16 programs per (16 x 500 us + 2 ms) = 12.8K. */
	assert_true(fabs(gw.write.iops - 12800) <= 0.05 * 12800);
	assert_true(gw.write.iops < 0.9 * fw.write.iops);

	steady(SIM_GC, false, 0, 0, 1, 0, &r1);
	steady(SIM_GC, false, 0, 0, 1, 256, &none);
	steady(SIM_GC, true, 50 * US, 100 * MS, 1, 256, &kyb);
	steady(SIM_FLASH, true, 50 * US, 100 * MS, 1, 256, &fkyb);
	print_message("gc R1 p99 %.0f us; R1+W256 none %.0f us, %.0f w/s; kyber %.0f us, %.0f w/s "
		      "(flash %.0f us)\n", r1.read.total_p99_ns / 1e3, none.read.total_p99_ns / 1e3,
		      none.write.iops, kyb.read.total_p99_ns / 1e3, kyb.write.iops,
		      fkyb.read.total_p99_ns / 1e3);
	assert_true(none.read.total_p99_ns >= 20 * r1.read.total_p99_ns);
	assert_true(kyb.read.total_p99_ns * 3 <= none.read.total_p99_ns);
	assert_int_equal(kyb.write.kyber_depth, 1);
	assert_true(kyb.read.total_p99_ns >= 2 * fkyb.read.total_p99_ns);
}

/* qdlat: service time grows with the requests in the device: write
 * throughput keeps growing with depth towards 1 / contention, and reads
 * slow down with the write depth, so throttling writes helps them. */
static void test_qdlat(void **state)
{
	static const unsigned depths[] = { 1, 4, 16, 64, 256 };
	struct sim_params p;
	struct ctl_sample c, prev = {}, r1, none, kyb;

	sim_params_default(&p, SIM_QDLAT);
	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		struct sim *s = mk(SIM_QDLAT, false, 0, 0, 1, depths[i]);

		settle_and_measure(s, 1 * SEC, 2 * SEC, &c);
		sim_free(s);
		print_message("qdlat R1+W%u: %.0f w/s, read p99 %.0f us\n", depths[i], c.write.iops,
			      c.read.total_p99_ns / 1e3);
		assert_true(c.write.iops > prev.write.iops);
		assert_true(c.read.total_p99_ns > prev.read.total_p99_ns);
		assert_true(c.write.iops < 1e9 / (double)p.contention_ns);
		prev = c;
	}
	steady(SIM_QDLAT, false, 0, 0, 1, 0, &r1);
	steady(SIM_QDLAT, false, 0, 0, 1, 256, &none);
	steady(SIM_QDLAT, true, 50 * US, 100 * MS, 1, 256, &kyb);
	assert_true(none.read.total_p99_ns >= 20 * r1.read.total_p99_ns);
	assert_true(kyb.read.total_p99_ns * 10 <= none.read.total_p99_ns);
	assert_true(kyb.write.kyber_depth < 128);
	assert_true(kyb.write.iops < none.write.iops);
}

/* ---------------------------------------------------------------- disturbances */

struct phases {
	struct ctl_sample before, during, after;
	struct sim_client_op rb, rd, ra;	/* the reader's view */
};

static void phase(struct sim *s, struct ctl_sample *c, struct sim_client_op *cl)
{
	assert_int_equal(sim_run(s, 3 * SEC, c), 0);
	c->read_hist = NULL;
	assert_int_equal(sim_client_stats(s, KT_OP_READ, cl), 0);
}

/* 3 s before, 3 s with the disturbance, 1 s to let it pass, 3 s after. */
static void disturb(enum sim_profile prof, bool kyber, unsigned rq, unsigned wq,
		    enum sim_disturbance kind, struct phases *ph)
{
	struct sim_params p;
	struct sim *s = NULL;

	sim_params_default(&p, prof);
	p.host_jitter_ns = 20 * US;
	assert_int_equal(sim_new(&s, &p), 0);
	if (kyber) {
		sim_set_kyber(s, true);
		sim_set_targets(s, 50 * US, 100 * MS);
	}
	sim_set_workload(s, rq, wq);
	assert_int_equal(sim_run(s, (kyber ? 10 : 2) * SEC, NULL), 0);
	phase(s, &ph->before, &ph->rb);
	assert_int_equal(sim_set_disturbance(s, kind), 0);
	assert_int_equal(sim_get_disturbance(s), kind);
	phase(s, &ph->during, &ph->rd);
	assert_int_equal(sim_set_disturbance(s, SIM_DISTURB_NONE), 0);
	assert_int_equal(sim_run(s, 1 * SEC, NULL), 0);
	phase(s, &ph->after, &ph->ra);
	print_message("%s %s R%u+W%u: read %.0f/s p99 %.0f us -> %.0f/s %.0f us -> %.0f/s %.0f us; "
		      "write %.0f/s -> %.0f/s -> %.0f/s\n", sim_profile_to_string(prof),
		      sim_disturbance_to_string(kind), rq, wq, ph->before.read.iops,
		      ph->before.read.total_p99_ns / 1e3, ph->during.read.iops,
		      ph->during.read.total_p99_ns / 1e3, ph->after.read.iops,
		      ph->after.read.total_p99_ns / 1e3, ph->before.write.iops, ph->during.write.iops,
		      ph->after.write.iops);
	sim_free(s);
}

static bool near(double a, double b, double tolerance)
{
	return fabs(a - b) <= tolerance * fabs(b);
}

/* Back to the earlier figures once the disturbance is off. */
static void assert_recovered(const struct phases *ph)
{
	assert_true(near(ph->after.read.iops, ph->before.read.iops, 0.05));
	assert_true(near((double)ph->after.read.total_p99_ns, (double)ph->before.read.total_p99_ns, 0.2));
	assert_true(near(ph->after.write.iops, ph->before.write.iops, 0.05));
	assert_int_equal(ph->after.write.kyber_depth, ph->before.write.kyber_depth);
}

static void test_disturbance_api(void **state)
{
	static const char *const names[_SIM_DISTURB_MAX] = {
		"none", "host-stalls", "cpu-contention", "gc-storm",
	};
	struct sim *s = mk(SIM_FLASH, false, 0, 0, 0, 0);

	for (int i = 0; i < _SIM_DISTURB_MAX; i++)
		assert_string_equal(sim_disturbance_to_string((enum sim_disturbance)i), names[i]);
	assert_null(sim_disturbance_to_string(_SIM_DISTURB_MAX));
	assert_int_equal(sim_get_disturbance(s), SIM_DISTURB_NONE);
	assert_int_equal(sim_set_disturbance(s, SIM_DISTURB_GC_STORM), 0);
	assert_int_equal(sim_set_disturbance(s, _SIM_DISTURB_MAX), -EINVAL);
	assert_int_equal(sim_get_disturbance(s), SIM_DISTURB_GC_STORM);
	sim_free(s);
}

/* Host stalls of 3-4 ms over ~35% of the time: R1 alone loses about that
 * share of its rate and its tail grows to the stall length. */
static void test_host_stalls(void **state)
{
	struct phases ph;
	double share;

	disturb(SIM_FLASH, false, 1, 0, SIM_DISTURB_HOST_STALLS, &ph);
	share = 1 - ph.during.read.iops / ph.before.read.iops;
	assert_true(share >= 0.2 && share <= 0.5);
	assert_true(ph.during.read.total_p99_ns >= 5 * ph.before.read.total_p99_ns);
	assert_true(ph.during.read.total_p99_ns <= 5 * MS);
	assert_recovered(&ph);

	disturb(SIM_FLASH, true, 1, 256, SIM_DISTURB_HOST_STALLS, &ph);
	assert_true(ph.during.read.total_p99_ns >= 3 * ph.before.read.total_p99_ns);
	assert_recovered(&ph);

	disturb(SIM_QDLAT, true, 1, 256, SIM_DISTURB_HOST_STALLS, &ph);
	assert_true(ph.during.read.total_p99_ns >= 3 * ph.before.read.total_p99_ns);
	assert_recovered(&ph);
}

/* Other processes on the CPUs: every request's host path is slower and
 * noisier, at any depth. */
static void test_cpu_contention(void **state)
{
	struct phases ph;

	disturb(SIM_FLASH, false, 1, 0, SIM_DISTURB_CPU_CONTENTION, &ph);
	assert_true(ph.rd.p50_ns >= 2 * ph.rb.p50_ns);
	assert_true(ph.during.read.iops <= 0.5 * ph.before.read.iops);
	assert_true(ph.rd.p99_ns >= 2 * ph.rd.p50_ns);
	assert_recovered(&ph);

	disturb(SIM_OPTANE, true, 1, 256, SIM_DISTURB_CPU_CONTENTION, &ph);
	assert_true(ph.during.read.total_p99_ns >= 3 * ph.before.read.total_p99_ns);
	assert_true(ph.during.write.iops < ph.before.write.iops);
	assert_recovered(&ph);
}

/* A GC storm: flash-like dies stall after every 4th program, so only
 * writes bring it on; optane and qdlat media run 4x slower. */
static void test_gc_storm(void **state)
{
	struct phases ph;

	disturb(SIM_FLASH, false, 1, 0, SIM_DISTURB_GC_STORM, &ph);
	assert_true(near(ph.during.read.iops, ph.before.read.iops, 0.02));
	assert_recovered(&ph);

	disturb(SIM_FLASH, false, 0, 256, SIM_DISTURB_GC_STORM, &ph);
	/* 8 dies x 4 programs per (4 x 500 us + 3 ms) = 6.4K. */
	assert_true(near(ph.during.write.iops, 6400, 0.05));
	assert_recovered(&ph);

	disturb(SIM_FLASH, true, 1, 256, SIM_DISTURB_GC_STORM, &ph);
	assert_true(ph.during.read.total_p99_ns >= 3 * ph.before.read.total_p99_ns);
	assert_true(ph.during.read.iops < 0.8 * ph.before.read.iops);
	assert_recovered(&ph);

	/* gc's stalls already set its read P99 (2 ms): a storm makes them
	 * more frequent, not longer. */
	disturb(SIM_GC, true, 1, 256, SIM_DISTURB_GC_STORM, &ph);
	assert_true(ph.during.read.total_p99_ns > ph.before.read.total_p99_ns);
	assert_true(ph.during.read.iops < 0.85 * ph.before.read.iops);
	assert_recovered(&ph);

	disturb(SIM_OPTANE, false, 1, 256, SIM_DISTURB_GC_STORM, &ph);
	assert_true(near(ph.during.write.iops, 4000, 0.05));
	assert_true(ph.rd.p50_ns > ph.rb.p50_ns + 30 * US);
	assert_recovered(&ph);

	disturb(SIM_QDLAT, true, 1, 256, SIM_DISTURB_GC_STORM, &ph);
	assert_true(ph.during.read.total_p99_ns >= 2 * ph.before.read.total_p99_ns);
	assert_true(ph.during.write.iops < 0.5 * ph.before.write.iops);
	assert_recovered(&ph);
}

/* Disturbances keep the sim deterministic. */
static void test_disturbance_determinism(void **state)
{
	struct ctl_sample a[3], b[3];

	for (int k = 0; k < 2; k++) {
		struct ctl_sample *c = k ? b : a;
		struct sim *s = mk(SIM_GC, true, 50 * US, 100 * MS, 1, 256);

		sim_set_host_jitter(s, 20 * US);
		assert_int_equal(sim_run(s, 2 * SEC, &c[0]), 0);
		sim_set_disturbance(s, SIM_DISTURB_HOST_STALLS);
		assert_int_equal(sim_run(s, 1 * SEC, &c[1]), 0);
		sim_set_disturbance(s, SIM_DISTURB_CPU_CONTENTION);
		assert_int_equal(sim_run(s, 1 * SEC, &c[2]), 0);
		for (int i = 0; i < 3; i++)
			c[i].read_hist = NULL;
		sim_free(s);
	}
	assert_memory_equal(a, b, sizeof(a));
}

/* sim_set_host_jitter() still sets the base the disturbances scale; with
 * it at 0 the plant has no tail, under contention it has one. */
static void test_contention_jitter(void **state)
{
	struct sim *s = mk(SIM_OPTANE, false, 0, 0, 1, 0);
	struct sim_client_op quiet, busy, noisier;
	struct ctl_sample c;

	sim_set_host_jitter(s, 0);
	settle_and_measure(s, 0, 1 * SEC, &c);
	assert_int_equal(sim_client_stats(s, KT_OP_READ, &quiet), 0);
	assert_int_equal(quiet.p99_ns, quiet.p50_ns);
	sim_set_disturbance(s, SIM_DISTURB_CPU_CONTENTION);
	settle_and_measure(s, 0, 1 * SEC, &c);
	assert_int_equal(sim_client_stats(s, KT_OP_READ, &busy), 0);
	assert_true(busy.p99_ns >= 2 * busy.p50_ns);
	assert_true(busy.p50_ns >= 3 * quiet.p50_ns);
	sim_set_host_jitter(s, 100 * US);
	settle_and_measure(s, 0, 1 * SEC, &c);
	assert_int_equal(sim_client_stats(s, KT_OP_READ, &noisier), 0);
	assert_true(noisier.p99_ns > busy.p99_ns);
	sim_free(s);
}

/* Host hiccups: off by default; on, they cover about the share of time
 * their rate and length give, at random offsets (in some seconds, not in
 * most), and a second they cover a good part of has a read tail at least
 * twice that of a second without, behind writes (R1 beside W16: 1.1 ms
 * without) as without them (0.12 ms). */
static void test_host_hiccups(void **state)
{
	for (unsigned wq = 0; wq <= 16; wq += 16) {
		uint64_t quiet[60], hit[60], covered = 0;
		unsigned n_quiet = 0, n_hit = 0, touched = 0;
		struct sim_params p;
		struct ctl_sample c;
		struct sim *s;

		sim_params_default(&p, SIM_QDLAT);
		assert_int_equal(sim_new(&s, &p), 0);
		assert_int_equal(sim_hiccup_ns(s, 0, 60 * SEC), 0);
		sim_free(s);

		p.hiccup_ns = 1 * MS;
		p.hiccups_per_min = 4;
		assert_int_equal(sim_new(&s, &p), 0);
		sim_set_workload(s, 1, wq);
		assert_int_equal(sim_run(s, 5 * SEC, NULL), 0);
		for (unsigned i = 0; i < 60; i++) {
			uint64_t from = sim_now_ns(s), in, p99;

			assert_int_equal(sim_run(s, SEC, &c), 0);
			in = sim_hiccup_ns(s, from, sim_now_ns(s));
			covered += in;
			touched += in > 0;
			assert_int_equal(hist_percentile(c.read_hist, 99, &p99), 0);
			if (in >= 50 * MS)
				hit[n_hit++] = p99;
			else if (!in)
				quiet[n_quiet++] = p99;
		}
		sim_free(s);
		/* 4 a minute of 100-300 ms: 0.8 s of 60 on average. */
		assert_true(covered >= 200 * MS && covered <= 2 * SEC);
		assert_true(touched >= 2 && touched <= 15);
		assert_true(n_hit >= 1 && n_quiet >= 40);
		for (unsigned i = 0; i < n_hit; i++)
			for (unsigned j = 0; j < n_quiet; j++)
				assert_true(hit[i] >= 2 * quiet[j]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_tlc),
		cmocka_unit_test(test_gc),
		cmocka_unit_test(test_qdlat),
		cmocka_unit_test(test_disturbance_api),
		cmocka_unit_test(test_host_stalls),
		cmocka_unit_test(test_cpu_contention),
		cmocka_unit_test(test_gc_storm),
		cmocka_unit_test(test_disturbance_determinism),
		cmocka_unit_test(test_contention_jitter),
		cmocka_unit_test(test_host_hiccups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
