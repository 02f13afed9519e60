/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus API (docs/dbus.md) as both sides see it: the daemon serves it
 * (daemon/bus.c, daemon/bus-device.c), kyber-tunectl calls it
 * (tunectl/tunectl-bus.c). One Manager object and one Device object per
 * tuned device, on the system bus.
 */
#pragma once

#define BUS_NAME "org.kybertune.KyberTune1"
#define BUS_PATH "/org/kybertune/KyberTune1"
#define BUS_MANAGER_INTERFACE "org.kybertune.KyberTune1.Manager"
#define BUS_DEVICE_INTERFACE "org.kybertune.KyberTune1.Device"
#define BUS_DEVICE_PATH_PREFIX "/org/kybertune/KyberTune1/device"
/* Device.GetShares's row: cgroup, weight, weight set (else io.weight's
 * default), share; read and write IOPS and bytes/s; read and write P99
 * (ns); the limits in force (read/write IOPS, read/write bytes/s; 0: none). */
#define BUS_SHARE_ROW "(subdddddtttttt)"

/* The one error name of our own; the others are D-Bus's (shared/error.c). */
#define BUS_ERROR_NO_SUCH_DEVICE "org.kybertune.KyberTune1.Error.NoSuchDevice"

/*
 * The Device interface's properties, in the order the daemon registers
 * them: X(id, member, signature, kind, status_field).
 *   id            names the property in C (BUS_DEVICE_<id>)
 *   member        its D-Bus name
 *   signature     one basic D-Bus type
 *   kind          CONST (fixed for the object's life) or CHANGE (announced
 *                 by PropertiesChanged, at most once per interval)
 *   status_field  where kyber-tunectl keeps it (struct tf_status)
 * Adding a property here adds it to the daemon's vtable and to the CLI's
 * decoder at once; each side then fails to compile until it says what
 * the property holds.
 */
#define BUS_DEVICE_PROPERTIES(X)							\
	X(NAME, "Name", "s", CONST, name)						\
	X(ID, "Id", "s", CONST, id)							\
	X(SCHEDULER, "Scheduler", "s", CHANGE, scheduler)				\
	X(SCHEDULER_REASON, "SchedulerReason", "s", CHANGE, scheduler_reason)		\
	X(SCHEDULER_SWITCHES, "SchedulerSwitches", "t", CHANGE, scheduler_switches)	\
	X(ORIGINAL_CPU_PER_IO, "OriginalCPUPerIO", "t", CHANGE, original_cpu_per_io_ns)	\
	X(KYBER_CPU_PER_IO, "KyberCPUPerIO", "t", CHANGE, kyber_cpu_per_io_ns)		\
	X(GOAL, "Goal", "s", CHANGE, goal)						\
	X(GOAL_SOURCE, "GoalSource", "s", CHANGE, goal_source)				\
	X(STATE, "State", "s", CHANGE, state)						\
	X(REASON, "Reason", "s", CHANGE, reason)					\
	X(READ_TARGET, "ReadTarget", "t", CHANGE, read_target_ns)			\
	X(WRITE_TARGET, "WriteTarget", "t", CHANGE, write_target_ns)			\
	X(ORIGINAL_SCHEDULER, "OriginalScheduler", "s", CHANGE, original_scheduler)	\
	X(ORIGINAL_READ_TARGET, "OriginalReadTarget", "t", CHANGE, original_read_target_ns) \
	X(ORIGINAL_WRITE_TARGET, "OriginalWriteTarget", "t", CHANGE, original_write_target_ns) \
	X(READ_P50, "ReadP50", "t", CHANGE, read_p50_ns)				\
	X(READ_P99, "ReadP99", "t", CHANGE, read_p99_ns)				\
	X(WRITE_P50, "WriteP50", "t", CHANGE, write_p50_ns)				\
	X(WRITE_P99, "WriteP99", "t", CHANGE, write_p99_ns)				\
	X(READ_IOPS, "ReadIOPS", "d", CHANGE, read_iops)				\
	X(WRITE_IOPS, "WriteIOPS", "d", CHANGE, write_iops)				\
	X(READ_DEPTH, "ReadDepth", "u", CHANGE, read_depth)				\
	X(WRITE_DEPTH, "WriteDepth", "u", CHANGE, write_depth)				\
	X(GOAL_METRIC, "GoalMetric", "t", CHANGE, goal_metric_ns)			\
	X(GOAL_MET, "GoalMet", "b", CHANGE, goal_met)					\
	X(CHANGES, "Changes", "t", CHANGE, changes)					\
	X(INTERVAL, "Interval", "t", CHANGE, interval_ns)

enum bus_device_property {
#define BUS_DEVICE_PROPERTY_ENUM(id, member, sig, kind, field) BUS_DEVICE_##id,
	BUS_DEVICE_PROPERTIES(BUS_DEVICE_PROPERTY_ENUM)
#undef BUS_DEVICE_PROPERTY_ENUM
	_BUS_DEVICE_PROPERTY_MAX,
};
