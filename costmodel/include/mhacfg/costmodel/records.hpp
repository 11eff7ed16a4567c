// Measurement records (JSON Lines): the format of shared/data/README.md plus `attention_block`.
// One record per line; a record keeps its original JSON so tools can write it back with fields added.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg {

enum class OpKind {
  attention,        // one attention call (prefill or decode; MLA absorbed decode when kv_lora_rank > 0)
  gemm,             // C[m,n] = A[m,k] B[k,n]
  attention_block,  // fused QKV GEMM + attention + O GEMM for a d_model
  linear_attention, // a linear-attention layer's core: convolution and recurrence (ops.hpp)
  indexer,          // a sparse-attention layer's lightning indexer: scores and top-k (ops.hpp)
};
enum class Phase { prefill, decode };

std::string_view to_string(OpKind k);
std::string_view to_string(Phase p);

struct MeasurementRecord {
  OpKind op = OpKind::attention;
  Phase phase = Phase::prefill;  // attention and attention_block
  AttentionShape attention;      // attention and attention_block
  GemmShape gemm;                // gemm
  std::int64_t d_model = 0;      // attention_block
  LinearAttentionShape linear;   // linear_attention (dtype: the state's)
  IndexerShape indexer;          // indexer (dtype: fp8, the keys' and queries')
  DType dtype = DType::bf16;
  std::string backend;  // e.g. "cudnn", "flash", "cublas", "mhacfg-cpu"; may be empty
  std::string device;
  std::optional<double> time_ms;
  nlohmann::json json;  // the record as read (or as built), unknown fields preserved
  std::string where;    // "file:line" when read from a file (error messages name it); empty when built

  // Op class used by the fitter and by validate: "attention/prefill", "attention/decode",
  // "attention/decode/mla", "gemm", "attention_block/prefill", "attention_block/decode",
  // "linear_attention/prefill", "linear_attention/decode" (KDA: +"/kda"), "indexer/prefill",
  // "indexer/decode".
  std::string op_class() const;
};

// Whether `c` is a class op_class() produces: gemm; attention or attention_block, then prefill or
// decode, optionally /mla; linear_attention/prefill or /decode, optionally /kda; indexer/prefill or
// /decode.
bool is_op_class(const std::string& c);

// Parses one record; `where` (e.g. "shapes.jsonl:12") prefixes error messages. Throws InputError.
MeasurementRecord parse_record(const nlohmann::json& j, const std::string& where);
// Builds the JSON of a record from its fields (used when tools create records).
nlohmann::json record_to_json(const MeasurementRecord& r);

// Reads a JSON Lines file; blank lines are skipped. Throws InputError naming file:line (`field`
// names the flag the file came from when it cannot be read or holds no records).
std::vector<MeasurementRecord> read_records(const std::string& path, const std::string& field = "--in");
std::vector<MeasurementRecord> read_records(std::istream& in, const std::string& name);

// Writes records as JSON Lines, atomically (a temporary file renamed over `path`).
void write_records(const std::string& path, const std::vector<nlohmann::json>& lines);

}  // namespace mhacfg
