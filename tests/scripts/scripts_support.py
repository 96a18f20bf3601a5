# SPDX-License-Identifier: Apache-2.0
"""What the tests of the benchmark tooling in scripts/ share (compare_test.py,
bench_report_test.py, peers_test.py, gpu_check_test.py): paths, running a
script, fixtures, a temporary directory, a bench_report run checked against
schemas/bench-1."""

import functools
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import jsonschema  # python3-jsonschema (scripts/setup)
except ImportError:
    # scripts/gpu-check sets this on a lent GPU machine, which has no scripts/setup (and no
    # network): the tests still run, without the schema check, and its summary says so.
    if os.environ.get("TANDEM_SCHEMA_CHECK") != "skip":
        raise
    jsonschema = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(ROOT, "scripts")
FIXTURES = os.path.join(HERE, "fixtures")


def fixture(name):
    return os.path.join(FIXTURES, name)


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)


def compare(base, new, *extra):
    return run(os.path.join(SCRIPTS, "compare"), base, new, *extra)


class TempDir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, doc):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return path


COMPARE_FIXTURES = os.path.join(HERE, "compare_fixtures")
BAND = os.path.join(ROOT, "results", "h200", "noise-band.json")
H100_BAND = os.path.join(ROOT, "results", "h100", "noise-band.json")
H100_AA = os.path.join(ROOT, "results", "h100", "aa-c70af80")  # its README says what each run is
H100_AA_RUNS = [os.path.join(H100_AA, f"run-{n}", "bench.json") for n in range(1, 7)]


@functools.cache
def schema_validator(name):
    """schemas/<name>.schema.json as a validator, read once for every document the tests make."""
    with open(os.path.join(ROOT, "schemas", f"{name}.schema.json"), encoding="utf-8") as f:
        return jsonschema.Draft202012Validator(json.load(f))


def schema_errors(name, doc):
    """What schemas/<name> rejects in `doc` ([] without python3-jsonschema: TANDEM_SCHEMA_CHECK=skip)."""
    if jsonschema is None:
        return []
    return [e.message for e in sorted(schema_validator(name).iter_errors(doc), key=str)]


def compare_fixture(name):
    return os.path.join(COMPARE_FIXTURES, name)


class ReportCase(TempDir):
    def report(self, bench, *extra):
        out, md = os.path.join(self.tmp.name, "bench.json"), os.path.join(self.tmp.name, "bench.md")
        r = run(os.path.join(SCRIPTS, "bench_report.py"), "--bench", bench, "--out", out, "--md", md,
                "--git", "fixture-rev", *extra)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        # Every report a test makes must also be one schemas/bench-1 accepts: check-schemas
        # sees only committed files, and a new field once reached results/ before the schema.
        self.assertEqual(schema_errors("bench-1", doc), [], "bench_report wrote what schemas/bench-1 rejects")
        with open(md, encoding="utf-8") as f:
            return doc, f.read(), out
