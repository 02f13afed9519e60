/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The metrics file (MetricsFile=, --metrics-file): the tuned devices and
 * the daemon itself in Prometheus' text format (metrics.h), replaced
 * atomically after every interval for node_exporter's textfile collector.
 * Owned by the manager; a failure is logged once per distinct error and
 * never stops the daemon.
 */
#pragma once

#include <stddef.h>

struct device;
struct metrics_writer;

/* -ENOMEM only: the path is tried at the first update. */
int metrics_writer_new(struct metrics_writer **ret, const char *path);
struct metrics_writer *metrics_writer_free(struct metrics_writer *w);
/* Writes the file now, with these devices. */
void metrics_writer_update(struct metrics_writer *w, struct device *const *devs, size_t n);
