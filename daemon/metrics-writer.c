/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "controller.h"
#include "device.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "metrics.h"
#include "metrics-writer.h"

/* Readable by node_exporter, which runs as its own user; kyber-tuned's
 * UMask=0077 would otherwise leave it root's alone. */
#define METRICS_FILE_MODE 0644
/* Where the kernel shows this process' resident pages (the second field). */
#define STATM_PATH "/proc/self/statm"

struct metrics_writer {
	char *path;
	int last_error;		/* of the last update; 0: it worked */
};

int metrics_writer_new(struct metrics_writer **ret, const char *path)
{
	struct metrics_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->path = strdup(path);
	if (!w->path) {
		free(w);
		return -ENOMEM;
	}
	*ret = w;
	return 0;
}

struct metrics_writer *metrics_writer_free(struct metrics_writer *w)
{
	if (w) {
		free(w->path);
		free(w);
	}
	return NULL;
}

static uint64_t cpu_usec(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* 0 when unknown: the gauge then says so rather than the run failing. */
static uint64_t rss_bytes(void)
{
	_cleanup_fclose_ FILE *f = fopen(STATM_PATH, "re");
	unsigned long long size, resident;
	long page = sysconf(_SC_PAGESIZE);

	if (!f || page <= 0 || fscanf(f, "%llu %llu", &size, &resident) != 2)
		return 0;
	return (uint64_t)resident * (uint64_t)page;
}

/* The whole text, in memory: the file is replaced only by a complete one. */
static int format_all(struct device *const *devs, size_t n, char **ret, size_t *ret_len)
{
	const char *states[_CTL_STATE_MAX];
	_cleanup_free_ struct metrics_device *md = calloc(n ?: 1, sizeof(*md));
	struct metrics_input in = {
		.devs = md, .n_devs = n, .state_names = states, .n_states = _CTL_STATE_MAX,
		.cpu_usec = cpu_usec(), .rss_bytes = rss_bytes(),
	};
	FILE *f;
	int r;

	if (!md)
		return -ENOMEM;
	for (int s = 0; s < _CTL_STATE_MAX; s++)
		states[s] = ctl_state_to_string(s);
	for (size_t i = 0; i < n; i++)
		device_get_metrics(devs[i], &md[i]);
	f = open_memstream(ret, ret_len);
	if (!f)
		return -ENOMEM;
	r = metrics_format(f, &in);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0) {
		free(*ret);
		*ret = NULL;
	}
	return r;
}

void metrics_writer_update(struct metrics_writer *w, struct device *const *devs, size_t n)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r;

	if (!w)
		return;
	r = format_all(devs, n, &text, &len);
	if (r >= 0)
		r = write_file_atomic_full(w->path, (const uint8_t *)text, len, METRICS_FILE_MODE, 0);
	/* Once per distinct error: a full disk must not flood the journal
	 * every interval; a different cause is news. */
	if (r < 0 && r != w->last_error)
		log_warning_errno(r, "Failed to write metrics file %s: %m", w->path);
	else if (r >= 0 && w->last_error)
		log_info("Writing metrics file %s again", w->path);
	w->last_error = r < 0 ? r : 0;
}
