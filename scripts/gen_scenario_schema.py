#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes schemas/tandem.scenario-1.schema.json (JSON Schema 2020-12) from the
op table and the kernel catalog, as the tandem binary prints them:

  scripts/gen_scenario_schema.py --tandem build/release/src/cli/tandem \\
      --out schemas/tandem.scenario-1.schema.json

Every op, its fields and which are required come from `tandem ops --json`;
the kernels, their models, view and scalar parameters from `tandem kernels
--json`. Written here by hand: the document's own keys, what a field kind
accepts (its bounds are the loader's, src/scenario/src/json_reader.hpp), and
the fields the table marks "op-specific" (OWN below). An op or field kind
the script does not know stops it, so a new op cannot leave the schema
behind. The CTest test scripts.ScenarioSchemaIsGeneratedFromTheOpTable runs
this with --check: the committed schema must be exactly what it writes.
Vocabularies the op table does not carry (dtypes, error codes, check forms,
fault kinds) are compared with the loader's own messages by
scripts/check-schemas."""
import argparse
import json
import subprocess
import sys

# The loader's bounds (json_reader.hpp).
MAX_LEN = 1 << 40
MAX_REPEAT = 1_000_000
MAX_LOOP = 10_000_000
MAX_SLEEP_US = 60_000_000
MAX_TIMEOUT_MS = 3_600_000
MAX_BYTES = 1 << 50
MAX_DEVICE = 1024
MAX_EXPECT = 1 << 40
MAX_INLINE_VALUES = 1 << 20
MAX_TEXT = 4096
MAX_U32 = 0xFFFFFFFF
MAX_U64 = (1 << 64) - 1

# Vocabularies (checked against the loader's messages by scripts/check-schemas).
DTYPES = ["f32", "f64", "f16", "bf16", "i8", "i32", "i64", "u8", "u32", "u64", "bool", "tf32",
          "fp8_e4m3", "fp8_e5m2", "fp4_e2m1x2"]
ERROR_CODES = ["aliased", "non_contiguous", "conflict", "out_of_range", "device_mismatch", "invalid_dtype",
               "out_of_memory", "invalid_handle", "driver", "timeout", "unsupported"]
FAULT_KINDS = ["completion_unknown", "alloc_fail", "alloc_error", "launch_fail", "copy_fail"]
EXPECT_KEYS = ["live_allocations", "quarantined_allocations", "foreign_owners_unreleased", "violations",
               "uniqueness_failures"]
# check: what each form takes besides op, what and expect_error (ops/check.cpp).
CHECK_FORMS = {
    "unique": {"of": "name", "value": "bool"},
    "views": {"of": "name", "value": "count"},
    "live_allocations": {"value": "count"},
    "pending": {"value": "count"},
    "freed": {"of": "name", "value": "bool"},
    "owner_released": {"of": "name", "value": "bool"},
    "same_allocation": {"a": "name", "b": "name", "value": "bool"},
    "contents": {"of": "name", "equals": "equals"},
}

# Integer fields (kind "integer"): their upper bounds.
INTEGER_MAX = {"offset": MAX_LEN, "at": MAX_LEN, "index": MAX_LEN, "count": MAX_LOOP, "us": MAX_SLEEP_US,
               "timeout_ms": MAX_TIMEOUT_MS}

# Field kinds of `tandem ops` -> a schema.
KINDS = {
    "handle": {"$ref": "#/$defs/name"},
    "handle pair": {"$ref": "#/$defs/handle_pair"},
    "stream": {"$ref": "#/$defs/name"},
    "dtype": {"$ref": "#/$defs/dtype"},
    "length": {"$ref": "#/$defs/length"},
    "init form": {"$ref": "#/$defs/init"},
    "value form": {"$ref": "#/$defs/values"},
    "shape": {"$ref": "#/$defs/shape"},
    "ranges": {"$ref": "#/$defs/ranges"},
    "steps": {"$ref": "#/$defs/steps"},
    "text": {"type": "string", "maxLength": MAX_TEXT},
}
# A field whose kind does not say it all.
FIELD_OVERRIDES = {("alloc", "len"): {"$ref": "#/$defs/length_or_fraction"}}


def uint(lo, hi):
    return {"type": "integer", "minimum": lo, "maximum": hi}


DIM3 = {"oneOf": [uint(1, MAX_U32), {"type": "array", "minItems": 1, "maxItems": 3, "items": uint(1, MAX_U32)}]}

# Fields the table marks "op-specific" (read by the op's own function): their
# schema, and the rules between fields of the op ("rules", merged into the op's).
OWN = {
    "launch": {
        "model": {"enum": ["simt", "tile"]},
        "kernel": {"$ref": "#/$defs/name"},
        "args": {"type": "object", "additionalProperties": {"$ref": "#/$defs/name"}},
        "scalars": {"type": "object", "additionalProperties": {"type": "number"}},
        "grid": DIM3,
        "block": DIM3,
        "tile": {"oneOf": [uint(1, MAX_LEN), {"type": "array", "minItems": 1, "maxItems": 2,
                                               "items": uint(1, MAX_LEN)}]},
    },
    "declared_launch": {
        "accesses": {"type": "array", "items": {
            "type": "object", "properties": {"view": {"$ref": "#/$defs/name"},
                                             "access": {"enum": ["read", "write", "read_write", "atomic"]}},
            "required": ["view", "access"], "additionalProperties": False}},
        "kernel": {"type": "string", "maxLength": MAX_TEXT},
        "grid": DIM3,
        "block": DIM3,
    },
    "wait": {"all": {"const": True}},
    "check": {
        "what": {"enum": list(CHECK_FORMS)},
        "value": {}, "a": {"$ref": "#/$defs/name"}, "b": {"$ref": "#/$defs/name"}, "equals": {},
    },
    "vram": {"mark": {"const": True}, "check": {"const": True}, "tolerance_bytes": uint(0, MAX_BYTES),
             "device": uint(0, MAX_DEVICE)},
    "peer_access": {"devices": {"type": "array", "minItems": 2, "maxItems": 2, "uniqueItems": True,
                                "items": uint(0, MAX_DEVICE)}},
}


def check_rules():
    rules = []
    shapes = {"name": {"$ref": "#/$defs/name"}, "bool": {"type": "boolean"}, "count": uint(0, MAX_EXPECT),
              "equals": {"$ref": "#/$defs/equals"}}
    every = ["of", "value", "a", "b", "equals"]
    for what, fields in CHECK_FORMS.items():
        props = {k: (shapes[fields[k]] if k in fields else False) for k in every}
        rules.append({"if": {"properties": {"what": {"const": what}}, "required": ["what"]},
                      "then": {"properties": props, "required": list(fields)}})
    return rules


def launch_rules(kernels):
    rules = []
    for model in ("simt", "tile"):
        names = sorted(k["kernel"] for k in kernels if k["model"] == model)
        then = {"properties": {"kernel": {"enum": names}}}
        if model == "simt":
            then["properties"]["tile"] = False
        else:
            then["properties"].update({"grid": False, "block": False})
        rules.append({"if": {"properties": {"model": {"const": model}}, "required": ["model"]}, "then": then})
    for k in kernels:
        views = [p["name"] for p in k["params"] if p["kind"] == "view"]
        scalars = [p["name"] for p in k["params"] if p["kind"] == "scalar"]
        needed = [p["name"] for p in k["params"] if p["kind"] == "scalar" and "default" not in p]
        then = {"properties": {
            "args": {"properties": {v: True for v in views}, "additionalProperties": False, "required": views},
            "scalars": {"properties": {s: True for s in scalars}, "additionalProperties": False,
                        "required": needed}}}
        if needed:
            then["required"] = ["scalars"]
        rules.append({"if": {"properties": {"model": {"const": k["model"]}, "kernel": {"const": k["kernel"]}},
                             "required": ["model", "kernel"]},
                      "then": then})
    return rules


RULES = {
    "wait": lambda kernels: [{"oneOf": [{"required": ["id"]}, {"required": ["stream"]}, {"required": ["all"]}]}],
    "vram": lambda kernels: [{"oneOf": [{"required": ["mark"]}, {"required": ["check"]}]},
                             {"if": {"required": ["mark"]}, "then": {"properties": {"tolerance_bytes": False}}}],
    "check": lambda kernels: check_rules(),
    "launch": launch_rules,
}


def field_schema(op, f):
    if (op, f["name"]) in FIELD_OVERRIDES:
        return FIELD_OVERRIDES[(op, f["name"])]
    kind = f["kind"]
    if kind == "op-specific":
        own = OWN.get(op, {})
        if f["name"] not in own:
            sys.exit("gen_scenario_schema.py: op '%s' field '%s' is op-specific and has no schema here: add it to OWN"
                     % (op, f["name"]))
        return own[f["name"]]
    if kind == "integer":
        if f["name"] not in INTEGER_MAX:
            sys.exit("gen_scenario_schema.py: integer field '%s' of op '%s' has no bound here: add it to INTEGER_MAX"
                     % (f["name"], op))
        return uint(0, INTEGER_MAX[f["name"]])
    if kind not in KINDS:
        sys.exit("gen_scenario_schema.py: op '%s' field '%s' has kind '%s', unknown here: add it to KINDS"
                 % (op, f["name"], kind))
    return KINDS[kind]


def op_schema(row, kernels):
    op = row["op"]
    props = {"op": {"const": op}, "expect_error": {"$ref": "#/$defs/error_code"}}
    for f in row["fields"]:
        s = dict(field_schema(op, f))
        s["description"] = f["doc"] + (" (default: %s)" % f["default"] if "default" in f else "")
        props[f["name"]] = s
    out = {"description": row["doc"], "type": "object", "properties": props,
           "required": ["op"] + [f["name"] for f in row["fields"] if f["required"]],
           "additionalProperties": False}
    if op in RULES:
        out["allOf"] = RULES[op](kernels)
    return out


def common_defs():
    fill = {"type": "object", "properties": {"fill": {"type": ["number", "boolean"]}}, "required": ["fill"],
            "additionalProperties": False}
    iota_obj = {"type": "object", "properties": {"iota": {
        "type": "object", "properties": {"start": {"type": "number"}, "step": {"type": "number"}},
        "additionalProperties": False}}, "required": ["iota"], "additionalProperties": False}
    value_array = {"type": "array", "maxItems": MAX_INLINE_VALUES, "items": {"type": ["number", "boolean"]}}
    return {
        "name": {"type": "string", "minLength": 1},
        "handle_pair": {"type": "array", "minItems": 2, "maxItems": 2, "items": {"$ref": "#/$defs/name"}},
        "dtype": {"enum": DTYPES},
        "error_code": {"enum": ERROR_CODES},
        "length": uint(0, MAX_LEN),
        "length_or_fraction": {"oneOf": [
            uint(0, MAX_LEN),
            {"type": "object", "properties": {"fraction_of_free": {"type": "number", "exclusiveMinimum": 0,
                                                                   "maximum": 1}},
             "required": ["fraction_of_free"], "additionalProperties": False}]},
        "init": {"oneOf": [
            {"enum": ["none", "zero", "iota"]}, fill,
            {"type": "object", "properties": {"random": uint(0, MAX_U64)}, "required": ["random"],
             "additionalProperties": False}]},
        "values": {"oneOf": [fill, iota_obj, value_array]},
        "equals": {"oneOf": [fill, iota_obj, value_array, {"const": "shadow"}]},
        "shape": {"type": "array", "minItems": 1, "maxItems": 4, "items": uint(0, MAX_LEN)},
        "ranges": {"type": "array", "minItems": 1, "maxItems": 4,
                   "items": {"type": "array", "minItems": 2, "maxItems": 2, "items": uint(0, MAX_LEN)}},
        "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
    }


def top_level():
    stream = {"oneOf": [{"$ref": "#/$defs/name"},
                        {"type": "object", "properties": {"name": {"$ref": "#/$defs/name"},
                                                          "device": uint(0, MAX_DEVICE)},
                         "required": ["name"], "additionalProperties": False}]}
    fault = {"type": "object", "properties": {"kind": {"enum": FAULT_KINDS}}, "required": ["kind"],
             "allOf": [{"if": {"properties": {"kind": {"const": "completion_unknown"}}},
                        "then": {"properties": {"kind": True, "submission": {"$ref": "#/$defs/name"}},
                                 "required": ["submission"], "additionalProperties": False},
                        "else": {"properties": {"kind": True, "nth": uint(1, MAX_EXPECT)},
                                 "required": ["nth"], "additionalProperties": False}}]}
    return {
        "$schema": {"type": "string", "description": "the JSON Schema an editor checks the file against; ignored"},
        "format": {"const": "tandem.scenario/1"},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "backend": {"enum": ["auto", "cuda", "sim"]},
        "device": uint(0, MAX_DEVICE),
        "conflict_policy": {"enum": ["order", "reject"]},
        "streams": {"type": "array", "uniqueItems": True, "items": stream},
        "repeat": uint(1, MAX_REPEAT),
        "steps": {"$ref": "#/$defs/steps"},
        "threads": {"type": "object", "propertyNames": {"minLength": 1},
                    "additionalProperties": {"$ref": "#/$defs/steps"}},
        "expect": {"type": "object", "properties": {k: uint(0, MAX_EXPECT) for k in EXPECT_KEYS},
                   "additionalProperties": False},
        "sim": {"type": "object", "properties": {
            "memory_bytes": uint(1, MAX_BYTES),
            "stream_delay_us": {"type": "object", "additionalProperties": uint(0, MAX_SLEEP_US)},
            "faults": {"type": "array", "items": fault}}, "additionalProperties": False},
    }


def build(ops, kernels):
    defs = common_defs()
    names = [row["op"] for row in ops]
    defs["step"] = {"type": "object", "required": ["op"], "properties": {"op": {"enum": names}},
                    "allOf": [{"if": {"properties": {"op": {"const": n}}, "required": ["op"]},
                               "then": {"$ref": "#/$defs/op_" + n}} for n in names]}
    for row in ops:
        defs["op_" + row["op"]] = op_schema(row, kernels)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tandem.scenario/1",
        "description": "A tandem scenario file (docs/scenarios.md). Generated by scripts/gen_scenario_schema.py "
                       "from `tandem ops --json` and `tandem kernels --json`: do not edit by hand. Rules between "
                       "names (a step's stream is declared, a fault names a launch id, begin <= end, nesting "
                       "depth) are the loader's alone: `tandem validate` checks them.",
        "type": "object",
        "required": ["format"],
        "properties": top_level(),
        "additionalProperties": False,
        "$defs": defs,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tandem", help="the tandem binary (runs `ops --json` and `kernels --json`)")
    ap.add_argument("--ops", help="`tandem ops --json` output, instead of --tandem")
    ap.add_argument("--kernels", help="`tandem kernels --json` output, instead of --tandem")
    ap.add_argument("--out", help="write the schema here (default: stdout)")
    ap.add_argument("--check", metavar="FILE", help="exit 1 unless FILE is exactly the schema generated")
    a = ap.parse_args()
    if a.tandem:
        ops = json.loads(subprocess.run([a.tandem, "ops", "--json"], check=True, capture_output=True).stdout)
        kernels = json.loads(subprocess.run([a.tandem, "kernels", "--json"], check=True,
                                            capture_output=True).stdout)
    elif a.ops and a.kernels:
        with open(a.ops) as f:
            ops = json.load(f)
        with open(a.kernels) as f:
            kernels = json.load(f)
    else:
        ap.error("give --tandem, or both --ops and --kernels")
    text = json.dumps(build(ops, kernels), indent=1) + "\n"
    if a.check:
        with open(a.check) as f:
            committed = f.read()
        if committed != text:
            sys.exit("%s differs from what scripts/gen_scenario_schema.py generates from the op table and the kernel "
                     "catalog; regenerate it:\n  scripts/gen_scenario_schema.py --tandem build/release/src/cli/tandem "
                     "--out %s" % (a.check, a.check))
        print("%s: generated from the op table (%d ops, %d kernels)" % (a.check, len(ops), len(kernels)))
        return
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
