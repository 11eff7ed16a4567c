#!/usr/bin/env python3
"""Writes a valid input of many small objects, of about BYTES bytes, for one fuzz target:

    large_inputs.py TARGET BYTES OUT      TARGET: hf_config, profile or records

hf_config: a real Hugging Face config (llama-3.2-1b) with extra keys whose values are empty objects;
profile: a shipped profile (cpu-generic) with such extra keys; records: real measurement records
(tests/fixtures/h200-gpu-md-check.jsonl), one object per line, repeated. scripts/fuzz.sh seeds
libFuzzer with them, so inputs of a few MB are fuzzed from the start; docs/security.md times parsing
with them (a parser slower than linear in the number of objects shows there first).
"""
import itertools
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def with_extra_keys(path, size):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = json.dumps(json.load(f), indent=2)
    assert text.endswith("}")
    parts, total = [text[:-1]], len(text)
    for i in itertools.count():
        if total >= size:
            break
        part = f',"x{i}":{{}}'
        parts.append(part)
        total += len(part)
    parts.append("\n}\n")
    return "".join(parts)


def repeated_records(size):
    with open(os.path.join(ROOT, "tests/fixtures/h200-gpu-md-check.jsonl"), encoding="utf-8") as f:
        lines = [line.rstrip("\n") + "\n" for line in f if line.strip()]
    parts, total = [], 0
    for line in itertools.cycle(lines):
        if total >= size:
            break
        parts.append(line)
        total += len(line)
    return "".join(parts)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("hf_config", "profile", "records"):
        sys.exit(__doc__)
    target, size, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if target == "hf_config":
        text = with_extra_keys("tests/fixtures/hf/llama-3.2-1b.json", size)
    elif target == "profile":
        text = with_extra_keys("profiles/cpu-generic.json", size)
    else:
        text = repeated_records(size)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
