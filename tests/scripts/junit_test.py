#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`tandem run --junit FILE` (issue 25): the file parses as JUnit XML, with one
<testcase> per scenario and repetition, and a failure carries the failed
check with its JSON path. Usage: junit_test.py TANDEM (Python 3 stdlib only)."""
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "..", "scenario", "run")
VALID = os.path.join(HERE, "..", "scenario", "valid", "06_minimal.json")
MALFORMED = os.path.join(HERE, "..", "scenario", "malformed", "081_to_tensor_shape_rank5.json")
TANDEM = None


def run(tmp, *args):
    junit = os.path.join(tmp, "junit.xml")
    p = subprocess.run([TANDEM, "run", "--backend", "sim", "--quiet", "--out", os.path.join(tmp, "reports") + "/",
                        "--junit", junit] + list(args), capture_output=True, text=True)
    return p.returncode, ET.parse(junit).getroot(), p.stderr


class JUnitTest(unittest.TestCase):
    def test_a_failing_check_is_a_failure_with_its_json_path_and_each_repetition_a_test_case(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, root, err = run(tmp, "--repeat", "3", VALID, os.path.join(RUN, "failing_check.json"))
            self.assertEqual(rc, 1, err)
            self.assertEqual(root.tag, "testsuites")
            suites = root.findall("testsuite")
            self.assertEqual(len(suites), 2)
            passing, failing = suites
            # One test case per scenario and repetition, counted in the attributes.
            self.assertEqual(len(passing.findall("testcase")), 3)
            self.assertEqual(len(failing.findall("testcase")), 3)
            self.assertEqual(root.get("tests"), "6")
            self.assertEqual(root.get("failures"), "3")
            self.assertEqual((failing.get("tests"), failing.get("failures"), failing.get("errors")), ("3", "3", "0"))
            self.assertEqual(passing.get("failures"), "0")
            self.assertEqual([c.find("failure") for c in passing.findall("testcase")], [None] * 3)
            # Each repetition's failure is its own check, with the check's JSON path.
            cases = failing.findall("testcase")
            self.assertEqual(cases[1].get("name"), "failing-check [repetition 2/3]")
            for case in cases:
                f = case.find("failure")
                self.assertIsNotNone(f, case.get("name"))
                self.assertEqual(f.get("type"), "check")
                self.assertTrue(f.get("message").startswith("steps[1]: check contents: expected [1"), f.get("message"))
                self.assertEqual(f.text.count("steps[1]: check contents"), 1, f.text)

    def test_a_leak_fails_the_last_repetition_through_its_end_of_run_expectation(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, root, err = run(tmp, "--repeat", "2", os.path.join(RUN, "leak.json"))
            self.assertEqual(rc, 1, err)
            first, last = root.find("testsuite").findall("testcase")
            self.assertIsNone(first.find("failure"))
            self.assertIn("expect.live_allocations: check live_allocations: expected 0, found 2",
                          last.find("failure").get("message"))

    def test_an_invalid_scenario_is_an_error_naming_the_json_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, root, err = run(tmp, MALFORMED, VALID)
            self.assertEqual(rc, 2, err)
            self.assertEqual((root.get("tests"), root.get("errors"), root.get("failures")), ("2", "1", "0"))
            error = root.find("testsuite").find("testcase").find("error")
            self.assertEqual(error.get("type"), "invalid_scenario")
            self.assertIn("steps[0].shape", error.get("message"))

    def test_an_unwritable_junit_file_is_refused_before_anything_runs(self):
        p = subprocess.run([TANDEM, "run", "--backend", "sim", "--quiet", "--junit", "/nonexistent-folder/j.xml",
                            os.path.join(RUN, "failing_check.json")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--junit", p.stderr)
        self.assertNotIn("FAIL", p.stdout + p.stderr)


if __name__ == "__main__":
    TANDEM = sys.argv.pop(1)
    unittest.main(verbosity=2)
