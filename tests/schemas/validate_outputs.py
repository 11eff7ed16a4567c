#!/usr/bin/env python3
"""Validates real mhacfg outputs against the published JSON Schemas (draft 2020-12).

Runs the CLI for analyze (several families), recommend (feasible and infeasible), compare, profiles, models,
calibrate --from (a fitted profile), predict and bench records, serving validate, predict and calibrate
(an engine) and the shipped engines, and checks each document; then
checks that documents with a required key removed or a wrong type are rejected, so the schemas are
not vacuous. Usage: validate_outputs.py MHACFG SOURCE_DIR WORK_DIR
"""
import copy
import json
import subprocess
import sys
from pathlib import Path

import jsonschema

mhacfg, source, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
work.mkdir(parents=True, exist_ok=True)
schemas = {p.name.split(".")[0]: json.loads(p.read_text()) for p in (source / "configurator/schemas").glob("*.schema.json")}
validators = {}
for name, schema in schemas.items():
    jsonschema.Draft202012Validator.check_schema(schema)
    validators[name] = jsonschema.Draft202012Validator(schema)
failures = 0
checked = 0


def run(args, expect=0):
    r = subprocess.run([mhacfg] + args, capture_output=True, text=True)
    if r.returncode != expect:
        raise SystemExit(f"mhacfg {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r.stdout


def check(schema, doc, what):
    global failures, checked
    errors = sorted(validators[schema].iter_errors(doc), key=lambda e: list(e.path))
    checked += 1
    if errors:
        failures += 1
        for e in errors[:5]:
            print(f"FAIL {what}: {'/'.join(map(str, e.path))}: {e.message}")


def must_fail(schema, doc, what):
    global failures, checked
    checked += 1
    if validators[schema].is_valid(doc):
        failures += 1
        print(f"FAIL {what}: an invalid document passed the {schema} schema")


hf = source / "tests/fixtures/hf"
analyses = []
for args in (["--model", "llama-3-8b"], ["--model", "deepseek-v3", "--target", "h200-sxm"],
             ["--hf-config", str(hf / "gemma-2-9b.json"), "--context", "32768"],
             ["--hf-config", str(hf / "mixtral-8x7b.json"), "--batch", "16", "--tp", "2", "--target", "a100-80gb"],
             ["--hf-config", str(hf / "falcon-7b.json"), "--kv-dtype", "int4"],
             ["--hf-config", str(hf / "gemma-3-4b-pt.json"), "--context", "32768"],
             ["--hf-config", str(hf / "gpt-oss-20b.json"), "--target", "h200-sxm-cudnn"],
             ["--hf-config", str(hf / "llama-4-scout-17b-16e-instruct.json"), "--context", "131072", "--tp", "4"],
             ["--hf-config", str(hf / "mistral-small-3.1-24b-instruct-2503.json")],
             ["--hf-config", str(hf / "qwen2.5-vl-7b-instruct.json")],
             ["--hf-config", str(hf / "qwen3-vl-30b-a3b-instruct.json"), "--tp", "2"],
             # The GLM-V, SmolVLM, InternVL and LFM2-VL towers.
             ["--hf-config", str(hf / "glm-4.5v.json"), "--tp", "8"],
             ["--hf-config", str(hf / "smolvlm2-500m-video-instruct.json")],
             ["--hf-config", str(hf / "internvl3-1b-hf.json")],
             ["--hf-config", str(hf / "lfm2.5-vl-450m.json")],
             ["--hf-config", str(hf / "olmo-2-0325-32b.json")],
             ["--hf-config", str(hf / "qwen3-next-80b-a3b-instruct.json"), "--context", "65536", "--tp", "2",
              "--target", "h200-sxm-cudnn", "--state-dtype", "fp32"],
             ["--hf-config", str(hf / "granite-4.0-h-small.json"), "--context", "131072", "--tp", "2",
              "--target", "h200-sxm-cudnn"],
             ["--hf-config", str(hf / "nemotron-3-nano-30b-a3b.json"), "--context", "131072", "--target", "h200-sxm-cudnn"],
             ["--hf-config", str(hf / "deepseek-v3.2.json"), "--context", "131072", "--tp", "8", "--weight-dtype", "fp8",
              "--target", "h200-sxm-cudnn"],
             # Zero-computation experts: active_dynamic, active_min, active_max and moe.zero_experts.
             ["--hf-config", str(hf / "longcat-flash-chat.json"), "--context", "32768", "--tp", "8", "--target", "h200-sxm"],
             ["--d-model", "2048", "--layers", "24", "--heads", "16", "--variant", "mla", "--kv-lora-rank", "256"],
             # FLOP counts past 2^63, written as doubles, are still the schema's integers.
             ["--hf-config", str(hf / "llama-3-8b.json"), "--context", "10M", "--prompt-len", "10M", "--target", "h200-sxm"]):
    doc = json.loads(run(["analyze", *args, "--format", "json"]))
    analyses.append(doc)
    check("analyze", doc, "analyze " + " ".join(args))

rec = json.loads(run(["recommend", "--d-model", "4096", "--layers", "32", "--seq", "8192", "--format", "json"]))
check("recommend", rec, "recommend (feasible)")
assert rec["candidates"], "recommend gave no candidates"
sparse = json.loads(run(["recommend", "--d-model", "4096", "--layers", "32", "--seq", "131072", "--target", "h200-sxm-cudnn",
                         "--index-topk", "2048", "--format", "json"]))
check("recommend", sparse, "recommend --index-topk")
assert sparse["candidates"][0]["indexer"]["topk"] == 2048 and rec["candidates"][0]["indexer"] is None, sparse["candidates"][0]
assert sparse["candidates"][0]["predicted"]["at_batch"]["decode_indexer_ms"] > 0, sparse["candidates"][0]["predicted"]
mla = json.loads(run(["recommend", "--params", "7B", "--seq", "32768", "--target", "h200-sxm", "--variants",
                      "gqa,mla", "--format", "json", "--top", "8"]))
check("recommend", mla, "recommend with MLA")
none = json.loads(run(["recommend", "--params", "70B", "--target", "rtx-4090", "--format", "json"], expect=1))
check("recommend", none, "recommend (infeasible)")
assert none["feasible"] is False and "closest" in none
for fixture, ranked, tp, weights in (("llama-3-8b.json", True, "1", "bf16"), ("qwen3-30b-a3b.json", True, "1", "bf16"),
                                     ("qwen3-next-80b-a3b-instruct.json", False, "2", "bf16"),
                                     ("deepseek-v3.2.json", True, "8", "fp8")):
    own = json.loads(run(["recommend", "--hf-config", str(hf / fixture), "--seq", "32768", "--target",
                          "h200-sxm-cudnn", "--tp", tp, "--weight-dtype", weights, "--format", "json"]))
    check("recommend", own, "recommend --hf-config " + fixture)
    assert (own["model_design"]["rank"] is not None) == ranked, own["model_design"]

cmp = json.loads(run(["compare", "llama-3-8b", "mistral-7b-v0.1", "model=llama-3-8b,kv-heads=2",
                     "model=llama-3-8b,attention-chunk=8192,global-every=4", str(hf / "gemma-3-4b-pt.json"),
                     str(hf / "qwen3-next-80b-a3b-instruct.json"), "--format", "json"]))
check("compare", cmp, "compare")
hybrid = next(m for m in cmp["models"] if m["model"]["family"] == "qwen3_next")
assert hybrid["predicted"]["decode_linear_core_ms"] > 0 and cmp["models"][0]["predicted"]["decode_linear_core_ms"] == 0
# A hybrid model's linear-attention layers and state reach scripts.
nxt = next(a for a in analyses if a["model"]["family"] == "qwen3_next")
assert nxt["model"]["layer_pattern"]["linear_attention_layers"] == 36, nxt["model"]["layer_pattern"]
assert nxt["model"]["linear_attention"]["num_v_heads"] == 32 and nxt["model"]["attention"]["output_gate"] is True
assert nxt["kv_cache"]["state_dtype"] == "fp32" and nxt["kv_cache"]["state_bytes_per_sequence"] > 0, nxt["kv_cache"]
assert nxt["predicted"]["basis_detail"]["kind"] == "measured", nxt["predicted"]["basis_detail"]
assert nxt["predicted"]["basis_detail"]["roofline_ops"] == ["linear_attention/decode", "linear_attention/prefill"], nxt["predicted"]
granite = next(a for a in analyses if a["model"]["family"] == "granitemoehybrid")
assert granite["model"]["linear_attention"]["kind"] == "mamba2" and granite["params"]["total"] == 32207337984
# A sparse model's indexer, its keys and its roofline share reach scripts.
dsa = next(a for a in analyses if a["model"]["family"] == "deepseek_v32")
assert dsa["model"]["attention"]["indexer"] == {"num_heads": 64, "head_dim": 128, "topk": 2048, "layers": 61}, dsa["model"]["attention"]
assert dsa["kv_cache"]["indexer_bytes_per_token_per_layer"] == 132 and dsa["params"]["total"] == 671877944064
assert dsa["predicted"]["basis_detail"]["roofline_ops"] == ["indexer/decode", "indexer/prefill"], dsa["predicted"]
assert dsa["predicted"]["decode_indexer_ms"] > 0, dsa["predicted"]
assert "indexer" not in analyses[0]["model"]["attention"] and analyses[0]["kv_cache"]["indexer_bytes_per_token_per_layer"] == 0
nemo = next(a for a in analyses if a["model"]["family"] == "nemotron_h")
assert nemo["model"]["layer_pattern"]["ffn_only_layers"] == 23 and nemo["params"]["total"] == 31577937344

for name in json.loads(run(["profiles", "--format", "json"]))["profiles"]:
    check("profile", json.loads(run(["profiles", "show", name["name"], "--format", "json"])), "profile " + name["name"])
    check("profile", json.loads((source / "profiles" / (name["name"] + ".json")).read_text()), "file " + name["name"])

fitted = work / "h200-cudnn.json"
run(["calibrate", "--from", str(source / "tests/fixtures/h200-torch.train.jsonl"), "--attention-backend", "cudnn,torch-bmm",
     "--out", str(fitted)])
check("profile", json.loads(fitted.read_text()), "calibrated profile")

for line in (source / "tests/fixtures/h200-torch.train.jsonl").read_text().splitlines():
    check("record", json.loads(line), "shared training record")
for line in run(["predict", "--profile", str(fitted), "--in", str(source / "tests/fixtures/h200-gpu-md-check.jsonl")]).splitlines():
    check("record", json.loads(line), "predicted record")
shapes = work / "shapes.jsonl"
shapes.write_text('{"op": "gemm", "m": 8, "n": 64, "k": 64, "dtype": "fp32"}\n'
                  '{"op": "attention", "phase": "decode", "batch": 1, "q_len": 1, "kv_len": 100, "num_q_heads": 4, '
                  '"num_kv_heads": 2, "head_dim": 64, "dtype": "fp32"}\n')
for line in run(["bench", "--device", "cpu", "--in", str(shapes), "--threads", "1", "--repetitions", "2",
                 "--min-time", "0.001"]).splitlines():
    check("record", json.loads(line), "bench record")

# The model presets: every one with its source and shape, the aliases and the names refused as ambiguous.
models = json.loads(run(["models", "--format", "json"]))
check("models", models, "models")
presets = {p["name"]: p for p in models["presets"]}
assert presets["llama-3-8b"]["params"] == 8030261248 and presets["llama-3-8b"]["source"] == "meta-llama/Meta-Llama-3-8B"
assert presets["deepseek-v3"]["kv_lora_rank"] == 512 and presets["falcon-7b"]["max_context"] is None, presets["falcon-7b"]
assert {"name": "mistral-7b", "presets": ["mistral-7b-v0.1", "mistral-7b-v0.3"]} in models["aliases"], models["aliases"]

# Serving measurements: validate's document, predict's lines, an engine fitted by calibrate, the shipped engines.
published = str(source / "tests/fixtures/e2e-published.train.jsonl")
served = json.loads(run(["validate", "--in", published, "--format", "json"]))
check("serving", served, "validate on serving records")
assert served["records_predicted"] > 0 and any(r["predicted"] is None for r in served["records"]), served["records_predicted"]
for line in run(["predict", "--profile", "h100-sxm", "--in", published]).splitlines():
    check("serving", json.loads(line), "predicted serving record")
engine = work / "engine.json"
check("serving", json.loads(run(["calibrate", "--from", published, "--engine", "vllm", "--out", str(engine), "--format",
                                 "json"])), "calibrate --engine")
check("serving", json.loads(engine.read_text()), "fitted engine file")
for shipped in sorted((source / "profiles/engines").glob("*.json")):
    check("serving", json.loads(shipped.read_text()), "engine " + shipped.name)

# The schemas reject what scripts must not get.
broken = copy.deepcopy(analyses[0])
del broken["params"]["total"]
must_fail("analyze", broken, "analyze without params.total")
broken = copy.deepcopy(analyses[0])
broken["kv_cache"]["bytes_per_token"] = "131072"
must_fail("analyze", broken, "analyze with a string count")
broken = copy.deepcopy(rec)
broken["candidates"][0]["variant"] = "xla"
must_fail("recommend", broken, "recommend with an unknown variant")
must_fail("record", {"op": "gemm", "m": 0, "n": 1, "k": 1}, "gemm record with m = 0")
broken = copy.deepcopy(served)
broken["records"][0]["predicted"] = "25"
must_fail("serving", broken, "serving validate with a string prediction")
broken = copy.deepcopy(served)
del broken["summary"]["by_gpu"]
must_fail("serving", broken, "serving validate without its per-GPU summary")
broken = copy.deepcopy(models)
del broken["presets"][0]["source"]
must_fail("models", broken, "models without a preset's source")
broken = copy.deepcopy(models)
broken["presets"][0]["max_context"] = "128k"
must_fail("models", broken, "models with a string context")
must_fail("serving", {"name": "x", "kernel_gap_s": -1, "step_overhead_s": 0, "request_overhead_s": 0}, "engine with a negative gap")

print(f"{checked - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
