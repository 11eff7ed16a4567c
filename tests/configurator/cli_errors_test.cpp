// Every class of invalid input exits 2 with one line on stderr naming the field and the value, and
// nothing on stdout.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"

TEST_CASE("unknown command, flag and format", "[cli][errors]") {
  expect_input_error({"analyse"}, "command = analyse: unknown command (did you mean analyze?)");
  expect_input_error({"analyze", "--model", "llama-3-8b", "--bacth", "4"},
                     "--bacth = (unknown): unknown option for analyze (did you mean --batch?)");
  expect_input_error({"analyze", "--model", "llama-3-8b", "--format", "yaml"},
                     "--format = yaml: unknown format (expected table, json, markdown, csv, html)");
  expect_input_error({"analyze", "--model", "llama-3-8b", "--batch"}, "--batch = (missing): needs a value");
}

TEST_CASE("unknown preset and profile get did-you-mean", "[cli][errors]") {
  expect_input_error({"analyze", "--model", "llama3-8b"}, "--model = llama3-8b: unknown model preset (did you mean llama-3-8b?)");
  // "h100" is a prefix of h100-pcie and h100-sxm alike: the first in name order is named.
  expect_input_error({"analyze", "--model", "llama-3-8b", "--target", "h100"},
                     "--target = h100: unknown device profile (did you mean h100-pcie?)");
  expect_input_error({"analyze", "--model", "llama-3-8b", "--target", "h100sxm"},
                     "--target = h100sxm: unknown device profile (did you mean h100-sxm?)");
}

TEST_CASE("a folder named like a shipped profile or preset does not hide it", "[cli]") {
  // As `recommend --out-dir l40s` leaves one in the working folder.
  REQUIRE((::mkdir("l40s", 0755) == 0 || errno == EEXIST));  // a leftover from an interrupted run is fine
  REQUIRE((::mkdir("gpt2", 0755) == 0 || errno == EEXIST));
  const CliResult r = run({"recommend", "--params", "7B", "--target", "l40s", "--top", "1", "--format", "json"});
  const CliResult c = run({"compare", "gpt2", "llama-3-8b", "--format", "json"});
  ::rmdir("l40s");
  ::rmdir("gpt2");
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(c.code == 0);
  CHECK(c.err.empty());
}

TEST_CASE("numbers: non-integers, zero, negative, overflow", "[cli][errors]") {
  expect_input_error({"analyze", "--model", "gpt2", "--batch", "2.5"}, "--batch = 2.5: must be an integer");
  expect_input_error({"analyze", "--model", "gpt2", "--batch", "0"}, "--batch = 0: must be positive");
  expect_input_error({"analyze", "--model", "gpt2", "--context", "-5"}, "--context = -5: must be positive");
  expect_input_error({"analyze", "--model", "gpt2", "--batch", "99999999999999999999"}, "--batch = 99999999999999999999: out of range");
  // A layer count beyond any model is refused before a layer list is allocated (it ran out of memory).
  expect_input_error({"analyze", "--d-model", "4096", "--layers", "2000000000", "--heads", "32"},
                     "--layers = 2000000000: must be at most 100000");
  expect_input_error({"analyze", "--model", "llama-3-8b", "--layers", "200000"}, "--layers = 200000: must be at most 100000");
  expect_input_error({"recommend", "--d-model", "4096", "--layers", "2000000000", "--seq", "8192", "--target", "h200-sxm"},
                     "--layers = 2000000000: must be at most 100000");
  // The search's size grows with d_model: beyond the largest searched one it is refused, not run for minutes.
  expect_input_error({"recommend", "--params", "7B", "--d-model", "68719476736", "--layers", "1"},
                     "--d-model = 68719476736: must be at most 65536");
  // Counts are decimal: no hexadecimal, no leading blanks.
  expect_input_error({"recommend", "--params", "0x10"}, "--params = 0x10: must be a count such as 125M, 7B or 1.5e9");
  // Windows for every candidate: the analyze flags' checks, naming the flag.
  expect_input_error({"recommend", "--params", "1B", "--global-every", "4"},
                     "--global-every = 4: no layer is local to make global (add --sliding-window or --attention-chunk)");
  expect_input_error({"recommend", "--params", "1B", "--sliding-window", "-5"}, "--sliding-window = -5: must not be negative");
  expect_input_error({"recommend", "--params", "1B", "--sliding-window", "512", "--attention-chunk", "1024"},
                     "--attention-chunk = 1024: cannot be combined with --sliding-window");
  expect_input_error({"recommend", "--params", "1B", "--sliding-window", "512", "--global-every", "99"},
                     "--global-every = 99: must not exceed the 24 layers");
  expect_input_error({"recommend", "--params", " 7B"}, "--params =  7B: must be a count such as 125M, 7B or 1.5e9");
  expect_input_error({"analyze", "--model", "gpt2", "--prompt-len", "9000", "--context", "100"},
                     "--prompt-len = 9000: must not exceed --context = 100 (the decode context includes the prompt)");
  // A context shorter than the default prompt (2048) shortens the prompt: GPT-2 at its own 1024.
  const CliResult short_ctx = run({"analyze", "--model", "gpt2", "--context", "1024", "--format", "json"});
  CHECK(short_ctx.code == 0);
  CHECK(nlohmann::json::parse(short_ctx.out)["workload"]["prompt_len"] == 1024);
  expect_input_error({"recommend", "--params", "7B", "--format", "markdown", "--out-dir", ""}, "--out-dir = (empty): needs a folder");
  // compare names the model a workload does not suit.
  expect_input_error({"compare", "llama-3-8b", "gpt2", "--tp", "8"}, "gpt2: tp = 8: must divide num_q_heads = 12");
  expect_input_error({"calibrate", "--from", fixture("h200-torch.train.jsonl"), "--name", "", "--out", "never.json"},
                     "--name = (empty): a profile name is one line of printable text");
  // Stray positional arguments are errors, not silently dropped.
  expect_input_error({"recommend", "--params", "7B", "8192"},
                     "recommend = (extra argument): takes no positional arguments; see mhacfg recommend --help");
  expect_input_error({"analyze", "--model", "gpt2", "extra"},
                     "analyze = (extra argument): takes no positional arguments; see mhacfg analyze --help");
  const CliResult r = run({"analyze", "--model", "deepseek-v3", "--batch", "4000000000", "--context", "4000000000"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("would overflow a 64-bit count") != std::string::npos);
  CHECK(r.err.find("(--batch 4000000000, --context 4000000000)") != std::string::npos);  // the sizes given
  const CliResult seq = run({"recommend", "--params", "7B", "--seq=99999999999999"});
  CHECK(seq.code == 2);
  CHECK(seq.err.find("would overflow a 64-bit count; the inputs are too large (--params 7B, --seq 99999999999999)") !=
        std::string::npos);
}

TEST_CASE("heads that do not divide and inconsistent variants", "[cli][errors]") {
  expect_input_error({"analyze", "--d-model", "4096", "--layers", "32", "--heads", "32", "--kv-heads", "5"},
                     "--kv-heads = 5: KV heads (5) must divide query heads (32)");
  expect_input_error({"analyze", "--d-model", "4096", "--layers", "32", "--heads", "30"},
                     "--heads = 30: must divide --d-model = 4096 unless --head-dim is given");
  expect_input_error({"analyze", "--d-model", "4096", "--layers", "32", "--heads", "32", "--kv-heads", "8", "--variant", "mha"},
                     "--variant = mha: 32 query heads with 8 KV heads is gqa");
  expect_input_error({"analyze", "--d-model", "4096", "--layers", "32", "--heads", "32", "--variant", "mla"},
                     "--kv-lora-rank = (missing): required with --variant mla");
  expect_input_error({"analyze", "--model", "llama-3-70b", "--tp", "3"}, "tp = 3: must divide num_q_heads = 64");
}

TEST_CASE("files: missing, malformed, wrong types, unknown model_type", "[cli][errors]") {
  expect_input_error({"analyze", "--hf-config", "/nonexistent.json"},
                     "--hf-config = /nonexistent.json: cannot read file: No such file or directory");
  const std::string bad = temp_file("bad.json", "{\"model_type\": \"llama\", ");
  expect_input_error({"analyze", "--hf-config", bad}, bad + " = (malformed JSON): parse error at byte 25");
  const std::string wrong = temp_file("wrong.json", R"({"model_type": "llama", "hidden_size": "big"})");
  expect_input_error({"analyze", "--hf-config", wrong}, wrong + ": hidden_size = \"big\": must be an integer");
  const std::string missing = temp_file("missing.json", R"({"model_type": "llama", "hidden_size": 64})");
  expect_input_error({"analyze", "--hf-config", missing}, missing + ": num_hidden_layers = (missing): required key is missing");
  const std::string bert = temp_file("bert.json", R"({"model_type": "bert"})");
  const CliResult r = run({"analyze", "--hf-config", bert});
  CHECK(r.code == 2);
  CHECK(r.err.find("model_type = \"bert\": unsupported model_type (closest supported: ") != std::string::npos);
}

TEST_CASE("recommend input errors", "[cli][errors][recommend]") {
  expect_input_error({"recommend", "--seq", "8192"}, "--params = (missing): give --params N, or --d-model D --layers L");
  expect_input_error({"recommend", "--params", "seven"}, "--params = seven: must be a count such as 125M, 7B or 1.5e9");
  expect_input_error({"recommend", "--params", "7B", "--objective", "speed"},
                     "--objective = speed: unknown objective (expected throughput, latency, memory, balanced or goodput)");
  expect_input_error({"recommend", "--params", "7B", "--variants", "gqa,xla"},
                     "--variants = xla: unknown attention variant (expected mha, gqa, mqa or mla)");
  expect_input_error({"recommend", "--params", "7B", "--memory-fraction", "1.5"},
                     "--memory-fraction = 1.5: must be between 0.01 and 1.00");
  expect_input_error({"recommend", "--d-model", "4096"}, "--layers = (missing): --d-model and --layers go together");
  const std::string llama = std::string(MHACFG_FIXTURES_DIR) + "/hf/llama-3-8b.json";
  expect_input_error({"recommend", "--hf-config", llama, "--d-model", "2048"},
                     "--d-model = 2048: comes from the model given with --hf-config or --model");
  expect_input_error({"recommend", "--model", "llama-3-8b", "--vocab", "32000"},
                     "--vocab = 32000: comes from the model given with --hf-config or --model");
  expect_input_error({"recommend", "--model", "llama-3-8b", "--hf-config", llama},
                     "--model = llama-3-8b: cannot be combined with --hf-config");
}

TEST_CASE("a file name that is not UTF-8 or holds a newline is shown, not an internal error", "[cli]") {
  // Linux file names are bytes; JSON is UTF-8. Such bytes are written as U+FFFD, in every format.
  std::ifstream in(std::string(MHACFG_FIXTURES_DIR) + "/hf/gpt2.json");
  const std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string path = temp_file("gpt2-\xff\xfe.json", config);
  for (const std::string format : {"json", "table", "markdown", "csv", "html"}) {
    const CliResult a = run({"analyze", "--hf-config", path, "--format", format});
    INFO(format << ": " << a.err);
    CHECK(a.code == 0);
    CHECK(a.err.empty());
    if (format == "json") CHECK(nlohmann::json::parse(a.out)["model"]["name"] == "gpt2-\xef\xbf\xbd\xef\xbf\xbd.json");
  }
  const CliResult c = run({"compare", path, "gpt2", "--format", "json"});
  CHECK(c.code == 0);
  CHECK(nlohmann::json::accept(c.out));
  std::remove(path.c_str());
  // A newline in a name is shown escaped: headings and table columns stay one line.
  const std::string nl = temp_file("gpt2-\n.json", config);
  const CliResult a = run({"analyze", "--hf-config", nl});
  CHECK(a.out.rfind("gpt2-\\n.json (gpt2): d_model 768", 0) == 0);
  const CliResult t = run({"compare", nl, "gpt2"});
  CHECK(t.out.find(" vs " + nl.substr(0, nl.size() - 6) + "\\n.json\n") != std::string::npos);
  std::remove(nl.c_str());
}
