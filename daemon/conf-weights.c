/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration's [Weights] section: DEVICE:CGROUP=WEIGHT (conf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-parse.h"
#include "conf.h"
#include "macro.h"
#include "parse-util.h"
#include "share.h"

static void weight_done(struct conf_weight *w)
{
	free(w->device);
	free(w->cgroup);
	free(w->where);
	memset(w, 0, sizeof(*w));
}

void conf_weights_done(struct conf *c)
{
	for (size_t i = 0; i < c->n_weights; i++)
		weight_done(&c->weights[i]);
	free(c->weights);
	c->weights = NULL;
	c->n_weights = 0;
}

static struct conf_weight *find(struct conf *c, const char *device, const char *cgroup)
{
	for (size_t i = 0; i < c->n_weights; i++)
		if (strcmp(c->weights[i].device, device) == 0 && strcmp(c->weights[i].cgroup, cgroup) == 0)
			return &c->weights[i];
	return NULL;
}

int conf_weights_key(struct conf *c, const char *key, const char *value, const char *where, char *warning,
		     size_t n)
{
	char device[128], cgroup[CGROUP_PATH_MAX];
	const char *colon = strchr(key, ':'), *why;
	struct conf_weight *w, *grown, nw = {};
	uint64_t weight = 0;

	warning[0] = 0;
	if (!colon || colon == key || (size_t)(colon - key) >= sizeof(device)) {
		snprintf(warning, n, "Invalid key '%s' (expected DEVICE:CGROUP, such as nvme0n1:tenants/a), "
			 "ignoring.", key);
		return 0;
	}
	memcpy(device, key, (size_t)(colon - key));
	device[colon - key] = 0;
	if (!conf_device_valid(device)) {
		snprintf(warning, n, "Invalid device '%s' (expected a disk name such as nvme0n1 or a path "
			 "under /dev), ignoring.", device);
		return 0;
	}
	if (cgroup_path_normalize(colon + 1, cgroup, sizeof(cgroup), &why) < 0) {
		snprintf(warning, n, "Invalid cgroup '%s' for %s: %s, ignoring.", colon + 1, device, why);
		return 0;
	}
	w = find(c, device, cgroup);
	if (!*value) {
		if (w) {
			weight_done(w);
			*w = c->weights[--c->n_weights];
		}
		return 0;
	}
	if (parse_u64_strict(value, false, &weight) < 0 || weight < SHARE_WEIGHT_MIN || weight > SHARE_WEIGHT_MAX) {
		snprintf(warning, n, "Invalid weight '%s' for cgroup %s on %s (expected %u-%u, as io.weight), "
			 "ignoring.", value, cgroup, device, SHARE_WEIGHT_MIN, SHARE_WEIGHT_MAX);
		return 0;
	}
	nw.where = strdup(where);
	if (!nw.where)
		return -ENOMEM;
	if (w) {
		free(w->where);
		w->where = nw.where;
		w->weight = (uint32_t)weight;
		return 0;
	}
	nw.device = strdup(device);
	nw.cgroup = strdup(cgroup);
	nw.weight = (uint32_t)weight;
	grown = reallocarray(c->weights, c->n_weights + 1, sizeof(*grown));
	if (!nw.device || !nw.cgroup || !grown) {
		if (grown)
			c->weights = grown;
		weight_done(&nw);
		return -ENOMEM;
	}
	c->weights = grown;
	c->weights[c->n_weights++] = nw;
	return 0;
}
