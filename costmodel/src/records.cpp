#include "mhacfg/costmodel/records.hpp"

#include <fstream>
#include <sstream>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/streams.hpp"

namespace mhacfg {

Phase MeasurementRecord::phase() const {
  return std::visit(
      [](const auto& op) {
        if constexpr (std::decay_t<decltype(op)>::phased) return op.phase;
        else return Phase::prefill;
      },
      shape);
}

void MeasurementRecord::set_phase(Phase p) {
  std::visit(
      [p](auto& op) {
        if constexpr (std::decay_t<decltype(op)>::phased) op.phase = p;
        else MHACFG_CHECK(false, "set_phase on an op without phases");
      },
      shape);
}

const AttentionShape& MeasurementRecord::attention() const {
  if (const auto* b = std::get_if<AttentionBlockOp>(&shape)) return b->shape;
  return std::get<AttentionOp>(shape).shape;
}

AttentionShape& MeasurementRecord::attention() {
  if (auto* b = std::get_if<AttentionBlockOp>(&shape)) return b->shape;
  return std::get<AttentionOp>(shape).shape;
}

OpClass MeasurementRecord::cls() const {
  const OpClass c = std::visit([](const auto& op) { return op.op_class(); }, shape);
  return keyed_class(c, dtype);  // "gemm/fp8", "attention/decode/fp8"
}

std::int64_t MeasurementRecord::flops() const {
  switch (op()) {
    case OpKind::gemm: return narrow(gemm_flops(gemm()), "GEMM FLOPs");
    case OpKind::linear_attention: return narrow(linear_attention_flops(linear()), "linear-attention FLOPs");
    case OpKind::indexer: return narrow(indexer_flops(indexer()), "indexer FLOPs");
    case OpKind::attention:
    case OpKind::attention_block: break;
  }
  return narrow(attention_flops(attention()), "attention FLOPs");
}

OpFeatures MeasurementRecord::features(const CpuKernelFacts& facts) const {
  flops();
  return std::visit([&](const auto& op) { return op.features(dtype, facts); }, shape);
}

namespace {

// "attention, gemm, ... or indexer": the registered op names.
std::string op_names() {
  std::string names;
  std::size_t i = 0;
  for_each_op([&](auto tag) {
    using Op = typename decltype(tag)::type;
    names += (i == 0 ? "" : i + 1 == kOpKinds ? " or " : ", ") + std::string(Op::name);
    ++i;
  });
  return names;
}

// The op's fields and the dtype its rule allows.
void parse_op(const JsonFields& f, const std::string& op, MeasurementRecord& r) {
  bool known = false;
  for_each_op([&](auto tag) {
    using Op = typename decltype(tag)::type;
    if (known || op != Op::name) return;
    known = true;
    r.shape = Op::from_json(f);
    r.dtype = parse_dtype(f.optional_string("dtype").value_or(std::string(to_string(Op::default_dtype))), f.name("dtype"));
    if (!Op::only_default_dtype.empty() && r.dtype != Op::default_dtype)
      throw InputError(f.name("dtype"), "\"" + std::string(to_string(r.dtype)) + "\"", std::string(Op::only_default_dtype));
  });
  if (!known) throw InputError(f.name("op"), "\"" + op + "\"", "unknown op (expected " + op_names() + ")");
}

}  // namespace

MeasurementRecord parse_record(const nlohmann::json& j, const std::string& where) {
  JsonFields f(j, where);
  MeasurementRecord r;
  parse_op(f, f.require_string("op"), r);
  r.backend = f.optional_string("backend").value_or("");
  r.device = f.optional_string("device").value_or("");
  if (auto t = f.optional_number("time_ms")) {
    // No kernel call takes less than a nanosecond, nor more than a day: such times are typos or units.
    if (!(*t >= 1e-6 && *t <= 8.64e7))
      throw InputError(f.name("time_ms"), json_value_text(j.at("time_ms")), "must be between 1e-6 (1 ns) and 8.64e7 (a day)");
    r.time_ms = *t;
  }
  r.json = j;
  return r;
}

nlohmann::json record_to_json(const MeasurementRecord& r) {
  nlohmann::json j = nlohmann::json::object();
  j["op"] = std::string(to_string(r.op()));
  std::visit([&](const auto& op) { op.to_json(j); }, r.shape);
  j["dtype"] = std::string(to_string(r.dtype));
  if (!r.backend.empty()) j["backend"] = r.backend;
  if (!r.device.empty()) j["device"] = r.device;
  if (r.time_ms) j["time_ms"] = *r.time_ms;
  return j;
}

namespace {

// Line `lineno` of `name` as a record (false for a blank line, which is skipped).
bool record_of_line(const std::string& line, const std::string& name, std::int64_t lineno, MeasurementRecord& r) {
  if (line.find_first_not_of(" \t\r") == std::string::npos) return false;
  const std::string where = name + ":" + std::to_string(lineno);
  r = parse_record(parse_json(line, where), where);
  r.where = where;
  return true;
}

}  // namespace

std::vector<MeasurementRecord> read_records(std::istream& in, const std::string& name) {
  std::vector<MeasurementRecord> out;
  std::string line;
  MeasurementRecord r;
  for (std::int64_t lineno = 1; std::getline(in, line); ++lineno)
    if (record_of_line(line, name, lineno, r)) out.push_back(std::move(r));
  return out;
}

std::vector<MeasurementRecord> read_records(const std::string& path, const std::string& field) {
  std::istringstream in(read_file(path, field));
  auto records = read_records(in, path);
  if (records.empty()) throw InputError(field, path, "holds no records");
  return records;
}

std::int64_t for_each_record(const std::string& path, const std::string& field,
                             const std::function<void(MeasurementRecord&)>& each) {
  LineReader in(path, field);
  std::string line;
  MeasurementRecord r;
  std::int64_t count = 0;
  for (std::int64_t lineno = 1; in.next(line); ++lineno)
    if (record_of_line(line, path, lineno, r)) {
      each(r);
      ++count;
    }
  if (count == 0) throw InputError(field, path, "holds no records");
  return count;
}

void write_records(const std::string& path, const std::vector<nlohmann::json>& lines) {
  std::string out;
  for (const auto& j : lines) out += json_text(j) + "\n";
  write_file_atomic(path, out);
}

}  // namespace mhacfg
