#!/usr/bin/env python3
"""One-line verdicts from PractRand and TestU01 logs (SPEC.md section 11.4).

    verdict.py practrand LOG TARGET_BYTES
    verdict.py testu01 LOG

A log is what run-practrand.sh or run-testu01.sh writes: the battery's full
output followed by the script's footer line

    ## exit: STATUS[ (timeout)]

(run-testu01.sh: a "## tests: 1 2 ..." line, then for each test a section
"### test N" holding that process's output and its own footer).

A verdict is one of

    pass        the battery ran to its end (PractRand: a report at
                TARGET_BYTES; TestU01: the summary and the driver's "done"),
                exited 0, and flagged nothing that fails;
    FAIL        the battery printed a failure (PractRand: an evaluation of
                FAIL; TestU01: a test listed outside [0.001, 0.999]);
    incomplete  anything else: no footer, a timeout, a battery that exited
                before its end or whose input ended. Never a pass.

A failure seen before the run was cut short is still a FAIL. The verdict
never claims more than the log shows.
"""

import re
import sys

FOOTER = re.compile(r"^## exit: (-?\d+)( \(timeout\))?\s*$", re.M)


def footer(text):
    """(status, timed_out), or None when the script's footer is missing."""
    m = None
    for m in FOOTER.finditer(text):
        pass
    if m is None:
        return None
    return int(m.group(1)), m.group(2) is not None


def human_bytes(n):
    for unit, size in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:g} {unit}"
    return f"{n} bytes"


# PractRand 0.94, tools/RNG_test.cpp's show_checkpoint: a report starts with
# "length= 256 megabytes (2^28 bytes), time= ..." and lists only anomalies:
#   "  [Low1/32]BCFN(2+0,13-3,T)         R= +10.5  p =  6.1e-5   mildly suspicious"
LENGTH = re.compile(r"^length= .*?\(2\^([0-9.]+) bytes\)", re.M)
RESULT = re.compile(
    r"^\s+(\S.*?)\s+R=\s*[-+]?[0-9.]+\S*\s+p\s*[=<>~]+\s*[-+0-9.e]+\S*\s+(.+?)\s*$"
)
ANOMALY_RANK = ["unusual", "mildly suspicious", "suspicious", "very suspicious", "VERY SUSPICIOUS"]


def practrand(text, target_bytes):
    reports = []  # (bytes, [(test, evaluation)])
    for line in text.splitlines():
        m = LENGTH.match(line)
        if m:
            reports.append([round(2 ** float(m.group(1))), []])
            continue
        m = RESULT.match(line)
        if m and reports:
            reports[-1][1].append((m.group(1), m.group(2)))
    reached = reports[-1][0] if reports else 0
    fails = [(b, t, e) for b, rs in reports for t, e in rs if e.startswith("FAIL")]
    if fails:
        at = fails[0][0]
        tests = ", ".join(f"{t} ({e})" for b, t, e in fails if b == at)
        return f"FAIL at {human_bytes(at)}: {tests}"
    foot = footer(text)
    if foot is None:
        return f"incomplete: no exit status in the log (reached {human_bytes(reached)} of {human_bytes(target_bytes)})"
    status, timed_out = foot
    why = None
    if timed_out:
        why = "timed out"
    elif "error reading standard input" in text:
        why = "its input ended"
    elif status != 0:
        why = f"exit status {status}"
    elif reached != target_bytes:
        why = "no report at the target length"
    if why:
        return f"incomplete: {why}, reached {human_bytes(reached)} of {human_bytes(target_bytes)}, no failure up to there"
    flagged = [(b, t, e) for b, rs in reports for t, e in rs if e != "unusual" and e != "normal"]
    note = "no anomalies beyond 'unusual'"
    if flagged:
        worst = max(flagged, key=lambda f: ANOMALY_RANK.index(f[2]) if f[2] in ANOMALY_RANK else 99)
        note = f"{len(flagged)} anomaly report(s) above 'unusual', worst {worst[1]} '{worst[2]}' at {human_bytes(worst[0])}"
    return f"pass to {human_bytes(target_bytes)} ({len(reports)} reports, {note})"


# TestU01 1.2.3, bbattery.c's WriteReport.
SUMMARY = re.compile(r"^========= Summary results of (.+?) =========", re.M)
NSTAT = re.compile(r"^ Number of statistics:\s+(\d+)", re.M)
SUSPECT = re.compile(r"^ +(\d+) +(\S.*?\S) +((?:1 -\s+)?(?:eps1?|[0-9.e+-]+))\s*$")


def testu01_one(text):
    """(verdict word, detail, statistics) for one process's log."""
    m = SUMMARY.search(text)
    failed = []
    if m:
        tail = text[m.end():]
        if "The following tests gave p-values outside" in tail:
            table = tail.split(" ----------------------------------------------\n")
            rows = table[1] if len(table) >= 3 else ""
            for line in rows.splitlines():
                r = SUSPECT.match(line)
                if r:
                    failed.append(f"{r.group(1)} {r.group(2)} p={' '.join(r.group(3).split())}")
            if not failed:
                return "incomplete", "could not read the summary's list of failed tests", 0
        elif "All tests were passed" not in tail:
            m = None
    nstat = NSTAT.search(text)
    nstat = int(nstat.group(1)) if nstat else 0
    if failed:
        return "FAIL", "; ".join(failed), nstat
    foot = footer(text)
    if foot is None:
        return "incomplete", "no exit status in the log", nstat
    status, timed_out = foot
    if timed_out:
        return "incomplete", "timed out", nstat
    if "standard input ended" in text:
        return "incomplete", "its input ended", nstat
    if status != 0:
        return "incomplete", f"exit status {status}", nstat
    if m is None:
        return "incomplete", "no summary", nstat
    if not re.search(r"^testu01-stdin: done, \d+ words read", text, re.M):
        return "incomplete", "the driver did not finish", nstat
    return "pass", "", nstat


def ranges(numbers):
    """[1, 2, 3, 5] -> "1-3, 5"."""
    out = []
    for n in numbers:
        if out and out[-1][1] == n - 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


TESTS = re.compile(r"^## tests: ([0-9 ]+)$", re.M)
SECTION = re.compile(r"^### test (\d+)$", re.M)


def testu01(text):
    """One line for a run-testu01.sh log: its "## tests:" list, then one
    "### test N" section per test, each with the process's output and footer."""
    m = TESTS.search(text)
    if not m:
        return "incomplete: the log names no tests"
    wanted = [int(t) for t in m.group(1).split()]
    heads = list(SECTION.finditer(text))
    sections = {}
    for k, h in enumerate(heads):
        stop = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        sections[int(h.group(1))] = text[h.end():stop]
    results = []
    for t in wanted:
        if t not in sections or "## (no output: the test did not run)" in sections[t]:
            results.append((t, "incomplete", "did not run", 0))
        else:
            results.append((t,) + testu01_one(sections[t]))
    fails = [r for r in results if r[1] == "FAIL"]
    incomplete = [r for r in results if r[1] == "incomplete"]
    nstat = sum(r[3] for r in results if r[1] == "pass")
    parts = []
    if fails:
        parts.append("FAIL: " + "; ".join(r[2] for r in fails))
    if incomplete:
        by_reason = {}
        for r in incomplete:
            by_reason.setdefault(r[2], []).append(r[0])
        parts.append(
            "incomplete: "
            + "; ".join(f"{'tests' if len(ts) > 1 else 'test'} {ranges(ts)} {why}" for why, ts in by_reason.items())
        )
    if parts:
        passed = len(results) - len(fails) - len(incomplete)
        return f"{' / '.join(parts)} ({passed} of {len(results)} tests passed)"
    return f"pass ({len(results)} tests, {nstat} statistics, all p-values in [0.001, 0.999])"


def main(argv):
    if len(argv) >= 3 and argv[1] == "practrand" and len(argv) == 4:
        print(practrand(open(argv[2], errors="replace").read(), int(argv[3])))
    elif len(argv) == 3 and argv[1] == "testu01":
        print(testu01(open(argv[2], errors="replace").read()))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
