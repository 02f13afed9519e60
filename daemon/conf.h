/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration: /etc/kyber-tuned/kyber-tuned.conf and the drop-ins
 * in /etc/kyber-tuned/conf.d, every *.conf (in lexical order, later wins), parsed
 * with libinih. See kyber-tuned.conf(5). An unknown section or key, or a
 * bad value, is a warning naming FILE:LINE; the rest still loads.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONF_PATH "/etc/kyber-tuned/kyber-tuned.conf"
#define CONF_DROPIN_DIR "/etc/kyber-tuned/conf.d"

struct conf_goal {
	char *device;		/* name or /dev path, as written */
	char *goal;		/* goal grammar text, already validated */
	char *where;		/* "FILE:LINE" it came from */
};

struct conf_weight {
	char *device;		/* name or /dev path, as written */
	char *cgroup;		/* normalized path (cgroup-parse.h) */
	uint32_t weight;
	char *where;		/* "FILE:LINE" */
};

struct conf {
	/* [Tuner]; each has_* says whether the key was given */
	bool has_interval, has_settle, has_rollback, has_switch_scheduler, has_max_devices,
	     has_log_level, has_record, has_record_max, has_metrics;
	uint64_t interval_ns;		/* Interval=1s (10ms..1h) */
	uint64_t settle_ns;		/* Settle=300ms (< Interval, <= 10s) */
	bool rollback;			/* Rollback=yes */
	bool switch_scheduler;		/* SwitchScheduler=yes */
	unsigned max_devices;		/* MaxDevices=16 (1..1024) */
	int log_level;			/* LogLevel=info (log.h levels) */
	char *record_path;		/* Record=PATH; empty: off */
	uint64_t record_max_bytes;	/* RecordMaxSize=64M (RECORD_SIZE_MIN..RECORD_SIZE_MAX) */
	char *metrics_path;		/* MetricsFile=PATH; empty: off */
	/* [Goals]: DEVICE=GOAL */
	struct conf_goal *goals;
	size_t n_goals;
	/* [Weights]: DEVICE:CGROUP=WEIGHT */
	struct conf_weight *weights;
	size_t n_weights;
	unsigned warnings;		/* how many warnings were logged */
};

/* The flight record's size cap: a few records at least, a sane file at
 * most. */
#define RECORD_SIZE_MIN 4096ull
#define RECORD_SIZE_MAX (1000ull * 1000 * 1000 * 1000)
/* A RecordMaxSize= / --record-max-size value: -EINVAL or -ERANGE. */
int conf_parse_record_size(const char *s, uint64_t *ret);

/* Parse one file's text into c (adding to what is there). name is used in
 * warnings ("name:LINE: ..."). Never fails on bad content; -ENOMEM only. */
int conf_parse_text(struct conf *c, const char *text, size_t len, const char *name);

/* Main file (missing is fine) then the drop-ins. -errno only for I/O errors
 * other than a missing file or directory, or out of memory. */
int conf_load(struct conf *c, const char *path, const char *dropin_dir);

void conf_done(struct conf *c);

/* conf-weights.c: one [Weights] line, DEVICE:CGROUP=WEIGHT (an empty
 * WEIGHT drops an earlier weight of that pair), where it is "FILE:LINE".
 * A bad line leaves a sentence in warning ("" otherwise) and changes
 * nothing. -ENOMEM only. */
int conf_weights_key(struct conf *c, const char *key, const char *value, const char *where, char *warning,
		     size_t n);
void conf_weights_done(struct conf *c);
/* The device part of a key: a disk name or a path under /dev. */
bool conf_device_valid(const char *d);
