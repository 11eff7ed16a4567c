// Serving records mapped to presets, profiles and engines by the tables, and their errors.
#include <catch2/catch.hpp>

#include "mhacfg/configurator/inputs/serving_inputs.hpp"
#include "mhacfg/costmodel/errors.hpp"

using namespace mhacfg;

TEST_CASE("model table: Hugging Face ids, quantised repositories and notes", "[serving_inputs]") {
  CHECK(model_preset_for_hf_id("meta-llama/Llama-3.3-70B-Instruct") == "llama-3-70b");
  CHECK(model_preset_for_hf_id("nvidia/Llama-3.1-8B-Instruct-FP8") == "llama-3-8b");
  CHECK(model_preset_for_hf_id("deepseek-ai/DeepSeek-R1-0528") == "deepseek-v3");
  CHECK(model_preset_for_hf_id("nvidia/DeepSeek-R1-0528-NVFP4-v2") == "deepseek-v3");
  CHECK(model_preset_for_hf_id("Qwen/Qwen3-30B-A3B") == "qwen3-30b-a3b");
  CHECK(model_preset_for_hf_id("nvidia/Qwen3-235B-A22B-FP8") == "qwen3-235b-a22b");
  CHECK(model_preset_for_hf_id("mistralai/Mixtral-8x7B-Instruct-v0.1") == "mixtral-8x7b");
  CHECK(model_preset_for_hf_id("meta-llama/Llama-2-70b-hf") == "llama-2-70b");
  CHECK(model_preset_for_hf_id("meta-llama/Llama-2-7b-hf") == "llama-2-7b");
  CHECK(model_preset_for_hf_id("gpt2") == "gpt2");  // a preset's own name
  CHECK(model_preset_for_hf_id("acme/Unknown-9B").empty());
}

TEST_CASE("GPU table: family and variant words", "[serving_inputs]") {
  CHECK(profile_for_gpu("H200-SXM (INFERRED: 8-GPU TP8)") == "h200-sxm-cudnn");
  CHECK(profile_for_gpu("H100-80GB (SXM assumed)") == "h100-sxm");
  CHECK(profile_for_gpu("H100 PCIe") == "h100-pcie");
  CHECK(profile_for_gpu("A100-SXM-80GB") == "a100-80gb");
  CHECK(profile_for_gpu("A100 40GB") == "a100-40gb");
  CHECK(profile_for_gpu("B200") == "b200");
  CHECK(profile_for_gpu("GB200 NVL72") == "gb200");
  CHECK(profile_for_gpu("TPU v5").empty());
}

TEST_CASE("engine words", "[serving_inputs]") {
  CHECK(engine_for_text("NVIDIA NIM (TensorRT-LLM backend)") == "trtllm");
  CHECK(engine_for_text("SGLang (2 nodes, InfiniBand)") == "sglang");
  CHECK(engine_for_text("vLLM (GPU reference run)") == "vllm");
  CHECK(engine_for_text("sglang-oai") == "sglang");
  CHECK(engine_for_text("llama.cpp").empty());
}

TEST_CASE("mapper: a record becomes a query; unknown names are input errors", "[serving_inputs]") {
  ServingRecord r;
  r.where = "s.jsonl:1";
  r.model = "nvidia/Llama-3.1-8B-Instruct-FP8";
  r.gpu = "H100-SXM";
  r.engine = "TensorRT-LLM";
  r.tp = 1;
  r.isl = 1000;
  r.osl = 1000;
  r.weight_dtype = "fp8";
  r.mode = ServingMode::static_batch;
  r.batch = 32;
  ServingMapper mapper({});
  const ServingCase c = mapper.map(r);
  CHECK(c.model_name == "llama-3-8b");
  CHECK(c.profile_name == "h100-sxm");
  CHECK(c.engine_name == "trtllm");
  CHECK(c.query.workload.weight_dtype == DType::fp8);
  CHECK(c.query.workload.kv_dtype == DType::bf16);  // unstated
  CHECK(c.query.concurrency == 32);
  CHECK(c.unusable.empty());
  ServingRecord bad = r;
  bad.gpu = "TPU v5";
  CHECK_THROWS_WITH(mapper.map(bad), "s.jsonl:1: gpu = TPU v5: no row of the GPU table maps it (docs/calibration.md); give --profile");
  bad = r;
  bad.model = "acme/Unknown-9B";
  CHECK_THROWS_WITH(mapper.map(bad), Catch::StartsWith("s.jsonl:1: model = acme/Unknown-9B: no row of the model table"));
  bad = r;
  bad.engine = "llama.cpp";
  CHECK_THROWS_WITH(mapper.map(bad), Catch::StartsWith("s.jsonl:1: engine = llama.cpp: names no engine preset"));
  ServingMapper forced({"h200-sxm", "sglang"});
  const ServingCase f = forced.map(r);
  CHECK(f.profile_name == "h200-sxm");
  CHECK(f.engine_name == "sglang");
}
