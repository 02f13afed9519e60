/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The device model of flashsim and of the Kyber simulator (tools/kyber-sim): pure
 * functions of (request, arrival time, model state) -> due time. No FUSE
 * and no clock in here, so the model is deterministic and can be unit
 * tested without root. README.md describes the profiles.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap.h"

#define MODEL_PAGE_SIZE 4096ULL
#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

enum model_profile {
	PROFILE_FLASH,
	PROFILE_OPTANE,
	PROFILE_BUFFERED,
	PROFILE_TLC,
	PROFILE_GC,
	PROFILE_QDLAT,
	_PROFILE_MAX,
};

enum model_op {
	MODEL_READ,
	MODEL_WRITE,
	MODEL_FSYNC,
	_MODEL_OP_MAX,
};

/*
 * "Flash-like" profiles (flash, tlc, gc, buffered) have dies with one FIFO
 * each, on which reads wait behind programs and GC stalls.
 */
struct model_params {
	enum model_profile profile;
	uint64_t size;		/* bytes, multiple of MODEL_PAGE_SIZE */
	unsigned dies;		/* flash-like: dies; optane: read channels; qdlat: unused */
	uint64_t read_ns;	/* page read (qdlat: alone in the device) */
	uint64_t program_ns;	/* flash-like: page program */
	uint64_t write_ns;	/* optane: page write; qdlat: page write alone in the device */
	uint64_t write_iops;	/* optane: page write rate cap, 0 = none */
	unsigned buffer_pages;	/* buffered: write buffer size */
	uint64_t ack_ns;	/* buffered: write acknowledge latency */
	unsigned gc_pages;	/* flash-like: page programs per die between GC stalls, 0 = no GC */
	uint64_t gc_ns;		/* flash-like: one GC stall, the die busy (erase + moves) */
	uint64_t contention_ns;	/* qdlat: service time added per request already in the device */
	unsigned storm_gc_pages;	/* storm, flash-like: GC every this many programs per die */
	unsigned storm_slowdown;	/* storm, optane/qdlat: media times multiplied by this */
};

struct model {
	struct model_params p;
	/* Per die (optane: per read channel) time the die becomes idle. */
	uint64_t *die_free;
	/* flash-like: page programs per die so far, while GC was on. */
	uint64_t *die_programs;
	/* Die the next page program goes to (round-robin). */
	unsigned next_die;
	/* optane: earliest start of the next page write (rate cap). */
	uint64_t write_next;
	uint64_t write_gap_ns;
	/* buffered: end-of-program times of the occupied buffer slots. */
	struct heap buffer;
	/* buffered: when everything accepted so far is programmed. */
	uint64_t drained_at;
	/* qdlat: due times of the requests in the device. */
	struct heap busy;
	/* A GC storm is on (model_set_storm()). */
	bool storm;
	/* model_profile_is_flash_like(p.profile) */
	bool flash_like;
	/* GC stalls so far (flash-like), for the statistics. */
	uint64_t gc_stalls;
};

const char *model_profile_to_string(enum model_profile p);
int model_profile_from_string(const char *s);
const char *model_op_to_string(enum model_op op);
bool model_profile_is_flash_like(enum model_profile p);

void model_params_default(struct model_params *p, enum model_profile profile);
/* Returns 0, or -EINVAL and the option name of the offending value. */
int model_params_validate(const struct model_params *p, const char **bad_option);
/* The same, and why (NULL when the value is simply out of range). */
int model_params_check(const struct model_params *p, const char **bad_option,
		       const char **reason);

int model_init(struct model *m, const struct model_params *p);
void model_free(struct model *m);

/*
 * Account a request arriving at @now (ns, nondecreasing across calls) and
 * return the time its reply is due. @off/@len are already clamped to the
 * device; len 0 is due at once.
 */
uint64_t model_submit(struct model *m, enum model_op op, uint64_t off,
		      uint64_t len, uint64_t now);
/*
 * The same for one 4 KiB page (@op MODEL_READ or MODEL_WRITE): what the
 * Kyber simulator issues, without the page arithmetic and the loop.
 */
uint64_t model_submit_page(struct model *m, enum model_op op, uint64_t page,
			   uint64_t now);

/*
 * A garbage-collection storm, from the next request on until switched off:
 * flash-like dies stall for gc_ns after every storm_gc_pages programs
 * instead of every gc_pages (so only writes bring stalls, as on an SSD);
 * optane and qdlat media take storm_slowdown times as long for everything
 * (background media work: wear levelling, the backing file system's
 * writeback).
 */
void model_set_storm(struct model *m, bool on);
