#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerates tests/scenario/malformed/: one invalid scenario per case, plus a
sidecar NAME.expect with two lines: the JSON path fragment and the message
fragment that the loader's error must contain (ScenarioLoader.MalformedCorpus).

Two sections:
  000-499  hand-written cases (raw text, top level, op-specific rules);
  500-     cases generated from tests/scenario/ops.json, the op table's
           snapshot (`tandem ops`): for every op, one case per required field
           left out, one with an unknown field, and one per field whose kind
           can be broken generically (a handle given a number, an undeclared
           stream, ...). A new op or field gets its cases from the table.

Regenerate (after changing the op table, whose snapshot the test
cli.OpsSnapshotIsTheOpTable compares with `tandem ops`):
  build/release/src/cli/tandem ops > tests/scenario/ops.json && python3 tests/scenario/make_malformed.py
The script needs only ops.json (no build); it rewrites the whole folder."""
import copy, json, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "malformed")

BASE = {
    "format": "tandem.scenario/1",
    "name": "base",
    "streams": ["s0", "s1"],
    "steps": [
        {"op": "alloc", "id": "x", "dtype": "f32", "len": 16, "init": "zero"},
        {"op": "alloc", "id": "y", "dtype": "f32", "len": 16, "init": "zero"},
        {"op": "launch", "id": "k", "model": "simt", "kernel": "axpy", "stream": "s0",
         "args": {"x": "x", "y": "y"}, "scalars": {"a": 2}},
        {"op": "loop", "count": 2, "steps": [{"op": "sleep", "us": 1}]},
        {"op": "check", "what": "unique", "of": "x", "value": True},
    ],
    "threads": {"writer": [{"op": "wait", "all": True}]},
    "expect": {"live_allocations": 0},
    "sim": {"memory_bytes": 1024, "stream_delay_us": {"s1": 10},
            "faults": [{"kind": "alloc_fail", "nth": 1}]},
}

cases = []  # (name, bytes, path fragment, message fragment)

def raw(name, text, path, msg):
    cases.append((name, text if isinstance(text, bytes) else text.encode(), path, msg))

def doc(name, fn, path, msg):
    d = copy.deepcopy(BASE)
    fn(d)
    raw(name, json.dumps(d, indent=1), path, msg)

def setk(*keys, value):
    def f(d):
        o = d
        for k in keys[:-1]:
            o = o[k]
        o[keys[-1]] = value
    return f

def delk(*keys):
    def f(d):
        o = d
        for k in keys[:-1]:
            o = o[k]
        del o[keys[-1]]
    return f

def step(s):
    return setk("steps", 0, value=s)

good = json.dumps(BASE)
# --- raw text problems
raw("empty", "", "", "empty")
raw("whitespace_only", "  \n\t ", "", "empty")
raw("truncated_half", good[: len(good) // 2], "", "invalid JSON")
raw("truncated_one_byte", good[:-1], "", "invalid JSON")
raw("truncated_in_string", '{"format": "tandem.sc', "", "invalid JSON")
raw("binary_garbage", bytes(range(256)) * 4, "", "invalid JSON")
raw("nul_bytes", b"\x00\x00\x00\x00", "", "invalid JSON")
raw("invalid_utf8_in_string", b'{"format": "tandem.scenario/1", "name": "\xff\xfe"}', "", "invalid JSON")
raw("utf16_bom", b'\xff\xfe{\x00}\x00', "", "invalid JSON")
raw("trailing_garbage", good + " xyz", "", "invalid JSON")
raw("two_documents", good + good, "", "invalid JSON")
raw("trailing_comma", '{"format": "tandem.scenario/1",}', "", "invalid JSON")
raw("comment", '{"format": "tandem.scenario/1" // hi\n}', "", "invalid JSON")
raw("single_quotes", "{'format': 'tandem.scenario/1'}", "", "invalid JSON")
raw("nan_literal", '{"format": "tandem.scenario/1", "repeat": NaN}', "", "invalid JSON")
raw("infinity_literal", '{"format": "tandem.scenario/1", "repeat": Infinity}', "", "invalid JSON")
raw("deep_nesting", '{"format": "tandem.scenario/1", "name": ' + "[" * 5000 + "]" * 5000 + "}", "", "nested deeper")
raw("deep_nesting_objects", '{"a":' * 200 + "1" + "}" * 200, "", "nested deeper")
raw("duplicate_top_key", '{"format": "tandem.scenario/1", "name": "a", "name": "b"}', "name", "duplicate key")
raw("duplicate_step_key", '{"format": "tandem.scenario/1", "steps": [{"op": "drop", "id": "a", "id": "b"}]}', "id", "duplicate key")
raw("huge_number_overflow", '{"format": "tandem.scenario/1", "repeat": 1e999}', "", "")
raw("unterminated_string", '{"format": "tandem.scenario/1', "", "invalid JSON")
raw("bare_word", "hello", "", "invalid JSON")
raw("control_char_in_string", '{"format": "tandem.scenario/1", "name": "a\x01b"}', "", "invalid JSON")
# --- top level
raw("top_array", "[1, 2, 3]", "<document>", "JSON object")
raw("top_string", '"tandem.scenario/1"', "<document>", "JSON object")
raw("top_number", "42", "<document>", "JSON object")
raw("top_null", "null", "<document>", "JSON object")
doc("missing_format", delk("format"), "format", "missing required key")
doc("wrong_format", setk("format", value="tandem.scenario/2"), "format", "tandem.scenario/1")
doc("format_number", setk("format", value=1), "format", "found number 1")
doc("format_case", setk("format", value="Tandem.Scenario/1"), "format", "exactly")
doc("unknown_top_key", setk("stream", value=["s0"]), "stream", "did you mean 'streams'")
doc("unknown_top_key_far", setk("zzzzzzzz", value=1), "zzzzzzzz", "unknown top-level key")
doc("name_number", setk("name", value=3), "name", "expected a string")
doc("description_array", setk("description", value=[]), "description", "expected a string")
doc("backend_bad", setk("backend", value="cdua"), "backend", "did you mean 'cuda'")
doc("backend_number", setk("backend", value=0), "backend", "one of auto, cuda, sim")
doc("device_negative", setk("device", value=-1), "device", "integer in [0, 1024]")
doc("device_string", setk("device", value="0"), "device", "found string")
doc("device_float", setk("device", value=0.5), "device", "integer")
doc("conflict_policy_bad", setk("conflict_policy", value="rejct"), "conflict_policy", "did you mean 'reject'")
doc("streams_not_array", setk("streams", value="s0"), "streams", "array of stream names")
doc("streams_number_entry", setk("streams", value=["s0", 1]), "streams[1]", "non-empty name")
doc("streams_empty_name", setk("streams", value=["s0", ""]), "streams[1]", "non-empty name")
doc("streams_duplicate", setk("streams", value=["s0", "s1", "s0"]), "streams[2]", "duplicate stream")
doc("repeat_zero", setk("repeat", value=0), "repeat", "[1, 1000000]")
doc("repeat_huge", setk("repeat", value=10**7), "repeat", "[1, 1000000]")
doc("repeat_negative", setk("repeat", value=-5), "repeat", "found number -5")
doc("repeat_bool", setk("repeat", value=True), "repeat", "found true")
doc("repeat_huge_int", setk("repeat", value=10**30), "repeat", "integer")
doc("steps_object", setk("steps", value={}), "steps", "array of steps")
doc("step_not_object", setk("steps", 1, value=3), "steps[1]", "step object")
doc("step_missing_op", step({"id": "x"}), "steps[0].op", "missing required field 'op'")
doc("step_op_number", step({"op": 5}), "steps[0].op", "op name string")
doc("unknown_op_close", step({"op": "aloc", "id": "x"}), "steps[0].op", "did you mean 'alloc'")
doc("unknown_op_far", step({"op": "explode"}), "steps[0].op", "unknown op 'explode'")
doc("unknown_step_field", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 4, "lenght": 4}), "steps[0].lenght", "unknown field")
doc("unknown_step_field_hint", step({"op": "drop", "idd": "x"}), "steps[0].idd", "did you mean 'id'")
doc("missing_step_field", step({"op": "alloc", "id": "x", "dtype": "f32"}), "steps[0].len", "missing required field 'len'")
doc("alloc_bad_dtype", step({"op": "alloc", "id": "x", "dtype": "f31", "len": 4}), "steps[0].dtype", "did you mean 'f32'")
doc("alloc_dtype_number", step({"op": "alloc", "id": "x", "dtype": 32, "len": 4}), "steps[0].dtype", "dtype name")
doc("alloc_len_negative", step({"op": "alloc", "id": "x", "dtype": "f32", "len": -1}), "steps[0].len", "found number -1")
doc("alloc_len_absurd", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 2**41}), "steps[0].len", "1099511627776")
doc("alloc_len_float", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 1.5}), "steps[0].len", "integer")
doc("alloc_len_string", step({"op": "alloc", "id": "x", "dtype": "f32", "len": "16"}), "steps[0].len", "found string")
doc("alloc_len_huge_float", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 1e300}), "steps[0].len", "integer")
doc("alloc_id_empty", step({"op": "alloc", "id": "", "dtype": "f32", "len": 4}), "steps[0].id", "non-empty name")
doc("alloc_id_number", step({"op": "alloc", "id": 7, "dtype": "f32", "len": 4}), "steps[0].id", "non-empty name")
doc("alloc_init_bad_string", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 4, "init": "zeros"}), "steps[0].init", "\"zero\"")
doc("alloc_init_bad_object", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 4, "init": {"fil": 1}}), "steps[0].init", "fill")
doc("alloc_init_fill_string", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 4, "init": {"fill": "1"}}), "steps[0].init.fill", "finite number")
doc("alloc_init_random_negative", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 4, "init": {"random": -3}}), "steps[0].init.random", "integer")
doc("alloc_init_array", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 4, "init": [1, 2]}), "steps[0].init", "found an array")
doc("alloc_unknown_stream", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 4, "init": "zero", "stream": "s2"}), "steps[0].stream", "did you mean 's0'")
doc("alloc_stream_number", step({"op": "alloc", "id": "x", "dtype": "f32", "len": 4, "stream": 0}), "steps[0].stream", "non-empty name")
doc("slice_offset_negative", step({"op": "slice", "id": "v", "of": "x", "offset": -2, "len": 1}), "steps[0].offset", "integer")
doc("split_ids_one", step({"op": "split", "of": "x", "at": 2, "ids": ["a"]}), "steps[0].ids", "two handle names")
doc("split_ids_number", step({"op": "split", "of": "x", "at": 2, "ids": ["a", 1]}), "steps[0].ids[1]", "non-empty name")
doc("peel_index_string", step({"op": "peel", "id": "p", "of": "x", "index": "0"}), "steps[0].index", "integer")
doc("to_tensor_shape_string", step({"op": "to_tensor", "id": "t", "from": "x", "shape": "4x4"}), "steps[0].shape", "array of 1 to 4")
doc("to_tensor_shape_rank5", step({"op": "to_tensor", "id": "t", "from": "x", "shape": [1, 1, 1, 1, 1]}), "steps[0].shape", "array of 1 to 4")
doc("to_tensor_shape_negative", step({"op": "to_tensor", "id": "t", "from": "x", "shape": [4, -4]}), "steps[0].shape[1]", "integer")
doc("tensor_view_slice_bad", step({"op": "tensor_view", "id": "t", "of": "x", "slice": [[0, 4, 5]]}), "steps[0].slice[0]", "array of 2 to 2")
doc("tensor_view_slice_reversed", step({"op": "tensor_view", "id": "t", "of": "x", "slice": [[4, 0]]}), "steps[0].slice[0]", "begin <= end")
doc("reinterpret_bad_dtype", step({"op": "reinterpret", "id": "r", "from": "x", "dtype": "float"}), "steps[0].dtype", "unknown dtype")
doc("launch_unknown_kernel_close", setk("steps", 2, "kernel", value="axyp"), "steps[2].kernel", "did you mean 'axpy'")
doc("launch_unknown_kernel_tile", setk("steps", 2, "model", value="tile"), "steps[2].kernel", "unknown tile kernel")
doc("launch_bad_model", setk("steps", 2, "model", value="simd"), "steps[2].model", "did you mean 'simt'")
doc("launch_bad_arg_name", setk("steps", 2, "args", value={"x": "x", "yy": "y"}), "steps[2].args.yy", "did you mean 'y'")
doc("launch_missing_arg", setk("steps", 2, "args", value={"x": "x"}), "steps[2].args.y", "missing argument 'y'")
doc("launch_arg_not_string", setk("steps", 2, "args", value={"x": "x", "y": 3}), "steps[2].args.y", "non-empty name")
doc("launch_args_array", setk("steps", 2, "args", value=["x", "y"]), "steps[2].args", "object {param: handle}")
doc("launch_bad_scalar_name", setk("steps", 2, "scalars", value={"alpha": 2}), "steps[2].scalars.alpha", "no scalar parameter")
doc("launch_scalar_is_view", setk("steps", 2, "scalars", value={"a": 2, "x": 1}), "steps[2].scalars.x", "no scalar parameter")
doc("launch_scalar_string", setk("steps", 2, "scalars", value={"a": "2"}), "steps[2].scalars.a", "finite number")
doc("launch_missing_scalar", delk("steps", 2, "scalars"), "steps[2].scalars.a", "missing scalar 'a'")
doc("launch_unknown_stream_close", setk("steps", 2, "stream", value="s00"), "steps[2].stream", "did you mean 's0'")
doc("launch_grid_zero", setk("steps", 2, "grid", value=0), "steps[2].grid", "[1, 4294967295]")
doc("launch_block_four_dims", setk("steps", 2, "block", value=[1, 1, 1, 1]), "steps[2].block", "1 to 3")
doc("launch_tile_on_simt", setk("steps", 2, "tile", value=[64]), "steps[2].tile", "for tile launches")
doc("launch_missing_kernel", delk("steps", 2, "kernel"), "steps[2].kernel", "missing required field")
doc("copy_missing_stream", step({"op": "copy", "src": "x", "dst": "y"}), "steps[0].stream", "missing required field 'stream'")
doc("upload_bad_from", step({"op": "upload", "buf": "x", "stream": "s0", "from": "zero"}), "steps[0].from", "array of values")
doc("upload_from_value_string", step({"op": "upload", "buf": "x", "stream": "s0", "from": [1, "2"]}), "steps[0].from[1]", "finite number")
doc("upload_iota_bad_field", step({"op": "upload", "buf": "x", "stream": "s0", "from": {"iota": {"strat": 1}}}), "steps[0].from.iota.strat", "did you mean 'start'")
doc("download_unknown_stream", step({"op": "download", "buf": "x", "stream": "gpu"}), "steps[0].stream", "unknown stream 'gpu'")
doc("capture_steps_not_array", step({"op": "capture", "graph": "g", "stream": "s0", "steps": {}}), "steps[0].steps", "array of steps")
doc("capture_nested_bad", step({"op": "capture", "graph": "g", "stream": "s0", "steps": [{"op": "slep", "us": 1}]}), "steps[0].steps[0].op", "did you mean 'sleep'")
doc("replay_missing_graph", step({"op": "replay", "stream": "s0"}), "steps[0].graph", "missing required field 'graph'")
doc("wait_none", step({"op": "wait"}), "steps[0]", "exactly one of")
doc("wait_two", step({"op": "wait", "id": "k", "stream": "s0"}), "steps[0]", "exactly one of")
doc("wait_all_false", step({"op": "wait", "all": False}), "steps[0].all", "expected true")
doc("retire_timeout_negative", step({"op": "retire", "timeout_ms": -1}), "steps[0].timeout_ms", "integer")
doc("check_unknown_what", step({"op": "check", "what": "uniqe", "of": "x", "value": True}), "steps[0].what", "did you mean 'unique'")
doc("check_unique_value_number", step({"op": "check", "what": "unique", "of": "x", "value": 1}), "steps[0].value", "true or false")
doc("check_views_value_bool", step({"op": "check", "what": "views", "of": "x", "value": True}), "steps[0].value", "integer")
doc("check_missing_of", step({"op": "check", "what": "freed", "value": True}), "steps[0].of", "missing required field 'of'")
doc("check_pending_extra_of", step({"op": "check", "what": "pending", "of": "x", "value": 0}), "steps[0].of", "unexpected field")
doc("check_same_allocation_missing_b", step({"op": "check", "what": "same_allocation", "a": "x", "value": True}), "steps[0].b", "missing required field 'b'")
doc("check_contents_bad_equals", step({"op": "check", "what": "contents", "of": "x", "equals": "shadw"}), "steps[0].equals", "\"shadow\"")
doc("check_contents_equals_nested", step({"op": "check", "what": "contents", "of": "x", "equals": [[1]]}), "steps[0].equals[0]", "finite number")
doc("vram_both", step({"op": "vram", "mark": True, "check": True}), "steps[0]", "exactly one of")
doc("vram_tolerance_negative", step({"op": "vram", "check": True, "tolerance_bytes": -1}), "steps[0].tolerance_bytes", "integer")
doc("loop_count_absurd", setk("steps", 3, "count", value=10**8), "steps[3].count", "10000000")
doc("loop_count_negative", setk("steps", 3, "count", value=-1), "steps[3].count", "integer")
doc("sleep_too_long", step({"op": "sleep", "us": 61000000}), "steps[0].us", "60000000")
doc("sleep_missing_us", step({"op": "sleep"}), "steps[0].us", "missing required field 'us'")
doc("expect_error_bad_code", step({"op": "drop", "id": "x", "expect_error": "invalid-handle"}), "steps[0].expect_error", "did you mean 'invalid_handle'")
doc("expect_error_number", step({"op": "drop", "id": "x", "expect_error": 3}), "steps[0].expect_error", "one of aliased")
def deep_loop(n):
    s = {"op": "sleep", "us": 1}
    for _ in range(n):
        s = {"op": "loop", "count": 1, "steps": [s]}
    return s
doc("loop_nesting_17", step(deep_loop(17)), ".steps", "nesting deeper than 16")
doc("threads_array", setk("threads", value=[]), "threads", "object mapping")
doc("threads_steps_not_array", setk("threads", "writer", value={"op": "wait"}), "threads.writer", "array of steps")
doc("threads_bad_step", setk("threads", "writer", value=[{"op": "alloc", "id": "x", "dtype": "f32", "len": -4}]), "threads.writer[0].len", "integer")
doc("threads_unknown_stream", setk("threads", "writer", value=[{"op": "wait", "stream": "s3"}]), "threads.writer[0].stream", "unknown stream")
doc("expect_unknown_key", setk("expect", "leaks", value=0), "expect.leaks", "unknown expect key")
doc("expect_key_typo", setk("expect", "violation", value=0), "expect.violation", "did you mean 'violations'")
doc("expect_negative", setk("expect", "violations", value=-1), "expect.violations", "integer")
doc("expect_string", setk("expect", "live_allocations", value="0"), "expect.live_allocations", "found string")
doc("expect_not_object", setk("expect", value=[0]), "expect", "expected an object")
doc("sim_not_object", setk("sim", value=1), "sim", "expected an object")
doc("sim_unknown_key", setk("sim", "memory", value=1), "sim.memory", "did you mean 'memory_bytes'")
doc("sim_memory_zero", setk("sim", "memory_bytes", value=0), "sim.memory_bytes", "integer")
doc("sim_memory_string", setk("sim", "memory_bytes", value="1GiB"), "sim.memory_bytes", "found string")
doc("sim_delay_unknown_stream", setk("sim", "stream_delay_us", value={"s2": 5}), "sim.stream_delay_us.s2", "did you mean 's0'")
doc("sim_delay_negative", setk("sim", "stream_delay_us", value={"s1": -5}), "sim.stream_delay_us.s1", "integer")
doc("sim_delay_array", setk("sim", "stream_delay_us", value=[5]), "sim.stream_delay_us", "object {stream")
doc("sim_faults_object", setk("sim", "faults", value={}), "sim.faults", "array of fault")
doc("sim_fault_unknown_kind", setk("sim", "faults", value=[{"kind": "alloc_failure", "nth": 1}]), "sim.faults[0].kind", "did you mean 'alloc_fail'")
doc("sim_fault_nth_zero", setk("sim", "faults", value=[{"kind": "alloc_fail", "nth": 0}]), "sim.faults[0].nth", "integer")
doc("sim_fault_missing_nth", setk("sim", "faults", value=[{"kind": "alloc_fail"}]), "sim.faults[0].nth", "missing required field")
doc("sim_fault_unknown_submission", setk("sim", "faults", value=[{"kind": "completion_unknown", "submission": "kk"}]), "sim.faults[0].submission", "did you mean 'k'")
doc("sim_fault_submission_is_alloc", setk("sim", "faults", value=[{"kind": "completion_unknown", "submission": "x"}]), "sim.faults[0].submission", "launch or replay")
doc("sim_fault_extra_field", setk("sim", "faults", value=[{"kind": "alloc_fail", "nth": 1, "count": 2}]), "sim.faults[0].count", "unknown field")
doc("sim_fault_not_object", setk("sim", "faults", value=["alloc_fail"]), "sim.faults[0]", "fault object")
doc("null_everywhere", setk("steps", value=None), "steps", "found null")
doc("many_errors", lambda d: d.update({"repeat": -1, "device": "x", "backend": 1}), "repeat", "integer")
# --- several devices (extension): stream objects, peer_access, vram device
doc("stream_object_negative_device", setk("streams", 1, value={"name": "s1", "device": -1}), "streams[1].device", "integer")
doc("stream_object_device_string", setk("streams", 1, value={"name": "s1", "device": "1"}), "streams[1].device", "found string")
doc("stream_object_device_too_big", setk("streams", 1, value={"name": "s1", "device": 5000}), "streams[1].device", "integer in [0, 1024]")
doc("stream_object_missing_name", setk("streams", 1, value={"device": 1}), "streams[1].name", "missing required field")
doc("stream_object_unknown_key", setk("streams", 1, value={"name": "s1", "gpu": 1}), "streams[1].gpu", "unknown stream field")
doc("peer_access_one_device", step({"op": "peer_access", "devices": [0]}), "steps[0].devices", "two device ordinals")
doc("peer_access_same_device", step({"op": "peer_access", "devices": [1, 1]}), "steps[0].devices", "two different devices")
doc("peer_access_bad_ordinal", step({"op": "peer_access", "devices": [0, -1]}), "steps[0].devices[1]", "integer")
doc("peer_access_missing_devices", step({"op": "peer_access"}), "steps[0].devices", "missing required field")
doc("vram_bad_device", step({"op": "vram", "mark": True, "device": -2}), "steps[0].device", "integer")
# --- len {"fraction_of_free": f} (extension, alloc only)
def frac(v):
    return step({"op": "alloc", "id": "x", "dtype": "f32", "len": v, "init": "none"})
doc("alloc_fraction_zero", frac({"fraction_of_free": 0}), "steps[0].len.fraction_of_free", "number in (0, 1]")
doc("alloc_fraction_above_one", frac({"fraction_of_free": 1.5}), "steps[0].len.fraction_of_free", "found number 1.5")
doc("alloc_fraction_negative", frac({"fraction_of_free": -0.5}), "steps[0].len.fraction_of_free", "number in (0, 1]")
doc("alloc_fraction_string", frac({"fraction_of_free": "0.6"}), "steps[0].len.fraction_of_free", "found string")
doc("alloc_fraction_bool", frac({"fraction_of_free": True}), "steps[0].len.fraction_of_free", "found true")
doc("alloc_fraction_null", frac({"fraction_of_free": None}), "steps[0].len.fraction_of_free", "found null")
doc("alloc_fraction_missing", frac({}), "steps[0].len.fraction_of_free", "missing required field 'fraction_of_free'")
doc("alloc_fraction_typo", frac({"fraction": 0.5}), "steps[0].len.fraction", "did you mean 'fraction_of_free'")
doc("alloc_fraction_extra_key", frac({"fraction_of_free": 0.5, "min": 1}), "steps[0].len.min", "unknown len field 'min'")
doc("alloc_len_array", frac([0.5]), "steps[0].len", "found an array")
doc("foreign_fraction", step({"op": "foreign", "id": "x", "dtype": "f32", "len": {"fraction_of_free": 0.5}}), "steps[0].len", "for alloc only")
doc("slice_fraction", step({"op": "slice", "id": "v", "of": "x", "offset": 0, "len": {"fraction_of_free": 0.5}}), "steps[0].len", "for alloc only")
doc("threads_fraction_bad", setk("threads", "writer", value=[{"op": "loop", "count": 2, "steps": [
    {"op": "alloc", "id": "w", "dtype": "u8", "len": {"fraction_of_free": 2}}]}]), "threads.writer[0].steps[0].len.fraction_of_free", "number in (0, 1]")
# --- driver-error sim faults (extension): alloc_error, launch_fail, copy_fail
def fault(f):
    return setk("sim", "faults", value=[f])
doc("sim_fault_launch_fail_nth_zero", fault({"kind": "launch_fail", "nth": 0}), "sim.faults[0].nth", "integer in [1, ")
doc("sim_fault_copy_fail_missing_nth", fault({"kind": "copy_fail"}), "sim.faults[0].nth", "missing required field 'nth' for fault 'copy_fail'")
doc("sim_fault_alloc_error_submission", fault({"kind": "alloc_error", "nth": 1, "submission": "k"}), "sim.faults[0].submission", "unknown field 'submission' for fault 'alloc_error'")
doc("sim_fault_launch_fail_nth_string", fault({"kind": "launch_fail", "nth": "2"}), "sim.faults[0].nth", "found string")
doc("sim_fault_copy_fail_typo", fault({"kind": "copy_fial", "nth": 1}), "sim.faults[0].kind", "did you mean 'copy_fail'")
# --- interop (extension): borrow_stream names a stream of its own, which steps may name in `stream`
doc("borrow_stream_declared_name", step({"op": "borrow_stream", "id": "s1"}), "steps[0].id", "stream 's1' is declared in 'streams'")
doc("borrow_stream_name_typo", lambda d: d["steps"].extend([{"op": "borrow_stream", "id": "lib"},
    {"op": "wait", "stream": "lbi"}]), "steps[6].stream", "declared streams: [s0, s1]; borrowed streams: [lib]")
doc("borrow_stream_context_empty", step({"op": "borrow_stream", "id": "lib", "context": ""}), "steps[0].context", "non-empty name")
doc("borrow_context_stream_field", step({"op": "borrow_context", "id": "c", "stream": "s0"}), "steps[0].stream", "unknown field 'stream' for op 'borrow_context'")
doc("borrowed_stream_delay_negative", lambda d: (d["steps"].append({"op": "borrow_stream", "id": "lib"}),
    d["sim"]["stream_delay_us"].update({"lib": -1})), "sim.stream_delay_us.lib", "integer")
# --- declared_launch (extension): a recorded launch of a kernel outside the catalog, replayed as its leases
def declared(accesses):
    return step({"op": "declared_launch", "stream": "s0", "accesses": accesses})
doc("declared_launch_access_typo", declared([{"view": "x", "access": "wirte"}]), "steps[0].accesses[0].access", "did you mean 'write'")
doc("declared_launch_access_missing", declared([{"view": "x"}]), "steps[0].accesses[0].access", "missing required field 'access' of an access")
doc("declared_launch_view_empty", declared([{"view": "", "access": "read"}]), "steps[0].accesses[0].view", "non-empty name")
doc("declared_launch_access_unknown_key", declared([{"view": "x", "access": "read", "mode": "r"}]), "steps[0].accesses[0].mode", "unknown access field 'mode'")
doc("declared_launch_accesses_object", declared({"x": "read"}), "steps[0].accesses", "an array of")
doc("declared_launch_access_not_object", declared(["x"]), "steps[0].accesses[0]", "an object {")


# =============================================================================
# Generated from the op table: every case below comes from tests/scenario/
# ops.json (the output of `tandem ops`), numbered from 500, grouped per op in
# the table's order. No op is named here except where the table cannot say
# what a valid value is (MINIMAL_OWN): a new op or field gets its cases when
# the snapshot is regenerated.
# =============================================================================
OPS_JSON = os.path.join(HERE, "ops.json")
TABLE_FIRST = 500  # the first number of the generated cases
n_hand_written = len(cases)

# Per field kind (ops.json's "kind"): a valid value for a minimal step, and
# (rule, a value that breaks the field, the message fragment the loader
# reports: json_reader.cpp, step_reader.cpp), or None where the kind has no
# generic break.
KINDS = {
    "handle": ("x", ("number", 7, "expected a non-empty name string, found number 7")),
    "handle pair": (["a", "b"], ("string", "a", 'expected an array of two handle names [a, b], found string "a"')),
    "stream": ("s0", ("undeclared", "s9", "unknown stream 's9'")),
    "dtype": ("f32", ("unknown", "f33", "unknown dtype 'f33'")),
    "length": (4, ("negative", -1, "expected an integer in [0, ")),
    "integer": (1, ("negative", -1, "expected an integer in [0, ")),
    "init form": ("zero", ("number", 5, 'expected "none", "zero", "iota", {"fill": v} or {"random": seed}, found number 5')),
    "value form": ([1, 2], ("string", "zero", 'expected {"fill": v}, {"iota": {...}} or an array of values, found string "zero"')),
    "shape": ([4], ("string", "4x4", 'expected an array of 1 to 4 integers >= 0, found string "4x4"')),
    "ranges": ([[0, 1]], ("empty", [], "expected an array of 1 to 4 [begin, end) pairs, found an array")),
    "steps": ([{"op": "sleep", "us": 1}], ("object", {}, "expected an array of steps, found an object")),
    "text": ("hello", ("number", 5, "expected a string, found number 5")),
    "op-specific": (None, None),  # read by the op's own function: see MINIMAL_OWN
}

# A minimal valid step takes, for each required field, its kind's valid value.
# "op-specific" fields are read by the op's own function, so a valid value is
# given here, with any optional field the op needs to be valid (wait: exactly
# one of id/stream/all; check: what its `what` takes). A required op-specific
# field missing here stops the script. (A broken optional field is added to
# the minimal step: wait's id/stream cases also get "exactly one of".)
MINIMAL_OWN = {
    "launch": {"model": "simt", "kernel": "axpy", "args": {"x": "x", "y": "y"}, "scalars": {"a": 2}},
    "check": {"what": "unique", "of": "x", "value": True},
    "wait": {"all": True},
    "vram": {"mark": True},
    "peer_access": {"devices": [0, 1]},
    "declared_launch": {"accesses": [{"view": "x", "access": "write"}]},
}
UNKNOWN_FIELD = "zzz_unknown"


def load_ops():
    with open(OPS_JSON) as f:
        ops = json.load(f)
    for row in ops:
        for fld in row["fields"]:
            if fld["kind"] not in KINDS:
                raise SystemExit("%s: op '%s' field '%s' has kind '%s', unknown to make_malformed.py: add it to KINDS"
                                 % (OPS_JSON, row["op"], fld["name"], fld["kind"]))
    return ops


def minimal_step(row):
    names = [fld["name"] for fld in row["fields"]]
    own = MINIMAL_OWN.get(row["op"], {})
    for k in own:
        if k not in names:
            raise SystemExit("make_malformed.py: MINIMAL_OWN gives op '%s' a field '%s' it does not take"
                             % (row["op"], k))
    s = {"op": row["op"]}
    for fld in row["fields"]:
        if not fld["required"]:
            continue
        valid = KINDS[fld["kind"]][0]
        if fld["kind"] == "op-specific":
            if fld["name"] not in own:
                raise SystemExit("make_malformed.py: op '%s' requires op-specific field '%s': give it a valid "
                                 "value in MINIMAL_OWN" % (row["op"], fld["name"]))
            continue
        s[fld["name"]] = copy.deepcopy(valid)
    s.update(copy.deepcopy(own))
    return s


def op_cases(row):
    op = row["op"]
    base = minimal_step(row)
    assert UNKNOWN_FIELD not in base
    for fld in row["fields"]:
        f = fld["name"]
        if fld["required"]:
            s = {k: v for k, v in base.items() if k != f}
            doc("%s_missing_%s" % (op, f), step(s), "steps[0].%s" % f,
                "missing required field '%s' for op '%s'" % (f, op))
    doc("%s_unknown_field" % op, step(dict(base, **{UNKNOWN_FIELD: 1})), "steps[0].%s" % UNKNOWN_FIELD,
        "unknown field '%s' for op '%s'" % (UNKNOWN_FIELD, op))
    for fld in row["fields"]:
        broken = KINDS[fld["kind"]][1]
        if broken is None:
            continue
        rule, value, msg = broken
        f = fld["name"]
        doc("%s_%s_%s" % (op, f, rule), step(dict(base, **{f: copy.deepcopy(value)})), "steps[0].%s" % f, msg)


for _row in load_ops():
    op_cases(_row)


if __name__ == "__main__":
    assert n_hand_written <= TABLE_FIRST, "hand-written cases would run into the generated ones"
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for i, (name, data, path, msg) in enumerate(cases):
        number = i if i < n_hand_written else TABLE_FIRST + i - n_hand_written
        base = os.path.join(OUT, "%03d_%s" % (number, name))
        with open(base + ".json", "wb") as f:
            f.write(data)
        with open(base + ".expect", "w") as f:
            f.write(path + "\n" + msg + "\n")
    print(len(cases), "cases:", n_hand_written, "hand-written,", len(cases) - n_hand_written, "from ops.json")
