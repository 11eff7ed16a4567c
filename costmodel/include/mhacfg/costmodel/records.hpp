// Measurement records (JSON Lines): one timed op call per line (its op, shape, dtype, backend,
// device and time_ms). A record keeps its original JSON so tools can write it back with fields added.
// The op's own fields (its shape and phase) are one of op_registry.hpp's op types, which read and
// write them; this file holds the fields every record has.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/op_class.hpp"
#include "mhacfg/costmodel/op_registry.hpp"

namespace mhacfg {

struct MeasurementRecord {
  OpRecord shape;  // the op kind and its fields (an attention prefill by default)
  DType dtype = DType::bf16;  // linear_attention: the state's; indexer: fp8
  std::string backend;  // e.g. "cudnn", "flash", "cublas", "mhacfg-cpu"; may be empty
  std::string device;
  std::optional<double> time_ms;
  nlohmann::json json;  // the record as read (or as built), unknown fields preserved
  std::string where;    // "file:line" when read from a file (error messages name it); empty when built

  OpKind op() const { return op_kind(shape); }
  // The op's phase (prefill for ops without phases: gemm).
  Phase phase() const;
  void set_phase(Phase p);  // ops with phases only
  // The op's shape; each must be that op's record (attention(): attention or attention_block).
  const AttentionShape& attention() const;
  AttentionShape& attention();
  const GemmShape& gemm() const { return std::get<GemmOp>(shape).shape; }
  GemmShape& gemm() { return std::get<GemmOp>(shape).shape; }
  const LinearAttentionShape& linear() const { return std::get<LinearAttentionOp>(shape).shape; }
  LinearAttentionShape& linear() { return std::get<LinearAttentionOp>(shape).shape; }
  const IndexerShape& indexer() const { return std::get<IndexerOp>(shape).shape; }
  IndexerShape& indexer() { return std::get<IndexerOp>(shape).shape; }
  std::int64_t d_model() const { return std::get<AttentionBlockOp>(shape).d_model; }

  // The op class the fitter and validate group it by (op_class.hpp): "attention/prefill",
  // "attention/decode/mla", "gemm", "linear_attention/decode/kda", "indexer/prefill", ...
  OpClass cls() const;
  std::string op_class() const { return cls().to_string(); }
  // The FLOPs of this one kernel call (attention_block: its attention call's): OverflowError when they
  // pass 64 bits (a model's counts are wide, counts.hpp; one call's are not).
  std::int64_t flops() const;
  // The time model's inputs for this record (attention_block: its attention call's); checks flops().
  OpFeatures features(const CpuKernelFacts& facts = {}) const;
};

// Parses one record; `where` (e.g. "shapes.jsonl:12") prefixes error messages. Throws InputError.
MeasurementRecord parse_record(const nlohmann::json& j, const std::string& where);
// Builds the JSON of a record from its fields (used when tools create records).
nlohmann::json record_to_json(const MeasurementRecord& r);

// Reads a JSON Lines file; blank lines are skipped. Throws InputError naming file:line (`field`
// names the flag the file came from when it cannot be read or holds no records).
std::vector<MeasurementRecord> read_records(const std::string& path, const std::string& field = "--in");
std::vector<MeasurementRecord> read_records(std::istream& in, const std::string& name);
// The same records one at a time, without holding them (LineReader: no limit on the file, each line
// at most kMaxInputBytes): `each` gets every record in order; returns how many. The same errors,
// raised when their line is reached.
std::int64_t for_each_record(const std::string& path, const std::string& field,
                             const std::function<void(MeasurementRecord&)>& each);

// Writes records as JSON Lines, atomically (a temporary file renamed over `path`).
void write_records(const std::string& path, const std::vector<nlohmann::json>& lines);

}  // namespace mhacfg
