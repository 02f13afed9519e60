# SPDX-License-Identifier: LGPL-2.1-or-later
"""Cgroups for the weights tests and benchmark (docs/weights.md): made
under the io controller's hierarchy (cgroup v1's blkio, or cgroup v2 where
the io controller is there) and removed afterwards, every process in them
moved back to the root first; and the I/O limits kyber-tuned writes on
them, read back.

    with cgroups.tenants(["a", "b"]) as t:
        t.rel("a")                 # "kt-test-1234/a", as kyber-tunectl takes it
        fio.Job(..., extra=t.fio_options("a"))
        t.limits("a", 7, 0)        # {"read_iops": 0, ...}
"""

import contextlib
import os
import time

from tests.lib.testdev import DeviceUnavailable

V1_FILES = {
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
    "read_bps": "blkio.throttle.read_bps_device",
    "write_bps": "blkio.throttle.write_bps_device",
}
V2_KEYS = {"read_iops": "riops", "write_iops": "wiops", "read_bps": "rbps", "write_bps": "wbps"}


def io_hierarchy():
    """(version, mount point) of the io controller's hierarchy; raises
    DeviceUnavailable with the reason when there is none."""
    v2 = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            fields, sup = pre.split(), post.split()
            if len(sup) < 3:
                continue
            mnt = fields[4].encode().decode("unicode_escape")
            if sup[0] == "cgroup" and "blkio" in sup[2].split(","):
                return 1, mnt
            if sup[0] == "cgroup2" and v2 is None:
                v2 = mnt
    if v2:
        with open(os.path.join(v2, "cgroup.controllers")) as f:
            if "io" in f.read().split():
                return 2, v2
    raise DeviceUnavailable("no cgroup hierarchy has the io (blkio) controller")


class Tenants:
    def __init__(self, names):
        self.version, self.root = io_hierarchy()
        self.parent = f"kt-test-{os.getpid()}"
        self.names = list(names)
        os.makedirs(os.path.join(self.root, self.parent), exist_ok=True)
        if self.version == 2:
            with open(os.path.join(self.root, self.parent, "cgroup.subtree_control"), "w") as f:
                f.write("+io")
        for n in self.names:
            os.makedirs(self.abs(n), exist_ok=True)

    def rel(self, name):
        return f"{self.parent}/{name}"

    def abs(self, name):
        return os.path.join(self.root, self.parent, name)

    def fio_options(self, name):
        """fio puts the job's process in the cgroup (and leaves it there)."""
        return {"cgroup": self.rel(name), "cgroup_nodelete": 1}

    def limits(self, name, major, minor):
        """The cgroup's limits on disk major:minor (0: none)."""
        dev = f"{major}:{minor}"
        out = dict.fromkeys(V1_FILES, 0)
        if self.version == 1:
            for key, fname in V1_FILES.items():
                with open(os.path.join(self.abs(name), fname)) as f:
                    for line in f:
                        d, _, v = line.strip().partition(" ")
                        if d == dev:
                            out[key] = int(v)
        else:
            with open(os.path.join(self.abs(name), "io.max")) as f:
                for line in f:
                    d, *kv = line.split()
                    if d != dev:
                        continue
                    vals = dict(x.split("=") for x in kv)
                    for key, k in V2_KEYS.items():
                        out[key] = 0 if vals.get(k, "max") == "max" else int(vals[k])
        return out

    def set_limit(self, name, major, minor, key, value):
        """Write one limit, as an administrator would (0: none)."""
        if self.version == 1:
            with open(os.path.join(self.abs(name), V1_FILES[key]), "w") as f:
                f.write(f"{major}:{minor} {value}")
        else:
            with open(os.path.join(self.abs(name), "io.max"), "w") as f:
                f.write(f"{major}:{minor} {V2_KEYS[key]}={value or 'max'}")

    def close(self, major_minor=None):
        """Processes back to the root, limits of major_minor cleared, the
        cgroups removed."""
        procs = "cgroup.procs"
        for n in self.names + [None]:
            path = self.abs(n) if n else os.path.join(self.root, self.parent)
            if not os.path.isdir(path):
                continue
            if major_minor and n:
                for key in V1_FILES:
                    try:
                        self.set_limit(n, *major_minor, key, 0)
                    except OSError:
                        pass
            for _ in range(50):
                try:
                    with open(os.path.join(path, procs)) as f:
                        pids = f.read().split()
                except OSError:
                    break
                for pid in pids:
                    try:
                        with open(os.path.join(self.root, procs), "w") as f:
                            f.write(pid)
                    except OSError:
                        pass
                try:
                    os.rmdir(path)
                    break
                except OSError:
                    time.sleep(0.1)


@contextlib.contextmanager
def tenants(names, disk=None):
    """Cgroups for names; removed on exit. disk: (major, minor) whose
    limits on them are cleared first."""
    t = Tenants(names)
    try:
        yield t
    finally:
        t.close(disk)
