# SPDX-License-Identifier: LGPL-2.1-or-later
"""`make deb` builds the Debian package from debian/: it holds exactly what
`make install` puts on a system (man pages compressed, the unit where
debhelper enables it) plus Debian's copyright and changelog, the unit is
enabled and started by debhelper's maintainer-script snippets, the
configuration is a conffile, Depends names the shared libraries the
programs link, lintian finds no error, and the programs in it run.

The package is unpacked, never installed: installing it would enable and
start the daemon on this machine. Needs root only if the packaging tools
or Build-Depends are missing (make deb installs them); where they cannot be
installed the test skips and says why."""

import filecmp
import gzip
import os
import re
import shutil
import subprocess
import warnings

import pytest

from tests.integration.test_install import FILES as INSTALLED
from tests.lib.paths import REPO

DEB_DIR = os.path.join(REPO, "build", "deb")
UNIT = "kyber-tuned.service"
# debhelper enables units in lib/systemd/system (bookworm) or
# usr/lib/systemd/system (trixie on); debian/rules asks systemd.pc which.
UNIT_DIRS = ("lib/systemd/system", "usr/lib/systemd/system")
# What Debian adds to the files of make install.
DEBIAN_FILES = {
    "usr/share/doc/kyber-tuned/copyright": 0o644,
    "usr/share/doc/kyber-tuned/changelog.gz": 0o644,
    "usr/share/lintian/overrides/kyber-tuned": 0o644,
}
TOOLS = ("dpkg-buildpackage", "dh", "lintian")


def run(*cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 300),
                       **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def skip_reason_if_unbuildable(out):
    """Why make deb could not even start building, or None: the tools or
    Build-Depends are still missing after it tried to install them."""
    missing = [t for t in TOOLS if not shutil.which(t)]
    if not missing and shutil.which("dpkg-checkbuilddeps"):
        r = subprocess.run(["dpkg-checkbuilddeps"], cwd=REPO, capture_output=True, text=True)
        if r.returncode == 0:
            return None
        missing = [r.stderr.strip()]
    tail = "\n".join(out.strip().splitlines()[-5:])
    return (f"make deb could not install what it needs ({'; '.join(missing)}): "
            f"not root, or no package archive reachable. Last output:\n{tail}")


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    """Builds the package once; returns (path of the .deb, unpacked root,
    control directory)."""
    r = subprocess.run(["make", "deb"], cwd=REPO, capture_output=True, text=True,
                       timeout=900)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        reason = skip_reason_if_unbuildable(out)
        if reason:
            pytest.skip(reason)
    assert r.returncode == 0, f"make deb failed:\n{out[-6000:]}"
    debs = [f for f in os.listdir(DEB_DIR)
            if re.fullmatch(r"kyber-tuned_[^_]+_[^_]+\.deb", f)]
    assert len(debs) == 1, f"expected one kyber-tuned .deb in {DEB_DIR}: {os.listdir(DEB_DIR)}"
    path = os.path.join(DEB_DIR, debs[0])
    tmp = tmp_path_factory.mktemp("deb")
    root, control = tmp / "root", tmp / "DEBIAN"
    run("dpkg-deb", "-x", path, root)
    run("dpkg-deb", "-e", path, control)
    return path, root, control


def contents(path):
    """dpkg -c: {path: (mode string, owner)}, without the root directory."""
    entries = {}
    for line in run("dpkg", "-c", path).splitlines():
        fields = line.split(None, 5)
        name = fields[5].split(" -> ")[0]
        assert name.startswith("./"), line
        if name != "./":
            entries[name[2:].rstrip("/")] = (fields[0], fields[1])
    return entries


def mode_string(mode):
    return "".join(c if mode & (1 << (8 - i)) else "-" for i, c in enumerate("rwxrwxrwx"))


def expected_files(unit_dir):
    """make install's files as the package holds them: path -> mode."""
    want = dict(DEBIAN_FILES)
    for rel, (mode, _) in INSTALLED.items():
        if rel.startswith("usr/lib/systemd/system/"):
            rel = f"{unit_dir}/{os.path.basename(rel)}"
        elif "/man/" in rel:
            rel += ".gz"
        want[rel] = mode
    return want


def unit_dir_of(entries):
    dirs = [d for d in UNIT_DIRS if f"{d}/{UNIT}" in entries]
    assert len(dirs) == 1, f"the unit must be in exactly one of {UNIT_DIRS}: {sorted(entries)}"
    return dirs[0]


def test_file_list(deb):
    path, _, _ = deb
    entries = contents(path)
    print("\n".join(sorted(entries)))
    files = {p: m for p, m in entries.items() if not m[0].startswith("d")}
    want = expected_files(unit_dir_of(entries))
    assert sorted(files) == sorted(want), "unexpected set of files in the package"
    for rel, (mode, owner) in files.items():
        assert mode == "-" + mode_string(want[rel]), f"{rel}: {mode}, want {oct(want[rel])}"
        assert owner == "root/root", f"{rel}: owned by {owner}"
    # The drop-in directory is the package's, so dpkg removes it when empty.
    assert entries.get("etc/kyber-tuned/conf.d", ("",))[0] == "drwxr-xr-x"


def test_files_are_the_trees(deb):
    _, root, _ = deb
    for rel, (_, src) in INSTALLED.items():
        if src and not rel.startswith("usr/lib/systemd/"):
            assert filecmp.cmp(root / rel, os.path.join(REPO, src), shallow=False), rel
    unit = (root / unit_dir_of(contents(deb[0])) / UNIT).read_text()
    assert "\nExecStart=/usr/sbin/kyber-tuned\n" in unit
    for rel in INSTALLED:
        if "/man/" in rel:
            with gzip.open(root / (rel + ".gz"), "rt") as f:
                assert f.read().startswith(".\\\" Generated by scdoc"), rel
    copyright_ = (root / "usr/share/doc/kyber-tuned/copyright").read_text()
    assert copyright_.startswith("Format: https://www.debian.org/doc/packaging-manuals/"
                                 "copyright-format/1.0/")


def test_control_fields(deb):
    path, root, _ = deb
    info = run("dpkg-deb", "-f", path, "Package", "Version", "Architecture", "Depends")
    fields = dict(line.split(": ", 1) for line in info.splitlines())
    assert fields["Package"] == "kyber-tuned"
    assert fields["Architecture"] == run("dpkg", "--print-architecture").strip()
    # The package's version is the programs'.
    version = run(root / "usr/sbin/kyber-tuned", "--version").strip()
    assert version == f"kyber-tuned {fields['Version']}", version
    # ${shlibs:Depends}: the libraries both programs link.
    depends = fields["Depends"]
    for lib in ("libbpf1", "libsystemd0", "libcap2", "libprotobuf-c1", "libinih1",
                "libjson-c5", "libc6"):
        assert re.search(rf"(^|, ){re.escape(lib)}( |,|$)", depends), \
            f"Depends lacks {lib}: {depends}"


def test_maintainer_scripts(deb):
    _, _, control = deb
    assert (control / "conffiles").read_text().split() == ["/etc/kyber-tuned/kyber-tuned.conf"]
    assert (control / "postinst").exists(), "no postinst: dh_installsystemd found no unit"
    postinst = (control / "postinst").read_text()
    # dh_installsystemd: enabled on installation, started (or restarted on
    # upgrade) when systemd runs.
    assert f"deb-systemd-helper enable '{UNIT}'" in postinst, postinst
    assert re.search(rf"deb-systemd-invoke \S+ '{re.escape(UNIT)}'", postinst), postinst
    prerm = (control / "prerm").read_text()
    assert f"deb-systemd-invoke stop '{UNIT}'" in prerm, prerm
    postrm = (control / "postrm").read_text()
    assert f"deb-systemd-helper purge '{UNIT}'" in postrm, postrm
    assert re.search(r'if \[ "\$1" = purge \]; then\n\trm -rf /var/lib/kyber-tuned', postrm), \
        postrm
    for script in ("postinst", "prerm", "postrm"):
        run("sh", "-n", control / script)


def test_stripped_with_debug_symbols(deb):
    """dh_strip stripped the programs and kept their symbols in the
    -dbgsym package, found by build ID."""
    path, root, _ = deb
    dbgsym = path.replace("kyber-tuned_", "kyber-tuned-dbgsym_", 1)
    debug = {p for p in contents(dbgsym) if p.endswith(".debug")}
    for rel in ("usr/sbin/kyber-tuned", "usr/bin/kyber-tunectl"):
        sections = run("readelf", "-S", "-W", root / rel)
        assert ".debug_info" not in sections, f"{rel} is not stripped"
        notes = run("readelf", "-n", root / rel)
        build_id = re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)
        want = f"usr/lib/debug/.build-id/{build_id[:2]}/{build_id[2:]}.debug"
        assert want in debug, f"{rel}: {want} not in the dbgsym package: {sorted(debug)}"


def test_programs_run(deb):
    _, root, _ = deb
    for rel, name in (("usr/sbin/kyber-tuned", "kyber-tuned"),
                      ("usr/bin/kyber-tunectl", "kyber-tunectl")):
        out = run(root / rel, "--version", timeout=30)
        assert out.startswith(f"{name} "), out
        out = run(root / rel, "--help", timeout=30)
        assert "--version" in out, out


def test_lintian(deb):
    path, _, _ = deb
    changes = re.sub(r"\.deb$", ".changes", path)
    r = subprocess.run(["lintian", "--display-info", changes], capture_output=True, text=True,
                       timeout=300)
    out = r.stdout + r.stderr
    print(out)
    tags = [line for line in out.splitlines() if re.match(r"[EWI]: ", line)]
    errors = [t for t in tags if t.startswith("E: ")]
    assert not errors and r.returncode == 0, out
    for t in tags:
        warnings.warn(f"lintian: {t}")
