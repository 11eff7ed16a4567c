// inputs/: shipped names are never replaced by files of the same name in the working directory.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.hpp"
#include "mhacfg/configurator/cli/model_argument.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"

namespace {

// Runs the test body in a fresh folder as the working directory, and returns to the old one after.
struct InFreshFolder {
  std::filesystem::path old = std::filesystem::current_path();
  std::filesystem::path dir;
  InFreshFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mhacfg-inputs.XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
    std::filesystem::current_path(dir);
  }
  ~InFreshFolder() {
    std::filesystem::current_path(old);
    std::filesystem::remove_all(dir);
  }
};

void write(const std::string& name, const std::string& text) { std::ofstream(name) << text; }

}  // namespace

TEST_CASE("a file named like a shipped profile does not replace it, ./NAME reads the file", "[inputs]") {
  InFreshFolder here;
  const mhacfg::Profile shipped = mhacfg::load_profile("h100-sxm", "--target");
  // A planted profile of the same name, with another device and memory.
  nlohmann::json planted = mhacfg::profile_to_json(shipped);
  planted["device"] = "planted";
  planted["spec"]["memory_bytes"] = 1000;
  write("h100-sxm", planted.dump());
  const mhacfg::Profile p = mhacfg::load_profile("h100-sxm", "--target");
  CHECK(p.device == shipped.device);
  CHECK(p.spec.memory_bytes == shipped.spec.memory_bytes);
  CHECK(mhacfg::load_profile("./h100-sxm", "--target").device == "planted");
  // A name no profile ships is still read from the file here.
  write("my-gpu", planted.dump());
  CHECK(mhacfg::load_profile("my-gpu", "--target").device == "planted");
  // Through the CLI: recommend's default target and profiles show are the shipped h100-sxm.
  const CliResult show = run({"profiles", "show", "h100-sxm", "--format", "json"});
  REQUIRE(show.code == 0);
  CHECK(nlohmann::json::parse(show.out)["device"] == shipped.device);
}

TEST_CASE("a file named like a model preset does not replace it in compare", "[inputs]") {
  InFreshFolder here;
  write("llama-3-8b", R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 2, "vocab_size": 100, "n_positions": 128})");
  CHECK(mhacfg::resolve_model_argument("llama-3-8b").d_model == 4096);
  CHECK(mhacfg::resolve_model_argument("./llama-3-8b").d_model == 64);
}

TEST_CASE("calibrate refuses outputs that name an input or each other, before measuring", "[inputs][calibrate]") {
  InFreshFolder here;
  const std::string records = fixture("h200-torch.train.jsonl");
  std::filesystem::copy_file(records, "m.jsonl");
  const auto before = std::filesystem::file_size("m.jsonl");
  // --out over --from would replace the measurements by a profile.
  CliResult r = run({"calibrate", "--from", "m.jsonl", "--out", "./m.jsonl"});
  CHECK(r.code == 2);
  CHECK(r.err == "mhacfg: error: --out = ./m.jsonl: is the file --from reads (m.jsonl): writing it would lose that input\n");
  CHECK(std::filesystem::file_size("m.jsonl") == before);
  // A link to the input is the same file.
  std::filesystem::create_symlink("m.jsonl", "link.jsonl");
  CHECK(run({"calibrate", "--from", "m.jsonl", "--out", "link.jsonl"}).code == 2);
  // Two outputs on one file: only one could survive.
  r = run({"calibrate", "--device", "cpu", "--quick", "--out", "p.json", "--save-measurements", "p.json"});
  CHECK(r.code == 2);
  CHECK(r.err == "mhacfg: error: --save-measurements = p.json: is also --out's file: one output would replace the other\n");
  CHECK_FALSE(std::filesystem::exists("p.json"));
  // Distinct files are fine (a fit of the imported records).
  r = run({"calibrate", "--from", "m.jsonl", "--out", "p.json", "--attention-backend", "cudnn,torch-bmm"});
  CHECK(r.code == 0);
  CHECK(std::filesystem::file_size("m.jsonl") == before);
}
