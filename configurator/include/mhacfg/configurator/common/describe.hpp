// How every output describes what it counted: the resolved model, the workload and the counts as JSON,
// the layer pattern and the notes on what a profile predicts by roofline.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/model_spec.hpp"
#include "mhacfg/costmodel/predict.hpp"
#include "mhacfg/costmodel/serving.hpp"

namespace mhacfg {

struct Profile;

inline constexpr const char* kSchemaVersion = "1.0";

// The "model" object of every output: the resolved spec, so a reader sees what was counted.
nlohmann::json model_json(const ModelSpec& m);
nlohmann::json workload_json(const Workload& w);
// The per-component weight dtypes set (attention_weight_dtype, ffn_weight_dtype), added to `j`.
void add_component_dtypes(nlohmann::json& j, const Workload& w);
// "bf16", or with per-component dtypes "bf16 (attention bf16, FFN nvfp4)".
std::string weights_text(const Workload& w);
nlohmann::json counts_json(const ModelCounts& c);
// A wide count (FLOPs) in JSON: an integer when it fits 64 bits (exact), else the nearest double
// (relative error at most 2^-53).
nlohmann::json count_json(WideCount v);
// How many of a prediction's times an output lists: compare's summary, a recommended candidate's
// (and the breakdown of its attention), or analyze's whole breakdown. Each time is named once, here.
enum class TimesDetail { summary, candidate, full };
nlohmann::json times_json(const ModelTimes& t, TimesDetail detail);
// The engine a served time assumes and where its time goes: decode kernels, other ops, kernel gaps,
// host cost per step, the prefill's and the per-request cost (ms).
nlohmann::json serving_breakdown_json(const ServingTimes& s, const EngineModel& e);
// "48 layers (36 in 8192-token chunks, 12 global)": the layer count and, where layers are local, how.
std::string layer_pattern_text(const ModelSpec& m);
// "" when every softmax layer has the model's KV heads; else each count with its layers, the most heads
// first: " (KV heads per layer: 8 on 40, 4 on 6, 1 on 3)" (Llama-Nemotron's variable GQA).
std::string layer_kv_heads_text(const ModelSpec& m);
// "Gated DeltaNet" or "Mamba2": a linear-attention layer kind as reports name it.
std::string linear_kind_text(LinearKind k);
// The note that says a hybrid model's linear-attention cores are predicted by the roofline of `profile`.
std::string linear_roofline_note(const ModelSpec& m, const Profile& profile);
// One sentence on what `p`'s times stand on: its own fits, another profile's scaled, or the roofline.
std::string profile_basis_note(const Profile& p);
// The note that says how a sparse model's attention is costed: its queries' top k keys, and the
// indexer's scores, predicted by the roofline unless `profile` fits them.
std::string sparse_attention_note(const ModelSpec& m, const Profile& profile);

}  // namespace mhacfg
