#!/usr/bin/env python3
"""Tests of verdict.py on canned battery output, and of the scripts' refusals
of bad input. Needs neither battery; a few seconds. Run by .ci/run:

    python3 stdlib/tandem/evidence/test_verdict.py

The case of a checkout that does not build needs gcc and a phobosc binary
(PHOBOSC, or target/debug or target/release); without them it is skipped.
"""

import os
import subprocess
import tempfile
import unittest

import verdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

PR_HEAD = """## battery: RNG_test stdin32 -tlmin 1MB -tlmax 64MB
RNG_test using PractRand version 0.94
RNG = RNG_stdin32, seed = unknown
test set = core, folding = standard (32 bit)

"""


def pr_report(exp, body="  no anomalies in 140 test result(s)\n"):
    return f"rng=RNG_stdin32, seed=unknown\nlength= {1 << (exp - 20)} megabytes (2^{exp} bytes), time= 2.5 seconds\n{body}\n"


ANOMALY = """  Test Name                         Raw       Processed     Evaluation
  [Low1/32]BCFN(2+0,13-3,T)         R= +10.5  p =  6.1e-5   mildly suspicious
  ...and 139 test result(s) without anomalies
"""
UNUSUAL = """  Test Name                         Raw       Processed     Evaluation
  Gap-16:B                          R=  +4.8  p =  8.8e-4   unusual
  ...and 139 test result(s) without anomalies
"""
FAILING = """  Test Name                         Raw       Processed     Evaluation
  Gap-16:A                          R= +19.1  p =  2.9e-15    FAIL !
  Gap-16:B                          R=  +4.8  p =  8.8e-4   unusual
  [Low8/32]DC6-9x1Bytes-1           R= +51.3  p =  1.1e-30    FAIL !!!
  ...and 72 test result(s) without anomalies
"""
MB64 = 1 << 26


class PractRand(unittest.TestCase):
    def test_pass_needs_the_target_report_and_exit_0(self):
        log = PR_HEAD + pr_report(25) + pr_report(26, UNUSUAL) + "## exit: 0\n"
        self.assertEqual(verdict.practrand(log, MB64), "pass to 64 MB (2 reports, no anomalies beyond 'unusual')")

    def test_anomalies_are_named_in_a_pass(self):
        log = PR_HEAD + pr_report(25, ANOMALY) + pr_report(26) + "## exit: 0\n"
        v = verdict.practrand(log, MB64)
        self.assertTrue(v.startswith("pass to 64 MB"), v)
        self.assertIn("1 anomaly report(s) above 'unusual', worst [Low1/32]BCFN(2+0,13-3,T) 'mildly suspicious' at 32 MB", v)

    def test_fail(self):
        log = PR_HEAD + pr_report(20, FAILING) + "## exit: 0\n"
        self.assertEqual(
            verdict.practrand(log, MB64),
            "FAIL at 1 MB: Gap-16:A (FAIL !), [Low8/32]DC6-9x1Bytes-1 (FAIL !!!)",
        )

    def test_fail_before_a_timeout_is_a_fail(self):
        log = PR_HEAD + pr_report(20, FAILING) + "## exit: 124 (timeout)\n"
        self.assertTrue(verdict.practrand(log, MB64).startswith("FAIL at 1 MB"))

    def test_timeout_is_incomplete(self):
        log = PR_HEAD + pr_report(25) + "## exit: 124 (timeout)\n"
        self.assertEqual(
            verdict.practrand(log, MB64),
            "incomplete: timed out, reached 32 MB of 64 MB, no failure up to there",
        )

    def test_short_of_the_target_is_incomplete_even_with_exit_0(self):
        log = PR_HEAD + pr_report(25) + "## exit: 0\n"
        self.assertIn("incomplete: no report at the target length", verdict.practrand(log, MB64))

    def test_input_ended_is_incomplete(self):
        # RNG_test exits 0 when stdin ends
        log = PR_HEAD + pr_report(25) + "error reading standard input\n## exit: 0\n"
        self.assertIn("incomplete: its input ended", verdict.practrand(log, MB64))

    def test_no_footer_or_no_output_is_incomplete(self):
        self.assertIn("incomplete: no exit status", verdict.practrand(PR_HEAD + pr_report(26), MB64))
        self.assertIn("incomplete", verdict.practrand("## exit: 0\n", MB64))
        self.assertIn("incomplete", verdict.practrand("", MB64))

    def test_crash_is_incomplete(self):
        log = PR_HEAD + pr_report(26) + "## exit: 139\n"
        # a report at the target was printed, but the process did not exit cleanly
        self.assertIn("incomplete: exit status 139", verdict.practrand(log, MB64))


def tu_section(n, body, status=0, done=True, timeout=False):
    s = f"\n### test {n}\n" + body
    if done:
        s += "testu01-stdin: done, 10000000 words read\n"
    s += f"## test {n}: 1 s wall\n## exit: {status}{' (timeout)' if timeout else ''}\n"
    return s


PASSED = """========= Summary results of SmallCrush =========

 Version:          TestU01 1.2.3
 Generator:        fill-u32-key1
 Number of statistics:  1
 Total CPU time:   00:00:00.91

 All tests were passed



"""
FAILED = """========= Summary results of SmallCrush =========

 Version:          TestU01 1.2.3
 Generator:        hash32
 Number of statistics:  2
 Total CPU time:   00:00:00.15
 The following tests gave p-values outside [0.001, 0.9990]:
 (eps  means a value < 1.0e-300):
 (eps1 means a value < 1.0e-15):

       Test                          p-value
 ----------------------------------------------
  6  MaxOft                          1 - eps1
  6  MaxOft AD                        3.2e-4
  7  MaxOft AD, t = 20              1 -  4.3e-9
 ----------------------------------------------
 All other tests were passed



"""
RUNNING = """***********************************************************
Test smarsa_BirthdaySpacings calling smultin_Multinomial

p-value of test                       :    0.25
"""
TU_HEAD = "## battery: testu01-stdin\n## tests: 1 2 6\n"


class TestU01(unittest.TestCase):
    def test_pass(self):
        log = TU_HEAD + tu_section(1, PASSED) + tu_section(2, PASSED) + tu_section(6, PASSED)
        self.assertEqual(verdict.testu01(log), "pass (3 tests, 3 statistics, all p-values in [0.001, 0.999])")

    def test_fail_names_the_statistics(self):
        log = TU_HEAD + tu_section(1, PASSED) + tu_section(2, PASSED) + tu_section(6, FAILED)
        self.assertEqual(
            verdict.testu01(log),
            "FAIL: 6 MaxOft p=1 - eps1; 6 MaxOft AD p=3.2e-4; 7 MaxOft AD, t = 20 p=1 - 4.3e-9 (2 of 3 tests passed)",
        )

    def test_missing_test_is_incomplete(self):
        log = TU_HEAD + tu_section(1, PASSED) + tu_section(6, PASSED)
        self.assertEqual(verdict.testu01(log), "incomplete: test 2 did not run (2 of 3 tests passed)")

    def test_timeout_is_incomplete(self):
        log = TU_HEAD + tu_section(1, PASSED) + tu_section(2, RUNNING, 124, False, True) + tu_section(6, PASSED)
        self.assertEqual(verdict.testu01(log), "incomplete: test 2 timed out (2 of 3 tests passed)")

    def test_input_ended_is_incomplete(self):
        body = RUNNING + "testu01-stdin: standard input ended after 123 words; the battery is incomplete\n"
        log = TU_HEAD + tu_section(1, PASSED) + tu_section(2, body, 3, False) + tu_section(6, PASSED)
        self.assertIn("incomplete: test 2 its input ended", verdict.testu01(log))

    def test_summary_without_the_drivers_done_is_incomplete(self):
        log = TU_HEAD + tu_section(1, PASSED) + tu_section(2, PASSED, 0, False) + tu_section(6, PASSED)
        self.assertIn("incomplete: test 2 the driver did not finish", verdict.testu01(log))

    def test_no_footer_or_no_list_is_incomplete(self):
        self.assertIn("incomplete", verdict.testu01("### test 1\n" + PASSED))
        self.assertIn("incomplete", verdict.testu01(TU_HEAD + "\n### test 1\n" + PASSED))

    def test_incomplete_tests_are_grouped(self):
        head = "## tests: " + " ".join(str(t) for t in range(1, 11)) + "\n"
        log = head + tu_section(1, PASSED) + tu_section(2, PASSED) + "\n### test 3\n" + RUNNING
        log += "".join(f"\n### test {t}\n## (no output: the test did not run)\n" for t in range(4, 10))
        self.assertEqual(
            verdict.testu01(log),
            "incomplete: test 3 no exit status in the log; tests 4-10 did not run (2 of 10 tests passed)",
        )

    def test_fail_and_incomplete_together(self):
        log = TU_HEAD + tu_section(1, PASSED) + tu_section(2, RUNNING, 124, False, True) + tu_section(6, FAILED)
        v = verdict.testu01(log)
        self.assertTrue(v.startswith("FAIL: 6 MaxOft"), v)
        self.assertIn("incomplete: test 2 timed out", v)


def find_phobosc():
    for p in (os.environ.get("PHOBOSC"), f"{ROOT}/target/debug/phobosc", f"{ROOT}/target/release/phobosc"):
        if p and os.access(p, os.X_OK):
            return p
    return None


class BadInput(unittest.TestCase):
    def run_script(self, *args, env=None):
        return subprocess.run(
            [os.path.join(HERE, args[0])] + list(args[1:]),
            capture_output=True,
            text=True,
            env=dict(os.environ, **(env or {})),
        )

    def assert_refused(self, r, message):
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(message, r.stderr)
        self.assertEqual(r.stdout, "")

    def test_wrong_paths(self):
        with tempfile.TemporaryDirectory() as d:
            self.assert_refused(self.run_script("run-practrand.sh", f"{d}/none", "x", "u32:1", "1GB"), "no such directory")
            self.assert_refused(self.run_script("run-practrand.sh", d, "x", "u32:1", "1GB"), "is not a PractRand checkout")
            self.assert_refused(self.run_script("run-testu01.sh", f"{d}/none", "x", "u32:1", "small"), "no such directory")
            self.assert_refused(self.run_script("run-testu01.sh", d, "x", "u32:1", "small"), "is not a TestU01 checkout")

    def test_bad_arguments(self):
        with tempfile.TemporaryDirectory() as d:
            pr = f"{d}/pr"
            os.makedirs(f"{pr}/tools")
            os.makedirs(f"{pr}/src/RNGs")
            os.makedirs(f"{pr}/include")
            for f in ("tools/RNG_test.cpp", "include/PractRand.h"):
                open(f"{pr}/{f}", "w").close()
            self.assert_refused(self.run_script("run-practrand.sh", pr, "x", "u32:1", "3GB"), "power of two")
            self.assert_refused(self.run_script("run-practrand.sh", pr, "x", "u32:1", "1XB"), "TLMAX must look like")
            self.assert_refused(self.run_script("run-practrand.sh", pr, "x", "nope:1", "1GB"), "unknown stream")
            self.assert_refused(self.run_script("run-practrand.sh", pr, "../x", "u32:1", "1GB"), "NAME may hold only")
            self.assert_refused(self.run_script("run-practrand.sh", pr, "x", "u32:1", "1GB", "soon"), "TIMEOUT_S must be")
            self.assert_refused(self.run_script("run-practrand.sh", pr, "x"), "usage")

    def test_stream_unchanged_bad_arguments(self):
        s = "run-stream-unchanged.sh"
        self.assert_refused(self.run_script(s), "usage")
        self.assert_refused(self.run_script(s, "HEAD", "../x"), "NAME may hold only")
        self.assert_refused(self.run_script(s, "HEAD", "x", "6"), "BYTES must be a positive multiple of 4")
        self.assert_refused(self.run_script(s, "HEAD", "x", "1GiB"), "BYTES must be a positive multiple of 4")
        self.assert_refused(self.run_script(s, "HEAD", "x", env={"KEYS": "1;2"}), "KEYS must be")
        self.assert_refused(self.run_script(s, "no-such-commit-here", "x"), "is not a commit")
        self.assertFalse(os.path.exists(f"{HERE}/x.txt"))

    @unittest.skipUnless(find_phobosc() and subprocess.run(["which", "gcc", "g++"], capture_output=True).returncode == 0,
                         "needs phobosc and gcc/g++")
    def test_a_checkout_that_does_not_build(self):
        with tempfile.TemporaryDirectory() as d:
            pr = f"{d}/pr"
            os.makedirs(f"{pr}/tools")
            os.makedirs(f"{pr}/src/RNGs/other")
            os.makedirs(f"{pr}/include")
            open(f"{pr}/include/PractRand.h", "w").close()
            open(f"{pr}/tools/RNG_test.cpp", "w").close()
            with open(f"{pr}/src/math.cpp", "w") as f:
                f.write("#error this checkout is broken\n")
            for sub in ("", "/other"):
                with open(f"{pr}/src/RNGs{sub}/a.cpp", "w") as f:
                    f.write("int a;\n")
            r = self.run_script("run-practrand.sh", pr, "test-verdict-never-written", "u32:1", "1GB",
                                env={"PHOBOSC": find_phobosc()})
            self.assert_refused(r, "PractRand does not build from")
            self.assertIn("this checkout is broken", r.stderr)
            self.assertFalse(os.path.exists(f"{HERE}/test-verdict-never-written.txt"))


if __name__ == "__main__":
    unittest.main()
