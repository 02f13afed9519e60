/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the operator did and said, which kyber-tuned never undoes: a
 * scheduler or targets changed by hand since kyber-tuned last wrote them
 * (seen at stop, after a reset or pause, and after a crash, through the
 * record of what it left, kept beside the originals), and a configured
 * goal standing behind a goal set at run time.
 */
#include <string.h>

#include "device-internal.h"
#include "log.h"
#include "state.h"

/* What kyber-tuned left on the device: the originals after a reset, else
 * the scheduler it runs the device on and, on Kyber, the targets it wrote
 * (or found there). */
static void left_on_device(const struct device *d, struct kyber_saved *out)
{
	if (d->restored) {
		*out = d->original;
		return;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->scheduler, sizeof(out->scheduler), "%s", device_sched_expected(d));
	out->was_kyber = strcmp(out->scheduler, "kyber") == 0;
	if (out->was_kyber)
		out->targets = d->written;
}

bool kyber_saved_differ(const struct kyber_saved *now, const struct kyber_saved *left, char *why, size_t n)
{
	if (strcmp(now->scheduler, left->scheduler) != 0)
		snprintf(why, n, "scheduler %s where kyber-tuned left %s", now->scheduler, left->scheduler);
	else if (left->was_kyber && (now->targets.read_ns != left->targets.read_ns ||
				     now->targets.write_ns != left->targets.write_ns))
		snprintf(why, n, "targets %llu/%llu ns where kyber-tuned left %llu/%llu ns",
			 (unsigned long long)now->targets.read_ns, (unsigned long long)now->targets.write_ns,
			 (unsigned long long)left->targets.read_ns, (unsigned long long)left->targets.write_ns);
	else
		return false;
	return true;
}

static bool original_left(const struct original *e, struct kyber_saved *out)
{
	if (!e->left_scheduler[0])
		return false;	/* recorded by a version that kept no such record */
	memset(out, 0, sizeof(*out));
	snprintf(out->scheduler, sizeof(out->scheduler), "%s", e->left_scheduler);
	out->was_kyber = strcmp(out->scheduler, "kyber") == 0;
	out->targets = (struct kyber_targets) { e->left_read_target_ns, e->left_write_target_ns };
	return true;
}

bool original_changed(const char *sysroot, const char *name, const struct original *e, char *why, size_t n)
{
	struct kyber_saved left, now;

	return original_left(e, &left) && kyber_sysfs_save(sysroot, name, &now) == 0 &&
	       kyber_saved_differ(&now, &left, why, n);
}

bool device_as_left(struct device *d, char *why, size_t n)
{
	struct kyber_saved now, left;

	if (kyber_sysfs_save(d->env.o->sysroot, d->dev.name, &now) < 0)
		return true;	/* unreadable: the disk is going; nothing to compare */
	left_on_device(d, &left);
	return !kyber_saved_differ(&now, &left, why, n);
}

void device_note_left(struct device *d)
{
	struct original *e = originals_find(d->env.originals, d->id), copy;
	struct kyber_saved left;

	if (!e || d->overridden || d->goal.mode == GOAL_MODE_ADVISE)
		return;
	left_on_device(d, &left);
	if (strcmp(e->left_scheduler, left.scheduler) == 0 && e->left_read_target_ns == left.targets.read_ns &&
	    e->left_write_target_ns == left.targets.write_ns)
		return;
	copy = *e;	/* originals_put() copies the strings */
	snprintf(copy.left_scheduler, sizeof(copy.left_scheduler), "%s", left.scheduler);
	copy.left_read_target_ns = left.was_kyber ? left.targets.read_ns : 0;
	copy.left_write_target_ns = left.was_kyber ? left.targets.write_ns : 0;
	if (originals_put(d->env.originals, &copy) == 0)
		d->env.save_originals(d->env.owner);
}

void device_mark_overridden(struct device *d, const char *why)
{
	d->overridden = true;
	device_set_state(d, CTL_OVERRIDDEN, why);
	log_dev_event(LOG_LEVEL_NOTICE, d->dev.name, LOG_MESSAGE_OVERRIDDEN, "%s; not touching it until resumed",
		      why);
}

/* Someone else wrote the scheduler or a target since kyber-tuned did:
 * hands off until resumed. Checked before every interval's decision and
 * before each write of a pulse, which must not write over theirs. */
bool device_check_override(struct device *d)
{
	char what[160], why[200];

	if (d->overridden)
		return true;
	if (device_as_left(d, what, sizeof(what)))
		return false;
	snprintf(why, sizeof(why), "changed by someone else: %s", what);
	device_mark_overridden(d, why);
	return true;
}

void device_set_config_goal(struct device *d, const char *goal_text)
{
	snprintf(d->config_goal, sizeof(d->config_goal), "%s", goal_text ?: "");
}

const char *device_config_goal(const struct device *d)
{
	return d->config_goal[0] ? d->config_goal : NULL;
}
