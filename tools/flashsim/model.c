/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/*
 * Defaults. Each is a number flashsim serves accurately on the 2-CPU VMs
 * (total load near or below ~20K requests/s, testbed.md) and that gives
 * its profile the interference it exists for; README.md has the measured
 * figures. Times in ns.
 */
/* flash: the prototype of testbed.md, ~16K page programs/s on 8 dies. */
#define FLASH_DIES 8
#define FLASH_READ_NS (60 * NSEC_PER_USEC)
#define FLASH_PROGRAM_NS (500 * NSEC_PER_USEC)
/* tlc: fewer dies, slower cells (TLC NAND programs take 1-3 ms): ~2.7K
 * page programs/s, reads behind a program wait 1.5 ms. */
#define TLC_DIES 4
#define TLC_READ_NS (90 * NSEC_PER_USEC)
#define TLC_PROGRAM_NS (1500 * NSEC_PER_USEC)
/* gc: flash that collects a block after every 16 programs on a die: 2 ms
 * of erase and page moves cost W256 a fifth of its rate, and even at
 * Kyber's write depth 1 (~1.6K programs/s, ~100 stalls/s) ~2% of R1's
 * reads meet a stall, so GC shows in the read P99. (A closed-loop reader
 * meets each stall at most once: at 32 pages / 4 ms only ~1% did, and
 * the real P99 sat on the edge of the stalls.) */
#define GC_PAGES 16
#define GC_NS (2 * NSEC_PER_MSEC)
/* A GC stall on the other flash-like profiles, used by storms only. */
#define GC_STALL_NS (3 * NSEC_PER_MSEC)
/* optane: symmetric fast media, reads and writes on separate resources.
 * The write cap keeps the FUSE path off the CPU the reader needs (README). */
#define OPTANE_NS (12 * NSEC_PER_USEC)
#define OPTANE_WRITE_IOPS 16000
/* buffered: a 4 MiB write buffer, acknowledged like an optane write. */
#define BUFFERED_PAGES 1024
#define BUFFERED_ACK_NS (12 * NSEC_PER_USEC)
/* qdlat: a loop over a file on a file system: alone a read takes 40 us and
 * a write 100 us, and every request already in the device adds 60 us, so
 * throughput saturates near 1 / 60 us = 16.7K requests/s. */
#define QDLAT_READ_NS (40 * NSEC_PER_USEC)
#define QDLAT_WRITE_NS (100 * NSEC_PER_USEC)
#define QDLAT_CONTENTION_NS (60 * NSEC_PER_USEC)
/* Storms: GC after every 4th program per die (W256 on flash loses ~60%),
 * or 4x slower media. */
#define STORM_GC_PAGES 4
#define STORM_SLOWDOWN 4

/* Validation limits: beyond them a value is a typo, not a device. */
#define MAX_DIES 4096
#define MAX_GC_PAGES (1U << 20)
#define MAX_SLOWDOWN 1000

/* ---------------------------------------------------------------- names */

static const char *const profile_names[_PROFILE_MAX] = {
	[PROFILE_FLASH] = "flash",
	[PROFILE_OPTANE] = "optane",
	[PROFILE_BUFFERED] = "buffered",
	[PROFILE_TLC] = "tlc",
	[PROFILE_GC] = "gc",
	[PROFILE_QDLAT] = "qdlat",
};

static const char *const op_names[_MODEL_OP_MAX] = {
	[MODEL_READ] = "read",
	[MODEL_WRITE] = "write",
	[MODEL_FSYNC] = "fsync",
};

const char *model_profile_to_string(enum model_profile p)
{
	return p < _PROFILE_MAX ? profile_names[p] : NULL;
}

int model_profile_from_string(const char *s)
{
	for (int i = 0; i < _PROFILE_MAX; i++)
		if (strcmp(s, profile_names[i]) == 0)
			return i;
	return -EINVAL;
}

const char *model_op_to_string(enum model_op op)
{
	return op < _MODEL_OP_MAX ? op_names[op] : NULL;
}

bool model_profile_is_flash_like(enum model_profile p)
{
	return p == PROFILE_FLASH || p == PROFILE_TLC || p == PROFILE_GC ||
	       p == PROFILE_BUFFERED;
}

/* ---------------------------------------------------------------- params */

void model_params_default(struct model_params *p, enum model_profile profile)
{
	*p = (struct model_params) {
		.profile = profile,
		.size = 256ULL << 20,
		.dies = FLASH_DIES,
		.read_ns = FLASH_READ_NS,
		.program_ns = FLASH_PROGRAM_NS,
		.gc_ns = GC_STALL_NS,
		.storm_gc_pages = STORM_GC_PAGES,
		.storm_slowdown = STORM_SLOWDOWN,
	};

	switch (profile) {
	case PROFILE_OPTANE:
		p->read_ns = OPTANE_NS;
		p->write_ns = OPTANE_NS;
		p->program_ns = 0;
		p->write_iops = OPTANE_WRITE_IOPS;
		p->gc_ns = 0;
		break;
	case PROFILE_BUFFERED:
		p->buffer_pages = BUFFERED_PAGES;
		p->ack_ns = BUFFERED_ACK_NS;
		break;
	case PROFILE_TLC:
		p->dies = TLC_DIES;
		p->read_ns = TLC_READ_NS;
		p->program_ns = TLC_PROGRAM_NS;
		break;
	case PROFILE_GC:
		p->gc_pages = GC_PAGES;
		p->gc_ns = GC_NS;
		break;
	case PROFILE_QDLAT:
		p->read_ns = QDLAT_READ_NS;
		p->write_ns = QDLAT_WRITE_NS;
		p->program_ns = 0;
		p->contention_ns = QDLAT_CONTENTION_NS;
		p->gc_ns = 0;
		break;
	default:
		break;
	}
}

/* The option of the first impossible value (NULL: none) and why. */
static const char *params_invalid(const struct model_params *p, const char **why)
{
	bool flash_like = model_profile_is_flash_like(p->profile);

	*why = NULL;
	if (p->profile >= _PROFILE_MAX)
		return "--profile";
	if (p->size < MODEL_PAGE_SIZE || p->size % MODEL_PAGE_SIZE != 0)
		return "--size";
	if (p->dies < 1 || p->dies > MAX_DIES)
		return "--dies";
	/* A zero program time would make the round-robin pointless. */
	*why = "must be > 0 for flash, tlc, gc and buffered";
	if (flash_like && p->program_ns == 0)
		return "--program-us";
	/* A stall of 0 would make GC (and GC storms) invisible. */
	if (flash_like && p->gc_ns == 0)
		return "--gc-us";
	*why = "must be >= 1 for buffered";
	if (p->profile == PROFILE_BUFFERED && p->buffer_pages < 1)
		return "--buffer-pages";
	/* gc without GC is flash. */
	*why = "must be 1..1048576 for gc, 0..1048576 otherwise";
	if (p->gc_pages > MAX_GC_PAGES || (p->profile == PROFILE_GC && p->gc_pages < 1))
		return "--gc-pages";
	/* Without contention qdlat is an ideal parallel device. */
	*why = "must be > 0 for qdlat";
	if (p->profile == PROFILE_QDLAT && p->contention_ns == 0)
		return "--contention-us";
	*why = "must be 1..1048576";
	if (p->storm_gc_pages < 1 || p->storm_gc_pages > MAX_GC_PAGES)
		return "--storm-gc-pages";
	*why = "must be 1..1000";
	if (p->storm_slowdown < 1 || p->storm_slowdown > MAX_SLOWDOWN)
		return "--storm-slowdown";
	*why = NULL;
	return NULL;
}

int model_params_check(const struct model_params *p, const char **bad_option,
		       const char **reason)
{
	const char *why, *bad = params_invalid(p, &why);

	if (!bad)
		return 0;
	if (bad_option)
		*bad_option = bad;
	if (reason)
		*reason = why;
	return -EINVAL;
}

int model_params_validate(const struct model_params *p, const char **bad_option)
{
	return model_params_check(p, bad_option, NULL);
}

/* ---------------------------------------------------------------- model */

int model_init(struct model *m, const struct model_params *p)
{
	int r;

	r = model_params_validate(p, NULL);
	if (r < 0)
		return r;

	memset(m, 0, sizeof(*m));
	m->p = *p;
	m->flash_like = model_profile_is_flash_like(p->profile);
	heap_init(&m->buffer);
	heap_init(&m->busy);
	m->die_free = calloc(p->dies, sizeof(*m->die_free));
	m->die_programs = calloc(p->dies, sizeof(*m->die_programs));
	if (!m->die_free || !m->die_programs) {
		model_free(m);
		return -ENOMEM;
	}
	if (p->profile == PROFILE_OPTANE && p->write_iops > 0)
		m->write_gap_ns = NSEC_PER_SEC / p->write_iops;
	return 0;
}

void model_free(struct model *m)
{
	free(m->die_free);
	m->die_free = NULL;
	free(m->die_programs);
	m->die_programs = NULL;
	heap_free(&m->buffer);
	heap_free(&m->busy);
}

void model_set_storm(struct model *m, bool on)
{
	m->storm = on;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Media time, stretched while a storm slows optane/qdlat media (a storm
 * on flash-like media brings GC stalls instead). */
static uint64_t slowed(const struct model *m, uint64_t ns)
{
	return m->storm && !m->flash_like ? ns * m->p.storm_slowdown : ns;
}

/* One FIFO per die: an operation starts when both it and the die are there. */
static uint64_t die_run(struct model *m, unsigned die, uint64_t at, uint64_t cost)
{
	uint64_t end = max_u64(at, m->die_free[die]) + cost;

	m->die_free[die] = end;
	return end;
}

/*
 * A page program on the next die (round-robin, as a flash translation
 * layer appending to open blocks). After every gc_pages programs on a die
 * (storm_gc_pages during a storm) its block is full: the die then spends
 * gc_ns collecting garbage, after the program has been acknowledged, and
 * whatever reaches that die meanwhile waits, reads included.
 *
 * The dies' blocks are staggered: die d is d/dies of a block ahead. With
 * round-robin programs and no offset every die would fill its block within
 * the same few programs and all would stall at once, once per dies x
 * gc_pages programs, which a closed-loop reader meets only once per stall.
 * Counting programs per die from the start (never resetting) keeps the
 * stagger when a storm changes the block size.
 */
static uint64_t program(struct model *m, uint64_t at)
{
	unsigned die = m->next_die;
	unsigned every = m->storm ? m->p.storm_gc_pages : m->p.gc_pages;
	uint64_t end;

	m->next_die = (m->next_die + 1) % m->p.dies;
	end = die_run(m, die, at, m->p.program_ns);
	if (!every)
		return end;
	m->die_programs[die]++;
	if ((m->die_programs[die] + (uint64_t) die * every / m->p.dies) % every == 0) {
		m->die_free[die] += m->p.gc_ns;
		m->gc_stalls++;
	}
	return end;
}

/* buffered: take a buffer slot at or after @now, return when it was free. */
static uint64_t buffer_take(struct model *m, uint64_t now)
{
	/* Slots whose program has finished are free again. */
	while (!heap_empty(&m->buffer) && heap_min_key(&m->buffer) <= now)
		(void) heap_pop(&m->buffer);

	if (m->buffer.n < m->p.buffer_pages)
		return now;

	/* Full: the write waits for the earliest program to finish. */
	return max_u64(now, heap_pop(&m->buffer).key);
}

static uint64_t page_write(struct model *m, uint64_t now)
{
	uint64_t start, end, in;

	switch (m->p.profile) {
	case PROFILE_FLASH:
	case PROFILE_TLC:
	case PROFILE_GC:
		return program(m, now);

	case PROFILE_OPTANE:
		/*
		 * The rate cap spaces out write starts; the write itself then
		 * takes write_ns. Reads never see any of this.
		 */
		start = max_u64(now, m->write_next);
		m->write_next = start + slowed(m, m->write_gap_ns);
		return start + slowed(m, m->p.write_ns);

	case PROFILE_BUFFERED:
		in = buffer_take(m, now);
		end = program(m, in);
		/*
		 * Cannot fail in practice: the heap never holds more than
		 * buffer_pages entries and grew to that size already on the
		 * first fills. If it does, the slot is simply forgotten, which
		 * only makes the buffer briefly larger.
		 */
		(void) heap_push(&m->buffer, end, NULL);
		m->drained_at = max_u64(m->drained_at, end);
		return in + m->p.ack_ns;

	default:
		return now;
	}
}

static uint64_t page_read(struct model *m, uint64_t page, uint64_t now)
{
	/*
	 * Reads go to the die that holds the page and queue behind whatever
	 * that die has accepted before, programs and GC stalls included
	 * (optane: the die array only ever runs reads).
	 */
	return die_run(m, (unsigned) (page % m->p.dies), now, slowed(m, m->p.read_ns));
}

/*
 * qdlat: requests are served in parallel, but each one's service time is
 * fixed on arrival as its pages' base time plus contention_ns for every
 * request already in the device (reads and writes alike). Throughput
 * n / (base + contention x n) keeps growing with depth towards
 * 1 / contention, and a read's latency grows with the write depth.
 */
static uint64_t qdlat_submit(struct model *m, enum model_op op, uint64_t pages,
			     uint64_t now)
{
	uint64_t base = op == MODEL_READ ? m->p.read_ns : m->p.write_ns, due;

	while (!heap_empty(&m->busy) && heap_min_key(&m->busy) <= now)
		(void) heap_pop(&m->busy);
	due = now + slowed(m, base * pages + m->p.contention_ns * m->busy.n);
	/*
	 * On -ENOMEM the request is simply not counted: later ones see one
	 * request fewer in the device, nothing worse.
	 */
	(void) heap_push(&m->busy, due, NULL);
	return due;
}

uint64_t model_submit_page(struct model *m, enum model_op op, uint64_t page,
			   uint64_t now)
{
	if (m->p.profile == PROFILE_QDLAT)
		return qdlat_submit(m, op, 1, now);
	if (op == MODEL_READ)
		return page_read(m, page, now);
	return page_write(m, now);
}

uint64_t model_submit(struct model *m, enum model_op op, uint64_t off,
		      uint64_t len, uint64_t now)
{
	uint64_t first, last, due = now;

	if (op == MODEL_FSYNC) {
		/*
		 * Acknowledged writes are durable except in the write buffer:
		 * a flush waits until the buffer has drained.
		 */
		if (m->p.profile == PROFILE_BUFFERED)
			due = max_u64(now, m->drained_at);
		return due;
	}

	if (len == 0)
		return now;

	first = off / MODEL_PAGE_SIZE;
	last = (off + len - 1) / MODEL_PAGE_SIZE;
	if (m->p.profile == PROFILE_QDLAT)
		return qdlat_submit(m, op, last - first + 1, now);
	for (uint64_t page = first; page <= last; page++) {
		uint64_t end;

		if (op == MODEL_READ)
			end = page_read(m, page, now);
		else
			end = page_write(m, now);
		due = max_u64(due, end);
	}
	return due;
}
