#!/usr/bin/env python3
"""The Python module against the CLI: every function returns the document `--format json` writes for the
same inputs, valid under the JSON Schemas; each error raises its exception; keyword arguments are the
CLI's flags (the type stubs list exactly those); threads get the answers a single thread gets.

Usage: test_module.py MHACFG SOURCE_DIR MODULE_BUILT. Exits 77 (CTest: skipped) when the module was not
built (MODULE_BUILT is OFF); a module that was built and does not import is a failure.
"""
import ast
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

MHACFG, SOURCE, BUILT = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
if BUILT != "ON":
    print("the Python module was not built (MHACFG_PYTHON, or no python3-dev/pybind11-dev): skipped")
    sys.exit(77)
import jsonschema  # noqa: E402
import mhacfg  # noqa: E402

HF = SOURCE / "tests/fixtures/hf"
SCHEMAS = {p.name.split(".")[0]: jsonschema.Draft202012Validator(json.loads(p.read_text()))
           for p in (SOURCE / "configurator/schemas").glob("*.schema.json")}
SERVING = SOURCE / "tests/fixtures/e2e-published.train.jsonl"
KERNELS = SOURCE / "tests/fixtures/h200-mhacfg-cuda.holdout.jsonl"


def cli(*args, expect=0):
    r = subprocess.run([MHACFG, *args], capture_output=True, text=True)
    if r.returncode != expect:
        raise AssertionError(f"mhacfg {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r


def cli_json(*args, expect=0):
    return json.loads(cli(*args, "--format", "json", expect=expect).stdout)


def cli_lines(*args):
    return [json.loads(line) for line in cli(*args).stdout.splitlines() if line]


class SameAsCli(unittest.TestCase):
    def valid(self, schema, doc):
        errors = list(SCHEMAS[schema].iter_errors(doc))
        self.assertEqual([], [f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5]])

    def test_analyze(self):
        for kw, args in [
            (dict(model="llama-3-8b", context=8192, batch=16, target="h200-sxm-cudnn"),
             ["--model", "llama-3-8b", "--context", "8192", "--batch", "16", "--target", "h200-sxm-cudnn"]),
            (dict(model=str(HF / "mixtral-8x7b.json"), batch=16, tp=2, target="a100-80gb", engine="sglang"),
             ["--hf-config", str(HF / "mixtral-8x7b.json"), "--batch", "16", "--tp", "2", "--target", "a100-80gb",
              "--engine", "sglang"]),
            (dict(d_model=4096, layers=32, heads=32, kv_heads=8, prompt_len=512, kv_dtype="fp8", roofline=True,
                  target="h100-sxm"),
             ["--d-model", "4096", "--layers", "32", "--heads", "32", "--kv-heads", "8", "--prompt-len", "512",
              "--kv-dtype", "fp8", "--roofline", "--target", "h100-sxm"]),
            (dict(model="llama-3-8b", context="32k", batch="1k", prompt_len=1024),  # suffixes read as the CLI reads them
             ["--model", "llama-3-8b", "--context", "32768", "--batch", "1000", "--prompt-len", "1024"]),
        ]:
            doc = mhacfg.analyze(**kw)
            self.assertEqual(cli_json("analyze", *args), doc, args)
            self.valid("analyze", doc)

    def test_recommend(self):
        doc = mhacfg.recommend("llama-3-8b", context=32768, target="h200-sxm-cudnn", top=3, variants=["gqa", "mla"])
        self.assertEqual(cli_json("recommend", "--model", "llama-3-8b", "--context", "32768", "--target",
                                  "h200-sxm-cudnn", "--top", "3", "--variants", "gqa,mla"), doc)
        self.valid("recommend", doc)
        self.assertTrue(doc["feasible"])
        budget = mhacfg.recommend(params="7B", context=8192, objective="latency", quality="balanced")
        self.assertEqual(cli_json("recommend", "--params", "7B", "--context", "8192", "--objective", "latency",
                                  "--quality", "balanced"), budget)

    def test_compare(self):
        models = ["llama-3-8b", str(HF / "gemma-2-9b.json")]
        doc = mhacfg.compare(models, context=16384, batch=4, target="h100-sxm")
        self.assertEqual(cli_json("compare", *models, "--context", "16384", "--batch", "4", "--target", "h100-sxm"), doc)
        self.valid("compare", doc)

    def test_profiles(self):
        doc = mhacfg.profiles()
        self.assertEqual(cli_json("profiles"), doc)
        names = [p["name"] for p in doc["profiles"]]
        self.assertIn("h200-sxm-cudnn", names)
        for name in ("h200-sxm-cudnn", "a100-80gb"):
            profile = mhacfg.load_profile(name)
            self.assertEqual(cli_json("profiles", "show", name), profile)
            self.valid("profile", profile)
        self.assertFalse(mhacfg.load_profile("a100-80gb", roofline=True)["ops"])  # the bare roofline: no fits

    def test_models(self):
        doc = mhacfg.models()
        self.assertEqual(cli_json("models"), doc)
        self.valid("models", doc)
        by_name = {p["name"]: p for p in doc["presets"]}
        # Llama 3 8B's config.json: 32 query heads over 8 KV heads of 128 (its published count is exact).
        self.assertEqual((by_name["llama-3-8b"]["num_q_heads"], by_name["llama-3-8b"]["num_kv_heads"]), (32, 8))
        self.assertEqual(by_name["llama-3-8b"]["params"], 8_030_261_248)

    def test_validate_and_predict(self):
        doc = mhacfg.validate(SERVING)
        self.assertEqual(cli_json("validate", "--in", str(SERVING)), doc)
        self.valid("serving", doc)
        kernels = mhacfg.validate(KERNELS, profile="h200-sxm-cudnn")
        self.assertEqual(cli_json("validate", "--in", str(KERNELS), "--profile", "h200-sxm-cudnn"), kernels)
        lines = mhacfg.predict(str(KERNELS), profile="h200-sxm-cudnn", roofline=True)
        self.assertEqual(cli_lines("predict", "--in", str(KERNELS), "--profile", "h200-sxm-cudnn", "--roofline"), lines)
        for line in lines[:20]:
            self.valid("record", line)
        served = mhacfg.predict(SERVING, engine="sglang", set={"tp": 8})
        self.assertEqual(cli_lines("predict", "--in", str(SERVING), "--engine", "sglang", "--set", "tp=8"), served)

    def test_config_dict_is_the_file(self):
        path = HF / "qwen2.5-7b.json"
        by_path = mhacfg.analyze(str(path), context=4096)
        by_dict = mhacfg.analyze(json.loads(path.read_text()), context=4096)
        for doc in (by_path, by_dict):
            doc["model"].pop("name")
        self.assertEqual(by_path, by_dict)
        # Named as the CLI names the file, the dict gives the CLI's whole document.
        config = dict(json.loads(path.read_text()), _name_or_path=path.name)
        rec = mhacfg.recommend(config, context=4096, top=1)
        self.assertEqual(cli_json("recommend", "--hf-config", str(path), "--context", "4096", "--top", "1"), rec)


class HuggingFaceCache(unittest.TestCase):
    """org/name read from a cache laid out as huggingface_hub lays it out: refs/main -> snapshots/REV."""

    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        repo = self.dir / "models--acme--Tiny-Llama"
        rev = "0123456789abcdef0123456789abcdef01234567"
        (repo / "refs").mkdir(parents=True)
        (repo / "refs/main").write_text(rev)
        (repo / "blobs").mkdir()
        blob = repo / "blobs/9f86d081884c7d659a2feaa0c55ad015"
        shutil.copy(HF / "qwen2.5-7b.json", blob)
        (repo / "snapshots" / rev).mkdir(parents=True)
        (repo / "snapshots" / rev / "config.json").symlink_to(Path("../..") / "blobs" / blob.name)
        self.saved = {k: os.environ.get(k) for k in ("HF_HUB_CACHE", "HF_HOME")}
        os.environ["HF_HUB_CACHE"] = str(self.dir)
        os.environ.pop("HF_HOME", None)

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(self.dir)

    def test_cached_id(self):
        doc = mhacfg.analyze("acme/Tiny-Llama", context=4096)
        self.assertEqual("acme/Tiny-Llama", doc["model"]["name"])
        self.assertEqual(cli_json("analyze", "--hf-config", "acme/Tiny-Llama", "--context", "4096"), doc)
        self.assertEqual(mhacfg.analyze(str(HF / "qwen2.5-7b.json"), context=4096)["params"], doc["params"])

    def test_not_cached_names_the_paths(self):
        with self.assertRaises(mhacfg.InputError) as e:
            mhacfg.analyze("acme/Missing-Model")
        self.assertEqual("--hf-config", e.exception.field)
        self.assertEqual("acme/Missing-Model", e.exception.value)
        self.assertIn(str(self.dir / "models--acme--Missing-Model" / "refs" / "main"), e.exception.reason)
        r = cli("analyze", "--hf-config", "acme/Missing-Model", expect=2)
        self.assertEqual(1, len(r.stderr.splitlines()))
        self.assertIn("models--acme--Missing-Model", r.stderr)


class Errors(unittest.TestCase):
    def test_input_error_parts(self):
        with self.assertRaises(mhacfg.InputError) as e:
            mhacfg.analyze("llama-3-8b", context=0)
        self.assertEqual(("--context", "0", "must be positive"), (e.exception.field, e.exception.value, e.exception.reason))
        self.assertEqual(2, e.exception.exit_code)
        self.assertIsInstance(e.exception, ValueError)
        self.assertIn(str(e.exception), cli("analyze", "--model", "llama-3-8b", "--context", "0", expect=2).stderr)

    def test_unknown_keyword_suggests(self):
        with self.assertRaises(mhacfg.InputError) as e:
            mhacfg.analyze("llama-3-8b", contxt=4096)
        self.assertEqual("--contxt", e.exception.field)
        self.assertIn("--context", e.exception.reason)
        with self.assertRaises(mhacfg.InputError):
            mhacfg.recommend(params="7B", format="json")  # the CLI's rendering flags are not the module's
        with self.assertRaises(mhacfg.InputError) as e:
            mhacfg.analyze("llama-3-8bb")
        self.assertIn("llama-3-8b", e.exception.reason)

    def test_infeasible_has_the_closest(self):
        with self.assertRaises(mhacfg.Infeasible) as e:
            mhacfg.recommend(params="70B", target="rtx-4090")
        cli_doc = cli_json("recommend", "--params", "70B", "--target", "rtx-4090", expect=1)
        self.assertEqual(cli_doc, e.exception.document)
        self.assertEqual(cli_doc["closest"], e.exception.closest)
        self.assertEqual(1, e.exception.exit_code)

    def test_library_errors_map_to_exceptions(self):
        for kind, cls, code in [("input", mhacfg.InputError, 2), ("infeasible", mhacfg.Infeasible, 1),
                                ("runtime", mhacfg.RuntimeFailure, 3), ("memory", mhacfg.RuntimeFailure, 3)]:
            with self.assertRaises(cls) as e:
                mhacfg._mhacfg._raise_library_error(kind)
            self.assertEqual(code, e.exception.exit_code)


class Keywords(unittest.TestCase):
    CLI_ONLY = {"format", "out-dir", "help", "check-machine", "out"}
    STUBS = ast.parse((Path(mhacfg.__file__).parent / "__init__.pyi").read_text())

    def stub_keywords(self, function):
        """A stub's parameter names and the fields of the TypedDict its **flags unpack (with its bases)."""
        classes = {c.name: c for c in self.STUBS.body if isinstance(c, ast.ClassDef)}

        def fields(name):
            c = classes[name]
            out = {a.target.id for a in c.body if isinstance(a, ast.AnnAssign)}
            for base in c.bases:
                if isinstance(base, ast.Name) and base.id in classes:
                    out |= fields(base.id)
            return out

        f = next(f for f in self.STUBS.body if isinstance(f, ast.FunctionDef) and f.name == function)
        names = {a.arg for a in f.args.args}
        if f.args.kwarg is not None:
            names |= fields(f.args.kwarg.annotation.slice.id)  # **flags: Unpack[XFlags]
        return names

    def test_stubs_list_the_cli_flags(self):
        for command, positional in [("analyze", "model"), ("recommend", "model"), ("compare", "models"),
                                    ("validate", "in"), ("predict", "in")]:
            help_text = cli(command, "--help").stdout
            flags = set(re.findall(r"^  (?:-\w \[ )?--([a-z0-9-]+)", help_text, re.M)) - self.CLI_ONLY
            names = {n.rstrip("_").replace("_", "-") for n in self.stub_keywords(command)}
            self.assertEqual(flags | {positional}, names, command)

    def test_every_stub_keyword_is_read(self):
        # Each keyword the stubs list is a flag the command's reader asks for: given an invalid value,
        # the error names that flag, never "unknown option".
        for function in ("analyze", "recommend"):
            for keyword in sorted(self.stub_keywords(function) - {"model"}):
                with self.subTest(function=function, keyword=keyword):
                    kw = {"top": 1} if function == "recommend" else {}
                    kw[keyword] = "not-a-value"
                    with self.assertRaises(mhacfg.InputError) as e:
                        getattr(mhacfg, function)("llama-3-8b" if keyword != "hf_config" else None, **kw)
                    self.assertNotIn("unknown option", str(e.exception))
                    self.assertIn("--" + keyword.replace("_", "-"), str(e.exception))


class Threads(unittest.TestCase):
    def test_threads_get_the_single_thread_answers(self):
        contexts = [4096, 8192, 16384, 32768]
        alone = [mhacfg.recommend(params="8B", context=c, target="h100-sxm", top=2) for c in contexts]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            together = list(pool.map(lambda c: mhacfg.recommend(params="8B", context=c, target="h100-sxm", top=2), contexts))
        self.assertEqual(alone, together)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
