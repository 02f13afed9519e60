/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tunectl replay: a flight-recorder file (kyber-tuned --record), one
 * line or JSON object per record; corruption is reported with its offset
 * after everything readable was printed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "goal.h"
#include "log.h"
#include "macro.h"
#include "record.h"
#include "tunectl.h"

static void op_from_record(struct tf_op *o, const Kybertune__OpSummary *s)
{
	if (!s)
		return;
	*o = (struct tf_op) {
		.iops = s->iops, .p50_ns = s->p50_ns, .p90_ns = s->p90_ns, .p99_ns = s->p99_ns,
		.p999_ns = s->p999_ns, .mean_ns = s->mean_ns, .device_p90_ns = s->device_p90_ns,
		.device_p99_ns = s->device_p99_ns, .depth = s->depth, .completed = s->completed,
	};
}

/* Met, missed (1, 0), or -1 when the record has no read goal or no
 * estimate: the record keeps the goal and the metric, not the verdict. */
static int goal_met(const Kybertune__IntervalRecord *rec)
{
	struct goal g;

	if (!rec->metric_ns || !rec->goal || goal_parse(rec->goal, &g, NULL) < 0 ||
	    !g.has_read)
		return -1;
	return rec->metric_ns <= g.read_ns;
}

static void print_record(const Kybertune__IntervalRecord *rec)
{
	struct tf_interval iv = {
		.time_ns = rec->time_ns, .device = rec->device, .goal = rec->goal, .state = rec->state,
		.reason = rec->reason, .interval_ns = rec->interval_ns,
		.read_target_ns = rec->read_target_ns, .write_target_ns = rec->write_target_ns,
		.changed = rec->changed, .metric_ns = rec->metric_ns, .goal_met = goal_met(rec),
	};

	op_from_record(&iv.read, rec->read);
	op_from_record(&iv.write, rec->write);
	if (arg_json)
		tf_interval_json(stdout, &iv);
	else
		tf_interval_line(stdout, &iv, true);
}

/* The whole file: mapped when it is a regular file, else read. */
static int load_file(const char *path, uint8_t **ret, size_t *ret_len, bool *mapped)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat st;

	*mapped = false;
	if (fd < 0 || fstat(fd, &st) < 0)
		return negative_errno();
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED)
			return negative_errno();
		*ret = p;
		*ret_len = (size_t)st.st_size;
		*mapped = true;
		return 0;
	}
	for (;;) {
		ssize_t l;

		if (cap - len < 65536) {
			uint8_t *nb = realloc(buf, cap = cap * 2 + 65536);

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		l = read(fd, buf + len, cap - len);
		if (l < 0) {
			int e = negative_errno();

			free(buf);
			return e;
		}
		if (l == 0)
			break;
		len += (size_t)l;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

int verb_replay(sd_bus *bus, int argc, char **argv)
{
	uint8_t *buf = NULL;
	size_t len = 0, off = 0, n = 0;
	bool mapped;
	int r, ret = 0;

	r = load_file(argv[1], &buf, &len, &mapped);
	if (r < 0) {
		log_error_errno(r, "Failed to open %s: %m", argv[1]);
		return 1;
	}
	for (;;) {
		Kybertune__IntervalRecord *rec = NULL;
		size_t at = off;

		r = record_next(buf, len, &off, &rec);
		if (r == 0)
			break;
		if (r < 0) {
			/* What was readable is out; then the damage, precisely. */
			fflush(stdout);
			log_error("%s: corrupt or truncated record at offset %zu of %zu bytes (after %zu good "
				  "record%s)", argv[1], at, len, n, n == 1 ? "" : "s");
			ret = 1;
			break;
		}
		print_record(rec);
		kybertune__interval_record__free_unpacked(rec, NULL);
		n++;
	}
	if (mapped)
		munmap(buf, len);
	else
		free(buf);
	return ret;
}
