"""Shared by the experiments here: kyber-tuned with a goal on a test device
beside one fio run, and its per-second JSON lines printed."""
import signal

from tests.lib import fio
from tests.lib.daemon import Daemon, json_lines


def run(dev, goal, read_qd, write_qd, runtime_s=40):
    """Kyber on dev, kyber-tuned with goal at a 1 s interval, and fio
    R<read_qd>+W<write_qd> for runtime_s. Returns fio's results, the
    daemon's JSON lines and its stderr."""
    dev.set_scheduler("kyber")
    d = Daemon(["--foreground", "--goal", f"{dev.name}:{goal} scheduler=kyber", "--json", "--interval", "1s"])
    try:
        assert d.ready(), d.stderr()
        res = fio.run(dev.path, fio.pair(read_qd, write_qd), runtime_s=runtime_s, ramp_s=0)
        d.stop(signal.SIGTERM)
        lines = json_lines(d.communicate())
        return res, lines, d.stderr()
    finally:
        d.close()
        dev.set_scheduler("none")


def print_seconds(lines, width=150):
    """One line a second: Kyber's write depth, write IOPS, state, reason."""
    for line in lines:
        t = line.get("tuner", {})
        print(line.get("kyber_depth", {}).get("write"), round(line.get("write", {}).get("iops", 0) or 0),
              t.get("state"), (t.get("reason") or "")[:width])
