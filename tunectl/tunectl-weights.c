/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tunectl weights' table and JSON (tunectl-weights.h). Pure. */
#include <string.h>

#include "parse-util.h"
#include "tunectl-format.h"
#include "tunectl-weights.h"

/* Printable: control characters as "?", the rest as it is. */
static void print_escaped(FILE *f, const char *s, int width)
{
	int n = 0;

	for (; *s; s++, n++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
	for (; n < width; n++)
		fputc(' ', f);
}

static const char *limit_text(char *buf, size_t n, uint64_t iops, uint64_t bps)
{
	char a[16], b[16];

	if (!iops && !bps)
		return "-";
	if (iops && bps)
		snprintf(buf, n, "%s/%sB", format_count_si(a, sizeof(a), (double)iops),
			 format_count_si(b, sizeof(b), (double)bps));
	else if (iops)
		snprintf(buf, n, "%s", format_count_si(a, sizeof(a), (double)iops));
	else
		snprintf(buf, n, "%sB/s", format_count_si(b, sizeof(b), (double)bps));
	return buf;
}

void tf_shares_print(FILE *f, const char *device, const struct tf_share *s, size_t n)
{
	fprintf(f, "%-32s %6s %6s %8s %8s %9s %9s %9s %9s %11s %11s\n", "CGROUP", "WEIGHT", "SHARE", "R-IOPS",
		"W-IOPS", "R-BYTES/s", "W-BYTES/s", "R-P99", "W-P99", "R-LIMIT", "W-LIMIT");
	for (size_t i = 0; i < n; i++) {
		char ri[16], wi[16], rb[16], wb[16], rp[DURATION_BUF_MAX], wp[DURATION_BUF_MAX], rl[40], wl[40];

		print_escaped(f, s[i].cgroup, 32);
		fprintf(f, " %5u%c %5.1f%% %8s %8s %9s %9s %9s %9s %11s %11s\n", s[i].weight,
			s[i].weighted ? ' ' : '*', 100 * s[i].share,
			format_count_si(ri, sizeof(ri), s[i].read_iops),
			format_count_si(wi, sizeof(wi), s[i].write_iops),
			format_count_si(rb, sizeof(rb), s[i].read_bps),
			format_count_si(wb, sizeof(wb), s[i].write_bps),
			s[i].read_p99_ns ? format_duration(rp, sizeof(rp), s[i].read_p99_ns) : "-",
			s[i].write_p99_ns ? format_duration(wp, sizeof(wp), s[i].write_p99_ns) : "-",
			limit_text(rl, sizeof(rl), s[i].limit_read_iops, s[i].limit_read_bps),
			limit_text(wl, sizeof(wl), s[i].limit_write_iops, s[i].limit_write_bps));
	}
	if (!n)
		fprintf(f, "(no cgroup has a weight on %s)\n", device);
	else
		fprintf(f, "* no weight set: io.weight's default\n");
}

int tf_shares_json(FILE *f, const char *device, const struct tf_share *s, size_t n)
{
	struct tf_json j;

	tf_json_begin(&j, f);
	tf_json_str(&j, "device", device);
	tf_json_array(&j, "cgroups");
	for (size_t i = 0; i < n; i++) {
		tf_json_object(&j, NULL);
		tf_json_str(&j, "cgroup", s[i].cgroup);
		tf_json_u64(&j, "weight", s[i].weight);
		tf_json_bool(&j, "weight_set", s[i].weighted);
		tf_json_dbl(&j, "share", s[i].share);
		tf_json_dbl(&j, "read_iops", s[i].read_iops);
		tf_json_dbl(&j, "write_iops", s[i].write_iops);
		tf_json_dbl(&j, "read_bytes_per_sec", s[i].read_bps);
		tf_json_dbl(&j, "write_bytes_per_sec", s[i].write_bps);
		if (s[i].read_p99_ns)
			tf_json_u64(&j, "read_p99_ns", s[i].read_p99_ns);
		else
			tf_json_null(&j, "read_p99_ns");
		if (s[i].write_p99_ns)
			tf_json_u64(&j, "write_p99_ns", s[i].write_p99_ns);
		else
			tf_json_null(&j, "write_p99_ns");
		tf_json_object(&j, "limit");
		tf_json_u64(&j, "read_iops", s[i].limit_read_iops);
		tf_json_u64(&j, "write_iops", s[i].limit_write_iops);
		tf_json_u64(&j, "read_bytes_per_sec", s[i].limit_read_bps);
		tf_json_u64(&j, "write_bytes_per_sec", s[i].limit_write_bps);
		tf_json_object_end(&j);
		tf_json_object_end(&j);
	}
	tf_json_array_end(&j);
	return tf_json_end(&j);
}
