/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kyber's depth changes, as the observer's ring buffer has them, handed to
 * the device they are of: a grow pulse under way follows them
 * (device-pulse.c). The fd is polled all the time; the devices ignore a
 * change while no pulse is under way, and Kyber changes a depth at most
 * every 100 ms.
 */
#include <sys/epoll.h>

#include "blockdev.h"
#include "device.h"
#include "log.h"
#include "manager-internal.h"
#include "observer.h"

static void on_adjust(unsigned slot, int op, uint32_t depth, void *userdata)
{
	struct manager *m = userdata;

	for (size_t i = 0; i < m->n_devs; i++)
		device_pulse_on_adjust(m->devs[i], slot, op, depth);
}

static int on_adjusts_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct manager *m = userdata;
	int r = observer_adjusts_consume(m->observer);

	if (r < 0)
		log_warning_errno(r, "Failed to read Kyber's depth changes: %m");
	return 0;
}

int manager_watch_adjusts(struct manager *m)
{
	int fd = observer_adjusts_open(m->observer, on_adjust, m), r;

	if (fd < 0)
		return fd;
	r = sd_event_add_io(m->event, &m->adjusts, fd, EPOLLIN, on_adjusts_ready, m);
	if (r < 0)
		return log_error_errno(r, "Failed to watch Kyber's depth changes: %m");
	return 0;
}

void manager_unwatch_adjusts(struct manager *m)
{
	m->adjusts = sd_event_source_disable_unref(m->adjusts);
	if (m->observer)
		observer_adjusts_close(m->observer);
}
