# SPDX-License-Identifier: Apache-2.0
"""scripts/mutants --fuzzer-only: the program fuzzer alone against each mutant,
and the shrinker on its find (issue 24, "The fuzzer finds them alone").
scripts/mutants's docstring says what it does; this file is how."""
import argparse, concurrent.futures as cf, glob, json, os, re, shutil, subprocess, sys, tempfile, time

MODES = ("host_proven", "release_stream")  # TANDEM_MULTI_STREAM_RELEASE by round parity


def count_steps(doc):
    """Steps as the shrinker counts them (shrink_passes.cpp step_pointers): every step of every list."""
    def walk(lst):
        n = 0
        for st in lst if isinstance(lst, list) else []:
            n += 1
            if isinstance(st, dict) and isinstance(st.get("steps"), list):
                n += walk(st["steps"])
        return n
    total = walk(doc.get("steps", []))
    for body in (doc.get("threads") or {}).values():
        total += walk(body)
    return total


def fuzz_rounds(fuzz, mutant, args, work):
    """Rounds of fresh programs; yields (fuzzing seconds so far, seed, mode, dumped file or None, output) for each
    failing program, in the fuzzer's order, until the budget is spent."""
    spent = 0.0
    r = 0
    while spent < args.fuzz_budget:
        seed = args.seed_base + r * 1000
        mode = MODES[r % 2]
        tmp = os.path.join(work, f"round-{r}")
        os.makedirs(tmp)
        env = dict(os.environ, TANDEM_MUTANT=mutant, TANDEM_FUZZ_SEED=str(seed), TANDEM_FUZZ_SCALE=str(args.round_scale),
                   TANDEM_MULTI_STREAM_RELEASE=mode, TMPDIR=tmp)
        start = time.monotonic()
        try:
            p = subprocess.run([fuzz], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=max(1.0, args.fuzz_budget - spent))
        except subprocess.TimeoutExpired:
            return
        spent += time.monotonic() - start
        if p.returncode != 0:
            out = p.stdout.decode(errors="replace")
            found = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"program (\d+) ended \w+ \(scenario: ([^)]+)\)", out)]
            if not found:  # a crash or hang of the whole fuzzer: no single program to shrink
                yield spent, seed, mode, None, out[-400:]
            for program_seed, path in found:
                if os.path.exists(path):
                    yield spent, program_seed, mode, path, out
        r += 1


def run_file(tandem, path, mutant, mode):
    env = dict(os.environ, TANDEM_MUTANT=mutant, TANDEM_MULTI_STREAM_RELEASE=mode)
    with tempfile.TemporaryDirectory(prefix="fa-run-") as tmp:
        p = subprocess.run([tandem, "run", "--backend", "sim", "--quiet", "--out", tmp + "/", path], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    return p.returncode


def shrink_one(row, dumped, mutant, mode, tandem, args):
    """Shrinks one failing program into --results; False (row["note"] says why) when it does not fail again."""
    row["before"] = count_steps(json.load(open(dumped)))
    row["kind"] = os.path.basename(dumped)[len("tandem-program-fuzz-"):].rsplit("-", 1)[0]
    dest = os.path.join(args.results, f"{mutant}.min.json")
    env = dict(os.environ, TANDEM_MUTANT=mutant, TANDEM_MULTI_STREAM_RELEASE=mode)
    s = subprocess.run([tandem, "shrink", dumped, "--backend", "sim", "--seed", "0", "--out", dest,
                        "--time-limit", str(args.shrink_limit), "--confirm", "2",
                        "--reference-env", "TANDEM_MUTANT="], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if s.returncode != 0 or not os.path.exists(dest):
        row["note"] = f"shrink exit {s.returncode}: " + s.stdout.decode(errors='replace').strip()[-160:]
        return False
    shutil.copy(dumped, os.path.join(args.results, "found", f"{mutant}.json"))
    row["after"] = count_steps(json.load(open(dest)))
    row["file"] = os.path.relpath(dest, args.results)
    row["note"] = ""
    return True


def one(mutant, tandem, fuzz, args):
    """(row dict) for one mutant: the first find that shrinks and whose shrunk file fails again with the mutant
    (and never without it); the last tried find's row when none does within the budget."""
    row = {"mutant": mutant, "killed": False, "secs": None, "seed": "", "mode": "", "before": None, "after": None,
           "file": "", "confirmed": "", "note": ""}
    with tempfile.TemporaryDirectory(prefix=f"fa-{mutant}-") as work:
        for secs, seed, mode, dumped, why in fuzz_rounds(fuzz, mutant, args, work):
            row.update(killed=True, secs=secs, seed=seed, mode=mode, confirmed="", fails=0, passes=0)
            if not dumped:
                row["note"] = "the fuzzer failed without naming a program: " + why.strip().splitlines()[-1][:120]
                return row
            if not shrink_one(row, dumped, mutant, mode, tandem, args):
                continue
            dest = os.path.join(args.results, row["file"])
            # Sim races are timing-dependent until the sim orders by happens-before: runs of each, counted.
            fails = sum(run_file(tandem, dest, mutant, mode) == 1 for _ in range(args.check_runs))
            passes = sum(run_file(tandem, dest, "", mode) == 0 for _ in range(args.check_runs))
            row["fails"], row["passes"] = fails, passes
            row["confirmed"] = f"fails {fails}/{args.check_runs} with it, passes {passes}/{args.check_runs} without"
            if fails and passes == args.check_runs:
                return row
            row["note"] = row["confirmed"] + "; fuzzing on"
        if not row["killed"]:
            row["note"] = f"survived {args.fuzz_budget:g} s of fuzzing"
    return row


def main(argv, build_dir, root, mutant_names, build):
    ap = argparse.ArgumentParser(prog="scripts/mutants --fuzzer-only")
    ap.add_argument("--fuzzer-only", action="store_true")
    ap.add_argument("--fuzz-budget", type=float, default=60)
    ap.add_argument("--seed-base", type=lambda v: int(v, 0), default=0x5eed0000)
    ap.add_argument("--round-scale", type=float, default=0.1, help="TANDEM_FUZZ_SCALE of one round")
    ap.add_argument("--shrink-limit", type=float, default=300)
    ap.add_argument("--max-steps", type=int, default=10)
    ap.add_argument("--check-runs", type=int, default=5, help="runs of the shrunk file with and without the mutant")
    ap.add_argument("--results", default=os.path.join(build_dir, "fuzzer-alone"))
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    if not args.no_build:
        build()
    tandem = os.path.join(build_dir, "src", "cli", "tandem")
    fuzz = os.path.join(build_dir, "tests", "scenario", "scenario_program_fuzz_test")
    names = mutant_names()
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    os.makedirs(os.path.join(args.results, "found"), exist_ok=True)
    rows = {}
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(one, n, tandem, fuzz, args): n for n in names}
        for f in cf.as_completed(futures):
            row = rows[futures[f]] = f.result()
            print(f"  {row['mutant']}: " + (f"killed in {row['secs']:.1f} s, {row['before']} -> {row['after']} steps"
                                            if row["killed"] else "SURVIVED") + f" {row['note']}", flush=True)
    rev = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], stdout=subprocess.PIPE,
                         text=True).stdout.strip()
    lines = [f"# The program fuzzer alone against each mutant, at {rev}", "",
             f"`scripts/mutants --fuzzer-only --fuzz-budget {args.fuzz_budget:g}`: no scenario library. Rounds of "
             f"fresh programs (TANDEM_FUZZ_SCALE={args.round_scale:g} each: every program kind of "
             "tests/scenario/program_fuzz_test.cpp), round r seeded TANDEM_FUZZ_SEED = "
             f"{args.seed_base:#x} + 1000 r, odd rounds under TANDEM_MULTI_STREAM_RELEASE=release_stream; the "
             "first failing program is shrunk by the mutant build's `tandem shrink --backend sim --seed 0 "
             "--confirm 2 --reference-env TANDEM_MUTANT=` under the same mutant and mode (a candidate is kept "
             "only if it also passes without the mutant). Steps counted as the shrinker counts them (every step "
             "of every list: the body, each thread's, loop and capture bodies with their loop/capture step). "
             f"'check' runs the shrunk file {args.check_runs} times with the mutant and {args.check_runs} without "
             "(a kill needs a failure with it and every run passing without; a find that does not fail again, "
             "or fails without the mutant, is passed over and the fuzzing goes on). Kill time: seconds of fuzzing "
             "(not shrinking or checking) up to the round of the program kept. "
             f"{args.jobs} mutants at a time on a loaded 2-core machine; whole run {time.monotonic() - t0:.0f} s.", "",
             "| mutant | kill time (s) | program seed | kind | mode | steps before -> after | shrunk file | check |",
             "|---|---|---|---|---|---|---|---|"]
    bad = []
    for n in names:
        w = rows[n]
        if not w["killed"] or w["after"] is None or w["after"] > args.max_steps or not w.get("fails") or w.get("passes") != args.check_runs:
            bad.append(n)
        if not w["killed"]:
            lines.append(f"| {n} | **survived** | | | | | | {w['note']} |")
            continue
        steps = f"{w['before']} -> {w['after']}" if w["after"] is not None else "-"
        lines.append(f"| {n} | {w['secs']:.1f} | {w['seed']} | {w.get('kind', '')} | {w['mode']} | {steps} | "
                     f"{w['file'] or '-'} | {(w['confirmed'] or w['note']).replace('|', '/')} |")
    lines += ["", f"Not killed and shrunk to <= {args.max_steps} steps: {', '.join(bad) if bad else 'none'}."]
    with open(os.path.join(args.results, "fuzzer-alone.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if bad else 0
