#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""peers.py — what a launch costs through Python GPU libraries, beside a raw
driver launch measured in the same process, so each peer has a same-run ratio.

    python3 scripts/peers.py --out results/h200/peers.json [--launches 20000] [--trials 5]

Launchers (one empty kernel <<<1, 32>>> on a non-blocking stream, the same
PTX for all that load code; PyTorch runs its smallest op instead):

  raw_driver_ctypes    cuLaunchKernel through ctypes on libcuda.so.1
  raw_driver_bindings  cuLaunchKernel through cuda.bindings (cuda-python)
  cupy_rawkernel       CuPy RawKernel
  cuda_core_launch     cuda.core launch()
  torch_add_one        PyTorch add_ on a 1-element CUDA tensor

Method (as ../shared/perf/h200-limits.md): per trial, N launches then one
stream synchronize, host clock; trials interleave the launchers so drift
hits all alike; the figure is the median trial. Each launcher is set
against the raw launch measured in this same process with this same
method: the baseline is the cheapest raw driver launch that ran (by median
trial), and `ratio_vs_raw` is the median over the rounds of the launcher's
trial over the baseline's trial of the same round (a round runs every
launcher once, moments apart: paired as tandem_bench pairs its raw and
tracked launches), `overhead_vs_raw_us` the median of their differences;
`ratio_vs_raw_medians` is the ratio of the two median trials, for
comparison. `tracks_accesses` / `holds_memory_until_complete` say what a
launch through the library does besides launching: none of these tracks
which memory a kernel uses or keeps it alive until the kernel completes
(tandem does both; bench_report.py's table says so).

The big-buffer loop (issue 21; tandem_bench's BM_BigBufferLoop in C++), in
`big_buffer`: 10 x {allocate 60 % of the device's free memory (measured
before the loop, rounded down to 1 MiB); a 1 ms kernel on it; drop it
behind the kernel}, one stream, timed from the first allocation to the
stream drained:

  cuda_core  Device.allocate(size, stream) / a PTX busy-wait on %globaltimer
             (1 ms) launched with cuda.core / Buffer.close(stream)
  torch      torch.empty(size, uint8) / torch.cuda._sleep(cycles of 1 ms,
             calibrated with CUDA events) / del

Trials interleave the two; the device's pool (cuda.core) and the caching
allocator (torch.cuda.empty_cache) are given back between trials, untimed,
so every trial starts as a fresh process would. --big-buffer-trials 0
skips it.

Each launcher fails soft: a missing module or device is recorded with its
reason and the others still run. Exit status 0 unless the arguments are bad
or the output cannot be written.
"""

import argparse
import ctypes
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

FORMAT = "tandem.peers/1"
KERNEL = "tandem_empty"
# Generic PTX (sm_52): every later GPU JIT-compiles it, so the same text
# serves any device.
PTX = f""".version 7.0
.target sm_52
.address_size 64

.visible .entry {KERNEL}()
{{
\tret;
}}
"""
PTX_IMAGE = PTX.encode() + b"\0"  # cuModuleLoadData takes PTX as a NUL-terminated string
CU_STREAM_NON_BLOCKING = 1

# The big-buffer loop: tandem_bench's BM_BigBufferLoop (bench/big_buffer_bench.cpp) in Python.
BIG_ITERATIONS = 10
BIG_FRACTION = 0.6
BIG_ALIGN = 1 << 20
BIG_KERNEL_NS = 1_000_000
SPIN_KERNEL = "tandem_spin"
# (buffer, ns): busy-waits ns nanoseconds of %globaltimer, as the catalog's spin; the buffer is unused.
SPIN_PTX = f""".version 7.0
.target sm_52
.address_size 64

.visible .entry {SPIN_KERNEL}(
\t.param .u64 {SPIN_KERNEL}_x,
\t.param .u64 {SPIN_KERNEL}_ns
)
{{
\t.reg .pred %p<2>;
\t.reg .b64 %rd<5>;
\tld.param.u64 %rd1, [{SPIN_KERNEL}_ns];
\tmov.u64 %rd2, %globaltimer;
\tadd.s64 %rd3, %rd2, %rd1;
$L_spin:
\tmov.u64 %rd4, %globaltimer;
\tsetp.lt.u64 %p1, %rd4, %rd3;
\t@%p1 bra $L_spin;
\tret;
}}
"""


class Skip(Exception):
    """The launcher cannot run here (module or device missing): not a failure."""


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: CUresult {rc}")


# --- launchers: each returns (launch_once, synchronize, detail dict) ----------------------

def libcuda():
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError as ex:
        raise Skip(f"no CUDA driver: {ex}") from ex


def setup_raw_ctypes():
    cu = libcuda()
    vp = ctypes.c_void_p
    check(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = vp()
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    mod, fn, stream = vp(), vp(), vp()
    check(cu.cuModuleLoadData(ctypes.byref(mod), PTX_IMAGE), "cuModuleLoadData")
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, KERNEL.encode()), "cuModuleGetFunction")
    check(cu.cuStreamCreate(ctypes.byref(stream), CU_STREAM_NON_BLOCKING), "cuStreamCreate")
    launch = cu.cuLaunchKernel
    launch.argtypes = [vp] + [ctypes.c_uint] * 7 + [vp, vp, vp]
    launch.restype = ctypes.c_int
    sync = cu.cuStreamSynchronize
    sync.argtypes = [vp]
    f, s = fn.value, stream.value
    check(launch(f, 1, 1, 1, 32, 1, 1, 0, s, None, None), "cuLaunchKernel")
    return (lambda: launch(f, 1, 1, 1, 32, 1, 1, 0, s, None, None)), (lambda: sync(s)), {}


def setup_raw_bindings():
    try:
        from cuda.bindings import driver as drv
    except ImportError:
        try:
            from cuda import cuda as drv  # cuda-python before 12.6
        except ImportError as ex:
            raise Skip(f"cuda.bindings not importable: {ex}") from ex

    def ok(result, what):
        err = result[0] if isinstance(result, tuple) else result
        if int(err) != 0:
            raise RuntimeError(f"{what}: {err}")
        return result[1] if isinstance(result, tuple) and len(result) > 1 else None

    ok(drv.cuInit(0), "cuInit")
    dev = ok(drv.cuDeviceGet(0), "cuDeviceGet")
    ctx = ok(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    ok(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    mod = ok(drv.cuModuleLoadData(PTX_IMAGE), "cuModuleLoadData")
    fn = ok(drv.cuModuleGetFunction(mod, KERNEL.encode()), "cuModuleGetFunction")
    stream = ok(drv.cuStreamCreate(CU_STREAM_NON_BLOCKING), "cuStreamCreate")
    launch = drv.cuLaunchKernel
    ok(launch(fn, 1, 1, 1, 32, 1, 1, 0, stream, 0, 0), "cuLaunchKernel")
    sync = drv.cuStreamSynchronize
    version = getattr(sys.modules.get("cuda.bindings"), "__version__", None)
    return (lambda: launch(fn, 1, 1, 1, 32, 1, 1, 0, stream, 0, 0)), (lambda: sync(stream)), {"version": version}


def setup_cupy():
    try:
        import cupy as cp
    except ImportError as ex:
        raise Skip(f"cupy not importable: {ex}") from ex
    detail = {"version": cp.__version__}
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(PTX)
        path = f.name
    try:
        kernel = cp.RawModule(path=path).get_function(KERNEL)
        detail["code"] = "the shared PTX (RawModule(path=...))"
    except Exception as ex:  # noqa: BLE001 - any loader failure: compile the same empty kernel instead
        kernel = cp.RawKernel(f'extern "C" __global__ void {KERNEL}() {{}}', KERNEL)
        detail["code"] = f"NVRTC-compiled empty kernel (loading the PTX failed: {ex})"
    finally:
        os.unlink(path)
    stream = cp.cuda.Stream(non_blocking=True)  # trial() makes it current around the whole loop
    with stream:
        kernel((1,), (32,), ())
    return (lambda: kernel((1,), (32,), ())), stream.synchronize, dict(detail, stream=stream)


def setup_cuda_core():
    try:
        try:
            from cuda.core import Device, LaunchConfig, ObjectCode, launch
        except ImportError:
            from cuda.core.experimental import Device, LaunchConfig, ObjectCode, launch
    except ImportError as ex:
        raise Skip(f"cuda.core not importable: {ex}") from ex
    dev = Device(0)
    dev.set_current()
    stream = dev.create_stream()
    kernel = ObjectCode.from_ptx(PTX.encode()).get_kernel(KERNEL)
    config = LaunchConfig(grid=1, block=32)
    launch(stream, config, kernel)
    import cuda.core as core
    return (lambda: launch(stream, config, kernel)), stream.sync, {"version": getattr(core, "__version__", None)}


def setup_torch():
    try:
        import torch
    except ImportError as ex:
        raise Skip(f"torch not importable: {ex}") from ex
    if not torch.cuda.is_available():
        raise Skip("torch sees no CUDA device")
    x = torch.zeros(1, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x.add_(1.0)
    return (lambda: x.add_(1.0)), stream.synchronize, {"version": torch.__version__, "stream": stream,
                                                        "torch_stream_context": torch.cuda.stream}


PEERS = [
    ("raw_driver_ctypes", "raw cuLaunchKernel (Python ctypes)", setup_raw_ctypes),
    ("raw_driver_bindings", "raw cuLaunchKernel (Python cuda.bindings)", setup_raw_bindings),
    ("cupy_rawkernel", "CuPy RawKernel", setup_cupy),
    ("cuda_core_launch", "cuda.core launch", setup_cuda_core),
    ("torch_add_one", "PyTorch add_ on a 1-element tensor", setup_torch),
]
RAW = ("raw_driver_ctypes", "raw_driver_bindings")

# What each launch does besides launching, for the report's table: whether the library records which memory
# the kernel reads and writes (tracks_accesses), and whether it keeps that memory from being freed or reused
# until the kernel has completed (holds_memory_until_complete). The launchers here launch an empty kernel with
# no arguments (PyTorch: add_ on a tensor it already holds); the note says what each does with memory.
SEMANTICS = {
    "raw_driver_ctypes": (False, False, "the driver: no memory bookkeeping"),
    "raw_driver_bindings": (False, False, "the driver: no memory bookkeeping"),
    "cupy_rawkernel": (False, False, "memory pool per stream: a freed block is reused in stream order, not held "
                                     "for the kernel; other streams need the user's synchronization"),
    "cuda_core_launch": (False, False, "Buffer.close(stream) frees in stream order; nothing tracks the kernel's "
                                       "use"),
    "torch_add_one": (False, False, "caching allocator: blocks reused in their stream's order; other streams need "
                                    "record_stream; accesses not tracked"),
}


# --- the big-buffer loop: each setup returns (run_once() -> (seconds, buffer bytes, free bytes),
# give_back(), detail dict) -------------------------------------------------------------------------

def big_buffer_bytes(free_bytes):
    return int(free_bytes * BIG_FRACTION) // BIG_ALIGN * BIG_ALIGN


def big_loop(allocate, kernel, drop, drain, size):
    """Seconds of the loop: BIG_ITERATIONS x {allocate; kernel; drop}, then drain. A failure names its
    iteration."""
    t0 = time.perf_counter()
    for i in range(BIG_ITERATIONS):
        try:
            buf = allocate(size)
            kernel(buf)
            drop(buf)
            del buf
        except Exception as ex:  # noqa: BLE001 - re-raised with the iteration
            raise RuntimeError(f"iteration {i + 1} of {BIG_ITERATIONS} ({size / 2**30:.2f} GiB): "
                               f"{type(ex).__name__}: {ex}") from ex
    drain()
    return time.perf_counter() - t0


def setup_big_cuda_core():
    try:
        try:
            from cuda.core import Device, LaunchConfig, ObjectCode, launch
        except ImportError:
            from cuda.core.experimental import Device, LaunchConfig, ObjectCode, launch
    except ImportError as ex:
        raise Skip(f"cuda.core not importable: {ex}") from ex
    cu = libcuda()
    dev = Device(0)
    dev.set_current()
    stream = dev.create_stream()
    kernel = ObjectCode.from_ptx(SPIN_PTX.encode()).get_kernel(SPIN_KERNEL)
    config = LaunchConfig(grid=1, block=32)
    ns = ctypes.c_uint64(BIG_KERNEL_NS)
    vp = ctypes.c_void_p

    def free_bytes():
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        check(cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
        return free.value

    def give_back():
        # Device.allocate uses the device's current pool: return its cached memory.
        stream.sync()
        pool, cu_dev = vp(), ctypes.c_int()
        check(cu.cuDeviceGet(ctypes.byref(cu_dev), 0), "cuDeviceGet")
        check(cu.cuDeviceGetMemPool(ctypes.byref(pool), cu_dev), "cuDeviceGetMemPool")
        check(cu.cuMemPoolTrimTo(pool, ctypes.c_size_t(0)), "cuMemPoolTrimTo")

    def once():
        free = free_bytes()
        size = big_buffer_bytes(free)
        seconds = big_loop(lambda n: dev.allocate(n, stream=stream),
                           lambda buf: launch(stream, config, kernel, buf, ns),
                           lambda buf: buf.close(stream), stream.sync, size)
        return seconds, size, free

    import cuda.core as core
    return once, give_back, {"version": getattr(core, "__version__", None)}


def setup_big_torch():
    try:
        import torch
    except ImportError as ex:
        raise Skip(f"torch not importable: {ex}") from ex
    if not torch.cuda.is_available():
        raise Skip("torch sees no CUDA device")
    stream = torch.cuda.Stream()
    # torch.cuda._sleep counts cycles: calibrate 1 ms with CUDA events (the second of two tries).
    probe = 1_000_000
    ms = None
    with torch.cuda.stream(stream):
        for _ in range(2):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.cuda._sleep(probe)
            end.record()
            end.synchronize()
            ms = start.elapsed_time(end)
    if not ms or ms <= 0:
        raise RuntimeError("could not calibrate torch.cuda._sleep")
    cycles = int(probe / ms * BIG_KERNEL_NS / 1e6)

    def give_back():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()

    def once():
        free, _ = torch.cuda.mem_get_info()
        size = big_buffer_bytes(free)
        with torch.cuda.stream(stream):
            seconds = big_loop(lambda n: torch.empty(n, dtype=torch.uint8, device="cuda"),
                               lambda buf: torch.cuda._sleep(cycles), lambda buf: None, stream.synchronize, size)
        return seconds, size, free

    return once, give_back, {"version": torch.__version__, "sleep_cycles": cycles,
                             "sleep_probe_ms_per_mcycle": ms}


BIG_LOOPS = [
    ("cuda_core", "cuda.core: Device.allocate / launch / Buffer.close(stream)", setup_big_cuda_core),
    ("torch", "PyTorch: torch.empty / torch.cuda._sleep / del", setup_big_torch),
]


def measure_big(trials):
    """The big-buffer loop of each peer, trials interleaved; each loop fails soft as the launchers do."""
    results, ready = {}, []
    for key, title, setup in BIG_LOOPS:
        entry = {"title": title}
        try:
            once, give_back, detail = setup()
            give_back()
            entry.update(detail)
            entry.update(status="ok", trials_s=[], buffer_bytes=[], free_bytes=[])
            ready.append((key, once, give_back))
        except Skip as ex:
            entry.update(status="skipped", reason=str(ex))
        except Exception as ex:  # noqa: BLE001 - fail soft
            entry.update(status="error", reason=f"{type(ex).__name__}: {ex}", traceback=traceback.format_exc(limit=3))
        results[key] = entry
    for _ in range(trials):
        for key, once, give_back in list(ready):
            e = results[key]
            try:
                seconds, size, free = once()
                e["trials_s"].append(seconds)
                e["buffer_bytes"].append(size)
                e["free_bytes"].append(free)
            except Exception as ex:  # noqa: BLE001 - the loop failed (out of memory): recorded, not retried
                e.update(status="error", reason=str(ex))
                ready = [r for r in ready if r[0] != key]
            try:
                give_back()
            except Exception as ex:  # noqa: BLE001
                e.setdefault("give_back_error", f"{type(ex).__name__}: {ex}")
    for e in results.values():
        t = e.get("trials_s")
        if e["status"] == "ok" and t:
            e["loop_s"] = {"median": statistics.median(t), "min": min(t), "max": max(t)}
    return results


def trial(launch, sync, n, detail):
    """Seconds per launch: n launches, then one synchronize."""
    # Stream selection scoped around the whole loop, not per launch.
    if "stream" in detail and "torch_stream_context" in detail:
        ctx = detail["torch_stream_context"](detail["stream"])
    elif "stream" in detail:
        ctx = detail["stream"]
    else:
        ctx = None
    if ctx is not None:
        ctx.__enter__()
    try:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            launch()
        sync()
        t1 = time.perf_counter_ns()
    finally:
        if ctx is not None:
            ctx.__exit__(None, None, None)
    return (t1 - t0) / n / 1e3  # µs


def call_overheads(n=200000):
    """What Python itself adds per launch call: an empty loop iteration and a ctypes call."""
    out = {}
    t0 = time.perf_counter_ns()
    for _ in range(n):
        pass
    out["python_loop_iteration"] = (time.perf_counter_ns() - t0) / n
    try:
        cu = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int()
        ref = ctypes.byref(v)
        get = cu.cuDriverGetVersion
        t0 = time.perf_counter_ns()
        for _ in range(n):
            get(ref)
        out["ctypes_call"] = (time.perf_counter_ns() - t0) / n
    except OSError:
        pass
    return out


def device_info():
    info = {}
    try:
        cu = ctypes.CDLL("libcuda.so.1")
        if cu.cuInit(0) == 0:
            v = ctypes.c_int()
            if cu.cuDriverGetVersion(ctypes.byref(v)) == 0:
                info["cuda_driver_api"] = f"{v.value // 1000}.{v.value % 1000 // 10}"
            dev = ctypes.c_int()
            name = ctypes.create_string_buffer(256)
            if cu.cuDeviceGet(ctypes.byref(dev), 0) == 0 and cu.cuDeviceGetName(name, 256, dev) == 0:
                info["name"] = name.value.decode(errors="replace")
    except OSError as ex:
        info["error"] = str(ex)
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as f:
            first = f.readline()
        for word in first.split():
            if word.count(".") >= 1 and word.replace(".", "").isdigit():
                info["driver"] = word
                break
    except OSError:
        pass
    return info


def git_revision():
    if os.environ.get("TANDEM_GIT_REV"):
        return os.environ["TANDEM_GIT_REV"]
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        # --dirty: a copied checkout whose .git is stale must not claim its HEAD (bench_report.py too).
        return subprocess.run(["git", "-C", root, "describe", "--always", "--dirty", "--abbrev=40", "--exclude=*"],
                              capture_output=True, text=True, timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def measure(launches, trials):
    results, ready = {}, []
    for key, title, setup in PEERS:
        entry = {"title": title}
        try:
            launch, sync, detail = setup()
            entry.update({k: v for k, v in detail.items() if k not in ("stream", "torch_stream_context")})
            trial(launch, sync, max(1, launches // 10), detail)  # warm-up: JIT, first-launch costs
            ready.append((key, launch, sync, detail))
            entry["status"], entry["trials_us"] = "ok", []
        except Skip as ex:
            entry.update(status="skipped", reason=str(ex))
        except Exception as ex:  # noqa: BLE001 - fail soft: record, carry on with the others
            entry.update(status="error", reason=f"{type(ex).__name__}: {ex}",
                         traceback=traceback.format_exc(limit=3))
        results[key] = entry
    for _ in range(trials):
        for key, launch, sync, detail in list(ready):
            try:
                results[key]["trials_us"].append(trial(launch, sync, launches, detail))
            except Exception as ex:  # noqa: BLE001
                results[key].update(status="error", reason=f"{type(ex).__name__}: {ex}")
                ready = [r for r in ready if r[0] != key]
    for key, entry in results.items():
        t = entry.get("trials_us")
        if entry["status"] == "ok" and t:
            entry["per_launch_us"] = {"median": statistics.median(t), "min": min(t), "max": max(t)}
        tracks, holds, note = SEMANTICS.get(key, (None, None, ""))
        entry.update(tracks_accesses=tracks, holds_memory_until_complete=holds, memory_note=note)
    raws = [(results[k]["per_launch_us"]["median"], k) for k in RAW if "per_launch_us" in results.get(k, {})]
    baseline = min(raws)[1] if raws else None
    if baseline:
        base = results[baseline]
        for entry in results.values():
            if "per_launch_us" not in entry:
                continue
            # Round by round: trial i of this launcher against trial i of the baseline (the same round).
            pairs = list(zip(entry["trials_us"], base["trials_us"]))
            entry["ratio_vs_raw"] = statistics.median(t / r for t, r in pairs)
            entry["overhead_vs_raw_us"] = statistics.median(t - r for t, r in pairs)
            entry["paired_rounds"] = len(pairs)
            entry["ratio_vs_raw_medians"] = entry["per_launch_us"]["median"] / base["per_launch_us"]["median"]
    return results, baseline


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--launches", type=int, default=20000, help="launches per trial (default 20000)")
    ap.add_argument("--trials", type=int, default=5, help="trials per launcher (default 5)")
    ap.add_argument("--big-buffer-trials", type=int, default=3,
                    help="trials of the big-buffer loop per peer (default 3; 0 skips it)")
    args = ap.parse_args()
    if args.launches < 1 or args.trials < 1 or args.big_buffer_trials < 0:
        ap.error("--launches and --trials must be positive, --big-buffer-trials not negative")
    started = datetime.datetime.now(datetime.timezone.utc)
    peers, baseline = measure(args.launches, args.trials)
    big = measure_big(args.big_buffer_trials) if args.big_buffer_trials else {}
    doc = {
        "format": FORMAT,
        "date": started.isoformat(timespec="seconds"),
        "git": git_revision(),
        "python": platform.python_version(),
        "device": device_info(),
        "method": "per trial: N launches of an empty kernel <<<1,32>>> (PyTorch: add_ on 1 element) on a "
                  "non-blocking stream, then one synchronize; host perf_counter; trials interleaved in rounds; "
                  "median trial; ratio_vs_raw: median over the rounds of the trial over the raw baseline's trial "
                  "of the same round (baseline: the cheapest raw launch of this process)",
        "launches_per_trial": args.launches,
        "trials": args.trials,
        "baseline": baseline,
        "call_overheads_ns": call_overheads(),
        "peers": peers,
        "big_buffer": {
            "method": f"{BIG_ITERATIONS} x {{allocate {BIG_FRACTION:.0%} of free memory (rounded down to 1 MiB); "
                      f"a {BIG_KERNEL_NS / 1e6:g} ms kernel on one stream; drop}}, timed from the first allocation "
                      "to the stream drained; memory given back between trials (untimed); median trial",
            "iterations": BIG_ITERATIONS,
            "fraction": BIG_FRACTION,
            "kernel_ns": BIG_KERNEL_NS,
            "trials": args.big_buffer_trials,
            "loops": big,
        },
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    for key, e in peers.items():
        if e["status"] == "ok":
            r = e.get("ratio_vs_raw")
            print(f"peers: {e['title']}: {e['per_launch_us']['median']:.2f} us"
                  + (f" ({r:.2f}x raw)" if r else ""))
        else:
            print(f"peers: {e['title']}: {e['status']}: {e['reason']}")
    for key, e in big.items():
        if e["status"] == "ok":
            print(f"peers: big-buffer loop, {e['title']}: {e['loop_s']['median']:.3f} s")
        else:
            print(f"peers: big-buffer loop, {e['title']}: {e['status']}: {e['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
