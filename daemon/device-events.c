/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-device.h>

#include "device-events.h"
#include "log.h"
#include "macro.h"

/* Room for a burst (a shelf of disks plugged at once) between two turns
 * of the event loop; beyond it the kernel drops events and we rescan. */
#define UEVENT_RCVBUF_BYTES (1024 * 1024)
/* The kernel's uevents are at most 2 KiB of variables plus the header. */
#define UEVENT_MSG_MAX 8192
/* The kernel's multicast group for its own uevents (udev's is 2). */
#define UEVENT_GROUP_KERNEL 1

struct device_events {
	sd_device_monitor *monitor;	/* udev */
	sd_event_source *io;		/* kernel */
	int fd;
	device_event_handler cb;
	void *userdata;
};

int device_events_source_from_string(const char *s, enum device_events_source *ret)
{
	static const char *const names[_DEVICE_EVENTS_MAX] = {
		[DEVICE_EVENTS_AUTO] = "auto",
		[DEVICE_EVENTS_UDEV] = "udev",
		[DEVICE_EVENTS_KERNEL] = "kernel",
		[DEVICE_EVENTS_OFF] = "off",
	};

	for (int i = 0; s && i < _DEVICE_EVENTS_MAX; i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = i;
			return 0;
		}
	return -EINVAL;
}

static int on_udev_event(sd_device_monitor *monitor, sd_device *dev, void *userdata)
{
	struct device_events *e = userdata;
	sd_device_action_t a;
	const char *name;

	if (sd_device_get_action(dev, &a) < 0 || sd_device_get_sysname(dev, &name) < 0)
		return 0;
	if (a == SD_DEVICE_ADD)
		e->cb(DEVICE_EVENT_ADD, name, e->userdata);
	else if (a == SD_DEVICE_CHANGE)
		e->cb(DEVICE_EVENT_CHANGE, name, e->userdata);
	else if (a == SD_DEVICE_REMOVE)
		e->cb(DEVICE_EVENT_REMOVE, name, e->userdata);
	return 0;
}

static int start_udev(struct device_events *e, sd_event *event)
{
	int r;

	r = sd_device_monitor_new(&e->monitor);
	if (r >= 0)
		r = sd_device_monitor_filter_add_match_subsystem_devtype(e->monitor, "block", "disk");
	if (r >= 0)
		r = sd_device_monitor_attach_event(e->monitor, event);
	if (r >= 0)
		r = sd_device_monitor_start(e->monitor, on_udev_event, e);
	if (r < 0)
		return log_error_errno(r, "Failed to watch block devices through udev: %m");
	log_debug("Watching block devices through udev");
	return 0;
}

/* Reads what is queued. Only the kernel (port 0) is believed: any process
 * may send to a netlink group it can bind. */
static int on_kernel_event(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct device_events *e = userdata;
	char buf[UEVENT_MSG_MAX];

	for (;;) {
		struct sockaddr_nl from = {};
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1 };
		struct uevent ev;
		ssize_t n;

		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			log_notice("Missed block device events (the receive buffer overflowed); looking at every "
				   "device again");
			e->cb(DEVICE_EVENT_LOST, NULL, e->userdata);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n < 0)
			return log_warning_errno(-errno, "Failed to read block device events: %m");
		if (from.nl_pid != 0 || (msg.msg_flags & MSG_TRUNC))
			continue;
		if (uevent_parse(buf, (size_t)n, &ev) == 0 && ev.disk && ev.action != DEVICE_EVENT_OTHER)
			e->cb(ev.action, ev.name, e->userdata);
	}
}

static int start_kernel(struct device_events *e, sd_event *event)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = UEVENT_GROUP_KERNEL };
	int size = UEVENT_RCVBUF_BYTES, r;

	e->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
	if (e->fd < 0)
		return log_error_errno(-errno, "Failed to open the kernel's device event socket: %m");
	/* Above the system limit needs CAP_NET_ADMIN; the plain size is capped. */
	if (setsockopt(e->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(e->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(e->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return log_error_errno(-errno, "Failed to listen to the kernel's device events: %m");
	r = sd_event_add_io(event, &e->io, e->fd, EPOLLIN, on_kernel_event, e);
	if (r < 0)
		return log_error_errno(r, "Failed to watch the kernel's device events: %m");
	log_debug("Watching block devices through the kernel's uevents");
	return 0;
}

int device_events_new(struct device_events **ret, sd_event *event, enum device_events_source source,
		      device_event_handler cb, void *userdata)
{
	struct device_events *e;
	int r;

	*ret = NULL;
	if (source == DEVICE_EVENTS_OFF)
		return 0;
	if (source == DEVICE_EVENTS_AUTO)
		source = access("/run/udev/control", F_OK) == 0 ? DEVICE_EVENTS_UDEV : DEVICE_EVENTS_KERNEL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return log_oom();
	*e = (struct device_events) { .fd = -1, .cb = cb, .userdata = userdata };
	r = source == DEVICE_EVENTS_UDEV ? start_udev(e, event) : start_kernel(e, event);
	if (r < 0) {
		device_events_free(e);
		return r;
	}
	*ret = e;
	return 0;
}

struct device_events *device_events_free(struct device_events *e)
{
	if (!e)
		return NULL;
	sd_device_monitor_unref(e->monitor);
	sd_event_source_disable_unref(e->io);
	if (e->fd >= 0)
		close(e->fd);
	free(e);
	return NULL;
}
