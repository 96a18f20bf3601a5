#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""tests/report/report_page_test.py — `tandem report` end to end.

  report_page_test.py render TANDEM REPO OUTDIR   the page in headless Chromium
  report_page_test.py errors TANDEM OUTDIR        bad inputs: exit 2, the file named

render: runs a handful of scenarios on the sim (one fails), writes the page
from their reports and a committed bench.json, loads it in headless Chromium
(--dump-dom) and checks the DOM: a row per scenario (failures first), every
chart drawn by uPlot (a canvas in it) or marked empty where its report has no
samples, and no script error (the page's own hook counts them in
body[data-errors]; a planted error proves the hook sees one). It saves
OUTDIR/report.html and a screenshot OUTDIR/report.png (CI artifacts).
Without Chromium it exits 77 (CTest: skipped) saying so.
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
SCENARIOS = ["scenarios/01-handles-identity.json", "scenarios/07-retirement-drop-in-flight.json",
             "scenarios/46-pipeline-stress-repeat.json", "scenarios/47-pipeline-threads-disjoint-slices.json",
             "tests/scenario/run/failing_check.json", "tests/scenario/run/leak.json"]
BENCH = "results/h200/bench.json"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def chromium():
    for name in ("chromium-headless-shell", "chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    for path in ("/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium"):
        if os.access(path, os.X_OK):
            return path
    return None


def browse(browser, page, *extra):
    """Chromium's output (stdout, stderr) for the page; fails the test when it does not run."""
    with tempfile.TemporaryDirectory() as profile:  # HOME may not be writable in CI
        args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0", "--window-size=1400,2000", *extra,
                "file://" + os.path.abspath(page)]
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            fail(f"{browser} did not finish in 120 s: {' '.join(args)}")
    if r.returncode != 0:
        fail(f"{browser} exited {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout, r.stderr


class Dom(html.parser.HTMLParser):
    """The elements the checks need: body's data, scenario rows, charts and their canvases."""

    def __init__(self):
        super().__init__()
        self.body, self.rows, self.charts, self.stack = {}, [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "body":
            self.body = a
        if tag == "tr" and "scenario-row" in classes:
            self.rows.append(a)
        if tag == "figure" and "chart" in classes:
            self.charts.append({"attrs": a, "canvas": 0, "uplot": 0})
            self.stack = [self.charts[-1]]
        elif self.stack:
            if tag == "canvas":
                self.stack[0]["canvas"] += 1
            if "uplot" in classes:
                self.stack[0]["uplot"] += 1

    def handle_endtag(self, tag):
        if tag == "figure":
            self.stack = []


def run_scenarios(tandem, repo, out):
    reports = os.path.join(out, "report-inputs")
    shutil.rmtree(reports, ignore_errors=True)
    files = [os.path.join(repo, f) for f in SCENARIOS]
    r = subprocess.run([tandem, "run", "--backend", "sim", "--quiet", "--out", reports + "/", *files],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 1:  # failing_check.json and leak.json fail by design
        fail(f"tandem run exited {r.returncode}, expected 1: {r.stderr[-2000:]}")
    docs = {}
    for f in sorted(os.listdir(reports)):
        with open(os.path.join(reports, f), encoding="utf-8") as fh:
            docs[f] = json.load(fh)
    if len(docs) != len(SCENARIOS):
        fail(f"{len(docs)} reports for {len(SCENARIOS)} scenarios")
    return reports, docs


def check_dom(dom, docs, bench):
    if dom.body.get("data-ready") != "1":
        fail(f"the page's script did not finish: body {dom.body}")
    if dom.body.get("data-errors") != "0":
        fail(f"the page logged {dom.body.get('data-errors')} error(s)")
    names = [r.get("data-scenario") for r in dom.rows]
    want = sorted(d["scenario"]["name"] for d in docs.values())
    if sorted(names) != want:
        fail(f"scenario rows {names}, expected {want}")
    statuses = [r.get("data-status") for r in dom.rows]
    if statuses != sorted(statuses, key=lambda s: s == "pass"):
        fail(f"failures are not first: {statuses}")
    if "fail" not in statuses:
        fail("no failing scenario row")
    kinds = [c["attrs"].get("data-kind") for c in dom.charts]
    expected = 3 * len(docs) + 2 * len(bench)
    if len(dom.charts) != expected or dom.body.get("data-charts") != str(expected):
        fail(f"{len(dom.charts)} charts (body says {dom.body.get('data-charts')}), expected {expected}: {kinds}")
    # A chart whose data is empty (a report with no submit samples, say) shows
    # a note instead; every other one must be drawn: a uPlot root with a canvas.
    empty_expected = sum(1 for d in docs.values() for h in ("retire_latency_us", "submit_ns")
                         if not d["throughput"][h]["histogram"]["counts"])
    empty = 0
    for c in dom.charts:
        a = c["attrs"]
        state = a.get("data-rendered")
        if state == "empty":
            empty += 1
            continue
        if state != "uplot" or c["uplot"] < 1 or c["canvas"] < 1:
            fail(f"chart {a.get('id')} ({a.get('data-kind')}) not drawn: rendered={state}, "
                 f"{c['uplot']} uplot root(s), {c['canvas']} canvas(es)")
    if empty != empty_expected:
        fail(f"{empty} charts show no data, expected {empty_expected} (the reports' empty histograms)")
    return kinds


def render(tandem, repo, out):
    browser = chromium()
    if browser is None:
        print("SKIPPED: no Chromium (chromium-headless-shell or chromium; scripts/setup installs it as root)")
        return SKIP
    os.makedirs(out, exist_ok=True)
    reports, docs = run_scenarios(tandem, repo, out)
    for name, d in docs.items():
        tl = d.get("timeline")
        if not tl or len(tl["t_s"]) < 2 or len(tl["t_s"]) > tl["max_samples"]:
            fail(f"{name}: timeline missing or out of bounds: {tl and len(tl['t_s'])} samples")
    page = os.path.join(out, "report.html")
    bench = [os.path.join(repo, BENCH)]
    r = subprocess.run([tandem, "report", reports, *bench, "-o", page], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail(f"tandem report exited {r.returncode}: {r.stderr}")
    with open(page, encoding="utf-8") as f:
        text = f.read()
    # Offline: nothing loaded from elsewhere (uPlot's banner comment names its
    # home page, and its SVG namespace is a URI, neither is fetched).
    for pattern in (r'src\s*=\s*["\']?\s*(https?:)?//', r'href\s*=\s*["\']?\s*(https?:)?//', r'url\(\s*["\']?(https?:)?//',
                    r"@import", r"<link\b", r"fetch\(", r"XMLHttpRequest"):
        m = re.search(pattern, text)
        if m:
            fail(f"the page loads something from elsewhere: {text[max(0, m.start() - 60):m.end() + 60]!r}")
    dump, log = browse(browser, page, "--dump-dom")
    dom = Dom()
    dom.feed(dump)
    kinds = check_dom(dom, docs, bench)
    if "Uncaught" in log:
        fail("Chromium logged an uncaught error: " + "\n".join(l for l in log.splitlines() if "Uncaught" in l))
    planted_error_is_seen(browser, text, out)
    png = os.path.join(out, "report.png")
    if os.path.exists(png):
        os.remove(png)
    browse(browser, page, "--screenshot=" + png)
    with open(png, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            fail(f"{png} is not a PNG")
    print(f"ok: {len(dom.rows)} scenario rows, {len(kinds)} charts drawn ({', '.join(sorted(set(kinds)))}), "
          f"no page error; {page}, {png}")
    return 0


def planted_error_is_seen(browser, text, out):
    """The error hook must count an error, or a clean data-errors proves nothing."""
    marker = "<script>tandemDrawCharts();</script>"
    if marker not in text:
        fail("the page has no tandemDrawCharts() call")
    planted = text.replace(marker, "<script>console.error('planted'); null.x;</script>" + marker)
    path = os.path.join(out, "planted-error.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(planted)
    dom = Dom()
    dom.feed(browse(browser, path, "--dump-dom")[0])
    if dom.body.get("data-errors") != "2":
        fail(f"a planted console.error and exception gave data-errors={dom.body.get('data-errors')}, expected 2")


def expect_exit_2(tandem, args, *fragments):
    r = subprocess.run([tandem, "report", *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 2 or not all(f in r.stderr for f in fragments):
        fail(f"tandem report {' '.join(args)}: exit {r.returncode}, stderr {r.stderr!r}; expected 2 and {fragments}")


def errors(tandem, out):
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out) as d:
        page = os.path.join(d, "r.html")
        missing = os.path.join(d, "missing.json")
        expect_exit_2(tandem, [missing, "-o", page], missing, "no such file")
        bad = os.path.join(d, "bad.json")
        with open(bad, "w") as f:
            f.write('{"format": "tandem.report/1",')
        expect_exit_2(tandem, [bad, "-o", page], bad, "not valid JSON")
        other = os.path.join(d, "scenario.json")
        with open(other, "w") as f:
            f.write('{"format": "tandem.scenario/1", "name": "x"}')
        expect_exit_2(tandem, [other, "-o", page], other, '"format": "tandem.scenario/1"')
        array = os.path.join(d, "array.json")
        with open(array, "w") as f:
            f.write("[1, 2]")
        expect_exit_2(tandem, [array, "-o", page], array, "array")
        empty = os.path.join(d, "empty")
        os.mkdir(empty)
        expect_exit_2(tandem, [empty, "-o", page], empty, "no report")
        expect_exit_2(tandem, [other, "-o", "/nonexistent-folder/r.html"], "/nonexistent-folder")
        if os.path.exists(page):
            fail("a page was written although an input was bad")
    r = subprocess.run([tandem, "report", "--help"], capture_output=True, text=True, timeout=60)
    for f in ("bench.json", "--out", "folder", "offline", "Exit codes"):
        if r.returncode != 0 or f not in r.stdout:
            fail(f"tandem report --help (exit {r.returncode}) does not mention {f!r}: {r.stdout}")
    print("ok: missing, unreadable, non-JSON, other-kind and empty-folder inputs exit 2 naming the file; --help")
    return 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "render":
        return render(*sys.argv[2:])
    if len(sys.argv) == 4 and sys.argv[1] == "errors":
        return errors(*sys.argv[2:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
