# kyber-tuned: build, test and demo.
#
#   make deps    install every build/test dependency from Debian packages (idempotent),
#                and fetch promtool into $(BUILD)/promtool without installing Prometheus
#   make         build BPF objects, skeletons, daemon, CLI, protobuf code, test device
#   make check   deps + build + unit tests (ASan/UBSan) + real-kernel tests (root)
#   make demo    deps + build + the tuner demo on the flash-model device (root)
#   make bench   benchmarks, written into docs/BENCHMARKS.md (root; bench-full: all of them)
#
# All outputs go to $(BUILD)/.

BUILD ?= build
PYTHON ?= /usr/bin/python3
CC ?= gcc
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
PROTOC_C ?= protoc-c
# Kernel BTF that vmlinux.h is generated from; point it elsewhere to build
# against another kernel.
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
PKG_CONFIG ?= pkg-config

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/' -e 's/s390x/s390/')

# Debian packages needed to build, test, benchmark and demo.
DEB_PACKAGES := clang llvm make gcc pkg-config libbpf-dev bpftool \
	libsystemd-dev libcap-dev protobuf-c-compiler libprotobuf-c-dev \
	libfuse3-dev fuse3 libinih-dev libcmocka-dev libclang-rt-14-dev \
	fio util-linux dbus systemd python3 python3-pytest python3-matplotlib \
	libbpf-tools scdoc libjson-c-dev

WARN := -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-unused-parameter -Wvla -Wdate-time
CFLAGS ?= -O2 -g
# Include paths follow the layout's boundaries (README, "Layout"): shared/
# sees only itself; the controller, shared/ and itself; the daemon, those
# and daemon/; the CLI, shared/ and tunectl/. Tests and tools see them all.
CPPFLAGS_BASE := -D_GNU_SOURCE -I$(BUILD) -I$(BUILD)/gen -Ibpf
INC_SHARED := -Ishared
INC_CONTROLLER := $(INC_SHARED) -Idaemon/controller
INC_DAEMON := $(INC_CONTROLLER) -Idaemon
INC_TUNECTL := $(INC_SHARED) -Itunectl
INC_TOOLS := -Itools/flashsim -Itools/kyber-sim
CPPFLAGS_ALL := $(CPPFLAGS_BASE) $(INC_DAEMON) -Itunectl $(INC_TOOLS)
CFLAGS_ALL := -std=gnu11 $(WARN) $(CFLAGS) -fstack-protector-strong \
	-D_FORTIFY_SOURCE=2 -fPIE
LDFLAGS_ALL := -pie -Wl,-z,relro,-z,now $(LDFLAGS)
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all

LIBS_DAEMON := $(shell $(PKG_CONFIG) --libs libbpf libsystemd libcap libprotobuf-c inih json-c 2>/dev/null)
# The CLI: sd-bus client and the flight-recorder decoder only.
LIBS_TUNECTL := $(shell $(PKG_CONFIG) --libs libsystemd libprotobuf-c json-c 2>/dev/null)
CFLAGS_FUSE := $(shell $(PKG_CONFIG) --cflags fuse3 2>/dev/null)
LIBS_FUSE := $(shell $(PKG_CONFIG) --libs fuse3 2>/dev/null)

# ---------------------------------------------------------------- sources
# shared/: what both programs use (logging, parsing, histograms, the goal
# grammar, the flight record). Pure but for log.c and record.c's files.
SHARED_SRCS := shared/log.c shared/parse-util.c shared/hist.c shared/goal.c shared/error.c \
	shared/record.c
# daemon/controller/: the control law and its parts (controller.h). Pure:
# linked into unit tests without root.
CTL_SRCS := daemon/controller/controller.c daemon/controller/ctl-protect.c \
	daemon/controller/ctl-targets.c daemon/controller/ctl-sched.c \
	daemon/controller/ctl-metric.c daemon/controller/ctl-regime.c \
	daemon/controller/ctl-levels.c daemon/controller/ctl-interference.c \
	daemon/controller/ctl-host.c daemon/controller/ctl-spike.c daemon/controller/ctl-probe.c \
	daemon/controller/ctl-aim.c daemon/controller/ctl-scatter.c daemon/controller/ctl-pulse.c \
	daemon/controller/ctl-grow.c
# daemon/: the pipeline (snapshot -> interval -> controller input -> report),
# pure, then the modules that touch the system.
PIPELINE_SRCS := daemon/interval.c daemon/host-cpu.c daemon/ctl-sample.c daemon/report.c daemon/uevent.c daemon/metrics-totals.c \
	daemon/metrics.c daemon/ksym-ranges.c daemon/profile.c daemon/share.c daemon/cgroup-parse.c
SYS_SRCS := daemon/log-journal.c daemon/metrics-writer.c daemon/observer.c daemon/observer-cgroup.c daemon/observer-adjusts.c daemon/cgroup-io.c daemon/cost-probe.c daemon/kyber-sysfs.c \
	daemon/blockdev.c daemon/blockdev-user.c daemon/measure.c daemon/observe.c daemon/manager.c daemon/manager-goals.c daemon/manager-cost.c daemon/manager-previous.c daemon/manager-weights.c daemon/manager-adjusts.c daemon/manager-hotplug.c daemon/device-events.c daemon/device.c daemon/device-pulse.c daemon/device-status.c daemon/device-share.c daemon/device-operator.c daemon/device-sched.c daemon/device-profile.c daemon/profile-dirs.c \
	daemon/service.c daemon/conf.c daemon/conf-load.c daemon/conf-weights.c daemon/bus.c daemon/bus-device.c daemon/bus-auth.c daemon/state.c daemon/state-table.c daemon/originals.c daemon/fileio.c \
	daemon/privs.c
DAEMON_SRCS := daemon/main.c $(SHARED_SRCS) $(CTL_SRCS) $(PIPELINE_SRCS) $(SYS_SRCS)
# tunectl/: the CLI. An sd-bus client and the flight-record decoder.
TUNECTL_SRCS := tunectl/tunectl.c tunectl/tunectl-bus.c tunectl/tunectl-monitor.c \
	tunectl/tunectl-replay.c tunectl/tunectl-format.c tunectl/tunectl-json.c tunectl/tunectl-weights.c $(SHARED_SRCS)

BPF_SRCS := bpf/kyber_observer.bpf.c bpf/sched_cost.bpf.c
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))

PROTO_SRCS := proto/kyber_tuned.proto
PROTO_C := $(patsubst proto/%.proto,$(BUILD)/gen/%.pb-c.c,$(PROTO_SRCS))
PROTO_H := $(PROTO_C:.c=.h)

UNIT_TESTS := test-hist test-parse-util test-kyber-sysfs test-report test-blockdev \
	test-kyber-sim test-kyber-sim-matrix test-flashsim-model test-goal test-ctl-law test-ctl-relax test-ctl-disturb test-ctl-aim test-ctl-step test-ctl-scatter test-ctl-pulse test-ctl-targets \
	test-controller test-ctl-sched test-conf test-conf-load test-state test-tunectl-format test-uevent test-metrics \
	test-ksym-ranges test-profile test-share test-cgroup-parse test-tunectl-weights test-host-cpu
UNIT_BINS := $(addprefix $(BUILD)/tests/,$(UNIT_TESTS))

HEADERS := $(wildcard shared/*.h daemon/*.h daemon/controller/*.h tunectl/*.h bpf/*.h)
# Man pages, from scdoc sources: build/man/kyber-tuned.8 and so on.
SCDOC ?= scdoc
MAN_PAGES := $(patsubst docs/man/%.scd,$(BUILD)/man/%,$(wildcard docs/man/*.scd))

.PHONY: all deps promtool check unit-test tuner-matrix tuner-matrix-seeds kernel-test demo bench bench-full bench-observer bench-generalize bench-sched bench-profiles bench-weights clean lint fuzz man install uninstall deb
.DELETE_ON_ERROR:
.SECONDARY: $(BPF_OBJS) $(PROTO_H)

all: $(BUILD)/kyber-tuned $(BUILD)/kyber-tunectl $(BUILD)/flashsim $(PROTO_C) $(MAN_PAGES)

# ---------------------------------------------------------------- deps
# Skips apt entirely when everything is installed already.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "Installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: must run as root to install packages" >&2; exit 1; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get -o DPkg::Lock::Timeout=600 update -q && \
		apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $$missing; \
	else \
		echo "make deps: all $(words $(DEB_PACKAGES)) packages already installed"; \
	fi
	@$(MAKE) -s $(PROMTOOL) || \
		echo "make deps: could not fetch promtool; tests/integration/test_metrics.py will skip its lint" >&2

# promtool lints the metrics file in the tests. Debian ships it in the
# prometheus package, whose installation starts a Prometheus server: the
# .deb is only downloaded (apt-get download, no root needed) and promtool
# alone taken out of it, into $(BUILD)/promtool.
PROMTOOL_DIR := $(BUILD)/promtool
PROMTOOL := $(PROMTOOL_DIR)/usr/bin/promtool
$(PROMTOOL):
	rm -rf $(PROMTOOL_DIR) && mkdir -p $(PROMTOOL_DIR)
	cd $(PROMTOOL_DIR) && apt-get download -q prometheus
	dpkg-deb --fsys-tarfile $(PROMTOOL_DIR)/prometheus_*.deb | tar -x -C $(PROMTOOL_DIR) ./usr/bin/promtool
	rm -f $(PROMTOOL_DIR)/prometheus_*.deb
	touch $@

promtool: $(PROMTOOL)

# ---------------------------------------------------------------- BPF
$(BUILD)/vmlinux.h: | $(BUILD)
	@test -r $(VMLINUX_BTF) || { echo "No kernel BTF at $(VMLINUX_BTF): set VMLINUX_BTF=<file>" >&2; exit 1; }
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c bpf/observer-abi.h $(wildcard bpf/*.bpf.h) $(BUILD)/vmlinux.h | $(BUILD)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-I$(BUILD) -Ibpf -c $< -o $@
	$(LLVM_STRIP) -g $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

# ---------------------------------------------------------------- protobuf
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto | $(BUILD)/gen
	$(PROTOC_C) --proto_path=proto --c_out=$(BUILD)/gen $<

# ---------------------------------------------------------------- programs
$(BUILD)/obj/shared/%.o: INC := $(INC_SHARED)
$(BUILD)/obj/daemon/controller/%.o: INC := $(INC_CONTROLLER)
$(BUILD)/obj/daemon/%.o: INC := $(INC_DAEMON)
$(BUILD)/obj/tunectl/%.o: INC := $(INC_TUNECTL)
$(BUILD)/obj/%.o: %.c $(HEADERS) $(BPF_SKELS) $(PROTO_H) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_BASE) $(INC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -std=gnu11 $(CFLAGS) -fPIE -c $< -o $@

$(BUILD)/kyber-tuned: $(patsubst %.c,$(BUILD)/obj/%.o,$(DAEMON_SRCS)) $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(PROTO_C))
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_DAEMON) -lm

$(BUILD)/kyber-tunectl: $(patsubst %.c,$(BUILD)/obj/%.o,$(TUNECTL_SRCS)) $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(PROTO_C))
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_TUNECTL) -lm

# The flash-model test device (tools/flashsim/).
FLASHSIM_SRCS := $(wildcard tools/flashsim/*.c)
FLASHSIM_HDRS := $(wildcard tools/flashsim/*.h)
$(BUILD)/flashsim: $(FLASHSIM_SRCS) $(FLASHSIM_HDRS) | $(BUILD)
	$(CC) $(CPPFLAGS_BASE) -Itools/flashsim $(CFLAGS_ALL) $(CFLAGS_FUSE) $(LDFLAGS_ALL) -o $@ \
		$(filter %.c,$^) $(LIBS_FUSE) -lm

$(BUILD) $(BUILD)/gen:
	mkdir -p $@

# ---------------------------------------------------------------- man pages
$(BUILD)/man/%: docs/man/%.scd
	@mkdir -p $(dir $@)
	$(SCDOC) < $< > $@

man: $(MAN_PAGES)

# ---------------------------------------------------------------- tests
# Unit tests link only pure modules (plus the sysfs module against a fake
# tree) and run under ASan/UBSan.
$(BUILD)/tests/test-hist: tests/unit/test-hist.c shared/hist.c
$(BUILD)/tests/test-parse-util: tests/unit/test-parse-util.c shared/parse-util.c
$(BUILD)/tests/test-kyber-sysfs: tests/unit/test-kyber-sysfs.c tests/unit/tmp-tree.h daemon/kyber-sysfs.c shared/log.c shared/parse-util.c
$(BUILD)/tests/test-blockdev: tests/unit/test-blockdev.c tests/unit/tmp-tree.h daemon/blockdev.c daemon/blockdev-user.c daemon/kyber-sysfs.c shared/log.c \
	shared/parse-util.c shared/error.c
$(BUILD)/tests/test-blockdev: TEST_LIBS := -lsystemd
# The simulator's media are flashsim's model (one model for both plants).
SIM_SRCS := tools/kyber-sim/kyber-sim.c tools/kyber-sim/sim-blk.c tools/kyber-sim/sim-kyber.c \
	tools/kyber-sim/sim-host.c tools/flashsim/model.c tools/flashsim/heap.c
SIM_HDRS := $(wildcard tools/kyber-sim/*.h) tools/flashsim/model.h tools/flashsim/heap.h
$(BUILD)/tests/test-kyber-sim: tests/unit/test-kyber-sim.c $(SIM_SRCS) shared/hist.c $(SIM_HDRS)
$(BUILD)/tests/test-kyber-sim-matrix: tests/unit/test-kyber-sim-matrix.c $(SIM_SRCS) shared/hist.c \
	$(SIM_HDRS)
$(BUILD)/tests/test-flashsim-model: tests/unit/test-flashsim-model.c tools/flashsim/model.c \
	tools/flashsim/heap.c tools/flashsim/model.h tools/flashsim/heap.h
# The goal grammar reports through an sd_bus_error (shared/error.h): -lsystemd.
$(BUILD)/tests/test-goal: tests/unit/test-goal.c shared/goal.c shared/parse-util.c shared/error.c
$(BUILD)/tests/test-goal: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-conf: tests/unit/test-conf.c tests/unit/conf-samples.h daemon/conf.c daemon/conf-load.c daemon/conf-weights.c daemon/cgroup-parse.c daemon/fileio.c shared/goal.c shared/parse-util.c \
	shared/log.c daemon/kyber-sysfs.c shared/error.c
$(BUILD)/tests/test-conf: TEST_LIBS := -linih -lsystemd
$(BUILD)/tests/test-conf-load: tests/unit/test-conf-load.c tests/unit/conf-samples.h tests/unit/tmp-tree.h daemon/conf.c daemon/conf-load.c \
	daemon/conf-weights.c daemon/cgroup-parse.c daemon/fileio.c shared/goal.c shared/parse-util.c \
	shared/log.c daemon/kyber-sysfs.c shared/error.c
$(BUILD)/tests/test-conf-load: TEST_LIBS := -linih -lsystemd
# The controller closed-loop against the simulator (tuner-loop.c: the
# daemon's loop around it); the matrix against the grid oracle.
TUNER_LOOP_SRCS := tests/unit/tuner-loop.c $(CTL_SRCS) shared/goal.c shared/error.c shared/hist.c \
	shared/parse-util.c $(SIM_SRCS)
# The law's rules on hand-made samples: the controller alone, no plant.
$(BUILD)/tests/test-ctl-law: tests/unit/test-ctl-law.c tests/unit/law-samples.h $(CTL_SRCS) \
	shared/goal.c shared/error.c shared/hist.c shared/parse-util.c
$(BUILD)/tests/test-ctl-law: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-ctl-relax: tests/unit/test-ctl-relax.c tests/unit/law-samples.h $(CTL_SRCS) \
	shared/goal.c shared/error.c shared/hist.c shared/parse-util.c
$(BUILD)/tests/test-ctl-relax: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-ctl-disturb: tests/unit/test-ctl-disturb.c tests/unit/law-samples.h \
	$(CTL_SRCS) shared/goal.c shared/error.c shared/hist.c shared/parse-util.c
$(BUILD)/tests/test-ctl-disturb: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-ctl-aim: tests/unit/test-ctl-aim.c tests/unit/law-samples.h \
	$(CTL_SRCS) shared/goal.c shared/error.c shared/hist.c shared/parse-util.c
$(BUILD)/tests/test-ctl-aim: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-ctl-step: tests/unit/test-ctl-step.c tests/unit/law-samples.h \
	$(CTL_SRCS) shared/goal.c shared/error.c shared/hist.c shared/parse-util.c
$(BUILD)/tests/test-ctl-step: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-ctl-scatter: tests/unit/test-ctl-scatter.c tests/unit/law-samples.h \
	$(CTL_SRCS) shared/goal.c shared/error.c shared/hist.c shared/parse-util.c
$(BUILD)/tests/test-ctl-scatter: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-ctl-pulse: tests/unit/test-ctl-pulse.c $(CTL_SRCS) shared/goal.c shared/error.c shared/hist.c \
	shared/parse-util.c
$(BUILD)/tests/test-ctl-pulse: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-ctl-targets: tests/unit/test-ctl-targets.c tests/unit/law-samples.h $(CTL_SRCS) shared/goal.c shared/error.c shared/hist.c \
	shared/parse-util.c
$(BUILD)/tests/test-ctl-targets: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-controller: tests/unit/test-controller.c $(TUNER_LOOP_SRCS) \
	tests/unit/tuner-loop.h $(SIM_HDRS)
$(BUILD)/tests/test-controller: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-ctl-sched: tests/unit/test-ctl-sched.c $(TUNER_LOOP_SRCS) \
	tests/unit/tuner-loop.h $(SIM_HDRS)
$(BUILD)/tests/test-ctl-sched: TEST_LIBS := -lsystemd

# The tuner matrix simulates hours of I/O: built with optimisation and
# UBSan (under ASan it would take a quarter of an hour), one process per
# device model, two at a time; each one's table is printed when it is done.
MATRIX_BIN := $(BUILD)/tests/test-tuner-matrix
MATRIX_DEVICES := flash optane tlc gc qdlat hiccup noisy
$(MATRIX_BIN): tests/unit/test-tuner-matrix.c tests/unit/tuner-matrix-oracle.c tests/unit/tuner-matrix.h \
	$(TUNER_LOOP_SRCS) tests/unit/tuner-loop.h \
	$(SIM_HDRS) $(HEADERS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -std=gnu11 $(WARN) -O2 -g -fsanitize=undefined \
		-fno-sanitize-recover=all -o $@ $(filter %.c,$^) -lcmocka -lm -lsystemd
$(BUILD)/tests/test-state: tests/unit/test-state.c daemon/state.c daemon/state-table.c daemon/originals.c daemon/fileio.c shared/record.c $(PROTO_C)
$(BUILD)/tests/test-state: TEST_LIBS := -lprotobuf-c
$(BUILD)/tests/test-report: tests/unit/test-report.c tests/unit/json-line.h daemon/report.c daemon/interval.c daemon/host-cpu.c \
	daemon/ctl-sample.c shared/hist.c shared/parse-util.c
$(BUILD)/tests/test-report: TEST_LIBS := -ljson-c
$(BUILD)/tests/test-tunectl-format: tests/unit/test-tunectl-format.c tests/unit/json-line.h tunectl/tunectl-format.c tunectl/tunectl-json.c shared/hist.c \
	shared/parse-util.c
$(BUILD)/tests/test-tunectl-format: TEST_LIBS := -ljson-c
$(BUILD)/tests/test-uevent: tests/unit/test-uevent.c daemon/uevent.c shared/parse-util.c
$(BUILD)/tests/test-share: tests/unit/test-share.c daemon/share.c
$(BUILD)/tests/test-tunectl-weights: tests/unit/test-tunectl-weights.c tests/unit/json-line.h tunectl/tunectl-weights.c \
	tunectl/tunectl-format.c tunectl/tunectl-json.c shared/hist.c shared/parse-util.c shared/log.c
$(BUILD)/tests/test-tunectl-weights: TEST_LIBS := -ljson-c
$(BUILD)/tests/test-cgroup-parse: tests/unit/test-cgroup-parse.c daemon/cgroup-parse.c shared/parse-util.c
$(BUILD)/tests/test-ksym-ranges: tests/unit/test-ksym-ranges.c daemon/ksym-ranges.c
$(BUILD)/tests/test-host-cpu: tests/unit/test-host-cpu.c daemon/host-cpu.c
$(BUILD)/tests/test-profile: tests/unit/test-profile.c daemon/profile.c shared/goal.c shared/parse-util.c shared/error.c
$(BUILD)/tests/test-profile: TEST_LIBS := -lsystemd
$(BUILD)/tests/test-metrics: tests/unit/test-metrics.c daemon/metrics.c daemon/metrics-totals.c daemon/interval.c daemon/host-cpu.c \
	shared/hist.c

$(UNIT_BINS): $(HEADERS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -std=gnu11 $(WARN) $(SAN_FLAGS) -o $@ $(filter %.c,$^) -lcmocka -lm $(TEST_LIBS)

unit-test: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

tuner-matrix: $(MATRIX_BIN)
	@echo "== $(MATRIX_BIN) ($(MATRIX_DEVICES))"
	@printf '%s\n' $(MATRIX_DEVICES) | xargs -P 2 -I{} sh -c \
		'$(MATRIX_BIN) {} > $(BUILD)/tests/matrix-{}.log 2>&1; echo $$? > $(BUILD)/tests/matrix-{}.rc'
	@rc=0; for d in $(MATRIX_DEVICES); do \
		grep -v '^\[' $(BUILD)/tests/matrix-$$d.log; \
		[ "$$(cat $(BUILD)/tests/matrix-$$d.rc)" = 0 ] || { echo "tuner matrix: $$d failed" >&2; rc=1; }; \
	done; exit $$rc

# The matrix over several seeds of the tuned runs (KT_MATRIX_SEED; the
# grid's stays): one seed is one realization of each device's noise, so a
# change to the law is judged on all of them. Not part of make check (a
# few minutes a seed). Cells under the floors are listed, not fatal; a
# device that ends without its result line (a crash, a test error) fails
# the target, so the totals never silently leave a device out.
MATRIX_SEEDS := 42 43 44 45 46
tuner-matrix-seeds: $(MATRIX_BIN)
	@rc=0; for s in $(MATRIX_SEEDS); do \
		printf '%s\n' $(MATRIX_DEVICES) | KT_MATRIX_SEED=$$s xargs -P 2 -I{} sh -c \
			'$(MATRIX_BIN) {} > $(BUILD)/tests/matrix-seed'$$s'-{}.log 2>&1' || :; \
		for d in $(MATRIX_DEVICES); do grep -v '^\[' $(BUILD)/tests/matrix-seed$$s-$$d.log; done \
			> $(BUILD)/tests/matrix-seed$$s.log; \
		grep -h ' (seed ' $(BUILD)/tests/matrix-seed$$s.log; \
		grep -h ' FAIL: ' $(BUILD)/tests/matrix-seed$$s.log || :; \
		for d in $(MATRIX_DEVICES); do \
			grep -q '^matrix-result ' $(BUILD)/tests/matrix-seed$$s-$$d.log && continue; \
			echo "tuner matrix, seed $$s: $$d ended without a result (see $(BUILD)/tests/matrix-seed$$s-$$d.log)" >&2; \
			rc=1; \
		done; \
	done; \
	echo "seed  devices   ok  MISSED  under the floors  (tables in $(BUILD)/tests/matrix-seed*.log)"; \
	for s in $(MATRIX_SEEDS); do \
		awk -v s=$$s -v all=$(words $(MATRIX_DEVICES)) '/^matrix-result / { n++; \
				for (i = 2; i <= NF; i++) { split($$i, kv, "="); v[kv[1]] += kv[2] } } \
			END { printf "%4s %5d/%d %4d %7d %17d\n", s, n, all, v["ok"], v["missed"], v["under-floors"] }' \
			$(BUILD)/tests/matrix-seed$$s.log; \
	done; \
	exit $$rc

# libFuzzer harnesses (clang, ASan/UBSan), each run for FUZZ_SECONDS on a
# copy of its seed corpus tests/fuzz/corpus/NAME (NAME: the fuzzer without
# "fuzz-"), so what a run finds stays in $(BUILD); a crash, leak, timeout or
# sanitizer report fails. A new harness: add it to FUZZERS and give it a
# <fuzzer>_SRCS line (and <fuzzer>_LIBS if needed) before the foreach.
FUZZ_SECONDS ?= 20
FUZZERS := fuzz-goal fuzz-conf fuzz-state fuzz-uevent fuzz-profile fuzz-cgroup
FUZZ_BINS = $(addprefix $(BUILD)/fuzz/,$(FUZZERS))
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
fuzz-goal_SRCS := tests/fuzz/fuzz-goal.c shared/goal.c shared/parse-util.c shared/error.c
fuzz-goal_LIBS := -lsystemd
fuzz-conf_SRCS := tests/fuzz/fuzz-conf.c daemon/conf.c daemon/conf-load.c daemon/conf-weights.c daemon/cgroup-parse.c daemon/fileio.c shared/goal.c shared/parse-util.c \
	shared/log.c daemon/kyber-sysfs.c shared/error.c
fuzz-conf_LIBS := -linih -lsystemd
fuzz-state_SRCS := tests/fuzz/fuzz-state.c daemon/state.c daemon/state-table.c daemon/originals.c daemon/fileio.c shared/record.c $(PROTO_C)
fuzz-state_LIBS := -lprotobuf-c
fuzz-uevent_SRCS := tests/fuzz/fuzz-uevent.c daemon/uevent.c shared/parse-util.c
fuzz-cgroup_SRCS := tests/fuzz/fuzz-cgroup.c daemon/cgroup-parse.c shared/parse-util.c
fuzz-profile_SRCS := tests/fuzz/fuzz-profile.c daemon/profile.c shared/goal.c shared/parse-util.c shared/error.c
fuzz-profile_LIBS := -lsystemd
$(foreach f,$(FUZZERS),$(eval $(BUILD)/fuzz/$(f): $($(f)_SRCS)))

$(BUILD)/fuzz/%: $(HEADERS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CLANG) $(CPPFLAGS_ALL) -std=gnu11 $(WARN) $(FUZZ_FLAGS) -o $@ $(filter %.c,$^) $($*_LIBS)

fuzz: $(FUZZ_BINS)
	@set -e; for f in $(FUZZERS); do \
		corpus=$(BUILD)/fuzz/corpus/$${f#fuzz-}; \
		rm -rf $$corpus && mkdir -p $$corpus && cp tests/fuzz/corpus/$${f#fuzz-}/* $$corpus/; \
		dict=; if [ -f tests/fuzz/$$f.dict ]; then dict=-dict=tests/fuzz/$$f.dict; fi; \
		echo "== $$f for $(FUZZ_SECONDS)s"; \
		if ! $(BUILD)/fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -timeout=5 $$dict \
			-artifact_prefix=$(BUILD)/fuzz/$$f- $$corpus >$(BUILD)/fuzz/$$f.log 2>&1; then \
			tail -n 60 $(BUILD)/fuzz/$$f.log; \
			echo "$$f failed: reproducer in $(BUILD)/fuzz/$$f-*, log in $(BUILD)/fuzz/$$f.log" >&2; \
			exit 1; \
		fi; \
		grep -E '^(Done|#[0-9]+.*DONE)' $(BUILD)/fuzz/$$f.log | tail -n 1; \
	done

# Real-kernel tests: BPF, loop devices, FUSE, fio. Need root.
kernel-test: all
	$(PYTHON) -m pytest -p no:cacheprovider -ra --durations=15 tests

check: deps
	$(MAKE) all
	$(MAKE) unit-test
	$(MAKE) tuner-matrix
	$(MAKE) fuzz
	$(MAKE) kernel-test

demo: deps
	$(MAKE) all
	$(PYTHON) -m tests.demo

# Benchmarks write their sections of docs/BENCHMARKS.md (root; never two at
# once: each holds the machine-wide I/O lock). Quick mode: baselines with a
# 4 x 4 grid, then the scenarios (shift, ext4, device kinds, daemon cost),
# then kyber-tuned beside the best static setting on three devices, then
# scheduler=auto where Kyber buys nothing, then per-model profiles.
bench: deps
	$(MAKE) all
	$(PYTHON) -m bench.baselines
	$(PYTHON) -m bench.scenarios
	$(PYTHON) -m bench.generalize
	$(PYTHON) -m bench.sched_choice
	$(PYTHON) -m bench.profiles
	$(PYTHON) -m bench.weights

# Full mode: the study's 10 x 10 grid, more and longer rounds, and the
# observer's cost beside biolatency.
bench-full: deps
	$(MAKE) all
	$(PYTHON) -m bench.baselines --full
	$(PYTHON) -m bench.scenarios --full
	$(PYTHON) -m bench.observer_cost
	$(PYTHON) -m bench.generalize --full
	$(PYTHON) -m bench.sched_choice
	$(PYTHON) -m bench.profiles
	$(PYTHON) -m bench.weights

# The observer's cost (ns per event, IOPS loss) beside biolatency; writes
# its section of docs/BENCHMARKS.md.
bench-observer: deps
	$(MAKE) all
	$(PYTHON) -m bench.observer_cost

# kyber-tuned beside the best static Kyber setting on the root-fs loop, the
# /dev/shm loop and flashsim (quick mode); writes its section.
bench-generalize: deps
	$(MAKE) all
	$(PYTHON) -m bench.generalize

# Per-model profiles: cold-start convergence with and without one.
bench-profiles: deps
	$(MAKE) all
	$(PYTHON) -m bench.profiles

# Cgroups sharing flashsim by weight beside none, Kyber alone and BFQ.
bench-weights: deps
	$(MAKE) all
	$(PYTHON) -m bench.weights

# scheduler=auto on a loop over /dev/shm: no harm where Kyber buys nothing.
bench-sched: deps
	$(MAKE) all
	$(PYTHON) -m bench.sched_choice

lint:
	shellcheck .ci/run
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability -I shared -I daemon \
		-I daemon/controller -I tunectl -I bpf shared daemon tunectl

# ---------------------------------------------------------------- install
# "make install DESTDIR=/tmp/stage" stages; PREFIX=/usr/local moves the
# programs, units and data (the configuration stays in /etc). An existing
# configuration is never overwritten.
PREFIX ?= /usr
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
DBUS_POLICYDIR ?= $(PREFIX)/share/dbus-1/system.d
DBUS_SERVICEDIR ?= $(PREFIX)/share/dbus-1/system-services
POLKIT_ACTIONDIR ?= $(PREFIX)/share/polkit-1/actions
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
INSTALL ?= install
# Files of the D-Bus/polkit integration: source, then installed directory.
BUS_FILES := systemd/org.kybertune.KyberTune1.conf:$(DBUS_POLICYDIR) \
	systemd/org.kybertune.KyberTune1.service:$(DBUS_SERVICEDIR) \
	systemd/org.kybertune.KyberTune1.policy:$(POLKIT_ACTIONDIR)

install: $(BUILD)/kyber-tuned $(BUILD)/kyber-tunectl $(MAN_PAGES)
	$(INSTALL) -D -m 0755 $(BUILD)/kyber-tuned $(DESTDIR)$(SBINDIR)/kyber-tuned
	$(INSTALL) -D -m 0755 $(BUILD)/kyber-tunectl $(DESTDIR)$(BINDIR)/kyber-tunectl
	$(INSTALL) -d -m 0755 $(DESTDIR)$(UNITDIR)
	sed 's|^ExecStart=/usr/sbin/kyber-tuned|ExecStart=$(SBINDIR)/kyber-tuned|' \
		systemd/kyber-tuned.service > $(DESTDIR)$(UNITDIR)/kyber-tuned.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/kyber-tuned.service
	@set -e; for f in $(BUS_FILES); do \
		src=$${f%%:*}; dir=$${f#*:}; \
		if [ -f $$src ]; then \
			echo "$(INSTALL) -D -m 0644 $$src $(DESTDIR)$$dir/$${src##*/}"; \
			$(INSTALL) -D -m 0644 $$src $(DESTDIR)$$dir/$${src##*/}; \
		else echo "make install: $$src missing, skipped" >&2; fi; \
	done
	$(INSTALL) -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/kyber-tuned/conf.d
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/kyber-tuned/kyber-tuned.conf ]; then \
		echo "make install: keeping $(DESTDIR)$(SYSCONFDIR)/kyber-tuned/kyber-tuned.conf"; \
	else \
		echo "$(INSTALL) -m 0644 systemd/kyber-tuned.conf $(DESTDIR)$(SYSCONFDIR)/kyber-tuned/kyber-tuned.conf"; \
		$(INSTALL) -m 0644 systemd/kyber-tuned.conf $(DESTDIR)$(SYSCONFDIR)/kyber-tuned/kyber-tuned.conf; \
	fi
	@set -e; for m in $(MAN_PAGES); do \
		sec=$${m##*.}; \
		echo "$(INSTALL) -D -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$sec/$${m##*/}"; \
		$(INSTALL) -D -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$sec/$${m##*/}; \
	done
	$(INSTALL) -D -m 0644 docs/completion/kyber-tunectl $(DESTDIR)$(COMPLETIONDIR)/kyber-tunectl

# Leaves a configuration that differs from the shipped example, and
# anything in conf.d.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/kyber-tuned $(DESTDIR)$(BINDIR)/kyber-tunectl \
		$(DESTDIR)$(UNITDIR)/kyber-tuned.service \
		$(DESTDIR)$(DBUS_POLICYDIR)/org.kybertune.KyberTune1.conf \
		$(DESTDIR)$(DBUS_SERVICEDIR)/org.kybertune.KyberTune1.service \
		$(DESTDIR)$(POLKIT_ACTIONDIR)/org.kybertune.KyberTune1.policy \
		$(DESTDIR)$(COMPLETIONDIR)/kyber-tunectl \
		$(foreach m,$(MAN_PAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
	@if cmp -s systemd/kyber-tuned.conf $(DESTDIR)$(SYSCONFDIR)/kyber-tuned/kyber-tuned.conf; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/kyber-tuned/kyber-tuned.conf; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/kyber-tuned/kyber-tuned.conf ]; then \
		echo "make uninstall: keeping the modified $(DESTDIR)$(SYSCONFDIR)/kyber-tuned/kyber-tuned.conf"; \
	fi
	rmdir $(DESTDIR)$(SYSCONFDIR)/kyber-tuned/conf.d $(DESTDIR)$(SYSCONFDIR)/kyber-tuned 2>/dev/null || true

# ---------------------------------------------------------------- Debian package
# $(BUILD)/deb/kyber-tuned_VERSION_ARCH.deb, to install on many machines
# (README, "Install on a fleet"). dpkg-buildpackage runs in a copy of the
# tree (what git tracks or would track, uncommitted edits included) so that
# the package's build, with Debian's flags, never mixes with $(BUILD) and
# "make clean" from debian/rules removes only the copy's. lintian checks the
# result: its report goes to $(BUILD)/deb/lintian.txt and an error fails.
# The packaging tools and the Build-Depends are installed only if missing.
# MAKEFLAGS is dropped: it would hand this make's command-line variables
# (BUILD=...) down to the package's build.
DEB_DIR := $(BUILD)/deb
DEB_BUILD_OPTIONS ?= parallel=$(shell nproc)
deb:
	@if ! command -v lintian >/dev/null || ! dpkg-checkbuilddeps >/dev/null 2>&1; then \
		echo "make deb: installing lintian and the Build-Depends of debian/control"; \
		if [ "$$(id -u)" != 0 ]; then echo "make deb: must run as root to install packages" >&2; exit 1; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get -o DPkg::Lock::Timeout=600 update -q && \
		apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends dpkg-dev lintian && \
		apt-get -o DPkg::Lock::Timeout=600 build-dep -y -q --no-install-recommends ./; \
	fi
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	git ls-files -z --cached --others --exclude-standard | \
		tar --null --ignore-failed-read -T - -cf - | tar -xf - -C $(DEB_DIR)/src
	cd $(DEB_DIR)/src && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		DEB_BUILD_OPTIONS="$(DEB_BUILD_OPTIONS)" dpkg-buildpackage -us -uc -b
	@lintian --fail-on error $(DEB_DIR)/kyber-tuned_*.changes > $(DEB_DIR)/lintian.txt 2>&1; \
		rc=$$?; cat $(DEB_DIR)/lintian.txt; exit $$rc

clean:
	rm -rf $(BUILD)
