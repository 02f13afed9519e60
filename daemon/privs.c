/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <sys/prctl.h>

#include "log.h"
#include "macro.h"
#include "privs.h"

/*
 * What the steady state may need, as root (uid 0 owns sysfs and the state
 * directories, so file writes need no capability):
 *  - CAP_BPF: the observer's maps are read and updated (a device's goal set
 *    later needs a map update) through bpf(2). Before Linux 6.5 the kernel
 *    refused every bpf(2) command without it when unprivileged BPF was
 *    disabled; since then only creating maps and loading programs need it.
 *    service.c keeps it only where privs_needed() shows it is needed.
 * Loading and attaching needed CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN);
 * those are gone once the programs are attached.
 */

int privs_drop(const cap_value_t *keep, size_t n)
{
	cap_t caps;
	int r = 0;

	/* The bounding set first: nothing exec'd later can get more. That
	 * takes CAP_SETPCAP; without it (the unit leaves it out) systemd has
	 * narrowed the bounding set already and NoNewPrivileges= holds. */
	for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++) {
		bool kept = false;

		for (size_t i = 0; i < n; i++)
			kept |= keep[i] == c;
		if (kept || prctl(PR_CAPBSET_READ, c, 0, 0, 0) <= 0)
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
			if (errno == EPERM) {
				log_debug("No CAP_SETPCAP: leaving the bounding set as it is");
				break;
			}
			return log_error_errno(negative_errno(), "Failed to drop capability %d from the "
					       "bounding set: %m", (int)c);
		}
	}
	caps = cap_init();
	if (!caps)
		return -ENOMEM;
	if (n && (cap_set_flag(caps, CAP_EFFECTIVE, (int)n, keep, CAP_SET) < 0 ||
		  cap_set_flag(caps, CAP_PERMITTED, (int)n, keep, CAP_SET) < 0)) {
		r = negative_errno();
		goto out;
	}
	if (cap_set_proc(caps) < 0)
		r = log_error_errno(negative_errno(), "Failed to drop capabilities: %m");
out:
	cap_free(caps);
	return r;
}

static int set_effective(cap_value_t cap, cap_flag_value_t v)
{
	cap_t caps = cap_get_proc();
	int r = 0;

	if (!caps)
		return negative_errno();
	if (cap_set_flag(caps, CAP_EFFECTIVE, 1, &cap, v) < 0 || cap_set_proc(caps) < 0)
		r = negative_errno();
	cap_free(caps);
	return r;
}

int privs_needed(cap_value_t cap, int (*probe)(void *userdata), void *userdata)
{
	int r, needed;

	r = set_effective(cap, CAP_CLEAR);
	if (r < 0)
		return log_error_errno(r, "Failed to lower capability %d: %m", (int)cap);
	needed = probe(userdata) < 0;
	r = set_effective(cap, CAP_SET);
	if (r < 0)
		return log_error_errno(r, "Failed to raise capability %d again: %m", (int)cap);
	return needed;
}
