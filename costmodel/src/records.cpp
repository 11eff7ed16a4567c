#include "mhacfg/costmodel/records.hpp"

#include <fstream>
#include <sstream>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg {

std::string_view to_string(OpKind k) {
  switch (k) {
    case OpKind::attention: return "attention";
    case OpKind::gemm: return "gemm";
    case OpKind::attention_block: return "attention_block";
    case OpKind::linear_attention: return "linear_attention";
    case OpKind::indexer: return "indexer";
  }
  MHACFG_CHECK(false, "unknown OpKind");
}

std::string_view to_string(Phase p) { return p == Phase::prefill ? "prefill" : "decode"; }

std::string MeasurementRecord::op_class() const {
  if (op == OpKind::gemm) return "gemm";
  std::string c = std::string(to_string(op)) + "/" + std::string(to_string(phase));
  if (op == OpKind::attention && attention.is_mla()) c += "/mla";
  if (op == OpKind::linear_attention && linear.kind == LinearKind::kda) c += "/kda";
  return c;
}

bool is_op_class(const std::string& c) {
  for (OpKind op : {OpKind::attention, OpKind::attention_block})
    for (Phase phase : {Phase::prefill, Phase::decode})
      for (const char* mla : {"", "/mla"})
        if (c == std::string(to_string(op)) + "/" + std::string(to_string(phase)) + mla) return true;
  for (const char* kda : {"", "/kda"})
    for (Phase phase : {Phase::prefill, Phase::decode})
      if (c == "linear_attention/" + std::string(to_string(phase)) + kda) return true;
  return c == "gemm" || c == "indexer/prefill" || c == "indexer/decode";
}

namespace {

Phase parse_phase(const JsonFields& f) {
  const std::string p = f.require_string("phase");
  if (p == "prefill") return Phase::prefill;
  if (p == "decode") return Phase::decode;
  throw InputError(f.name("phase"), "\"" + p + "\"", "must be \"prefill\" or \"decode\"");
}

void parse_attention_fields(const JsonFields& f, MeasurementRecord& r) {
  AttentionShape& s = r.attention;
  r.phase = parse_phase(f);
  s.batch = f.require_int("batch");
  s.q_len = f.require_int("q_len");
  s.kv_len = f.require_int("kv_len");
  s.num_q_heads = f.require_int("num_q_heads");
  s.num_kv_heads = f.require_int("num_kv_heads");
  s.kv_lora_rank = f.optional_int("kv_lora_rank").value_or(0);
  s.rope_head_dim = f.optional_int("rope_head_dim", false).value_or(0);
  if (s.is_mla()) {
    // head_dim / v_head_dim may restate the latent widths; they must then agree.
    if (f.has("head_dim") && f.require_int("head_dim") != s.qk_dim())
      throw InputError(f.name("head_dim"), std::to_string(f.require_int("head_dim")),
                       "must equal kv_lora_rank + rope_head_dim = " + std::to_string(s.qk_dim()) + " for MLA");
    if (f.has("v_head_dim") && f.require_int("v_head_dim") != s.kv_lora_rank)
      throw InputError(f.name("v_head_dim"), std::to_string(f.require_int("v_head_dim")),
                       "must equal kv_lora_rank = " + std::to_string(s.kv_lora_rank) + " for MLA");
    if (s.num_kv_heads != 1)
      throw InputError(f.name("num_kv_heads"), std::to_string(s.num_kv_heads), "must be 1 for MLA (one shared latent)");
    s.head_dim = s.qk_dim();
    s.v_head_dim = s.kv_lora_rank;
  } else {
    s.head_dim = f.require_int("head_dim");
    s.v_head_dim = f.optional_int("v_head_dim").value_or(s.head_dim);
  }
  s.causal = f.optional_bool("causal", r.phase == Phase::prefill);
  s.window = f.optional_int("window", false).value_or(0);
  s.chunk = f.optional_int("chunk", false).value_or(0);
  if (s.chunk > 0 && s.window > 0)
    throw InputError(f.name("chunk"), std::to_string(s.chunk), "cannot be combined with window = " + std::to_string(s.window));
  if (s.chunk > 0 && !s.causal)
    throw InputError(f.name("chunk"), std::to_string(s.chunk), "chunked attention needs causal = true");
  if (s.num_q_heads % s.num_kv_heads != 0)
    throw InputError(f.name("num_kv_heads"), std::to_string(s.num_kv_heads),
                     "must divide num_q_heads = " + std::to_string(s.num_q_heads));
  if (s.q_len > s.kv_len)
    throw InputError(f.name("q_len"), std::to_string(s.q_len),
                     "must not exceed kv_len = " + std::to_string(s.kv_len));
}

// Fields of a linear_attention record: the LinearAttentionShape's (Mamba2: groups are num_k_heads,
// d_state is head_k_dim, its head_dim is head_v_dim).
void parse_linear_fields(const JsonFields& f, MeasurementRecord& r) {
  LinearAttentionShape& s = r.linear;
  r.phase = parse_phase(f);
  const std::string kind = f.require_string("kind");
  if (kind == "gated_deltanet") s.kind = LinearKind::gated_deltanet;
  else if (kind == "mamba2") s.kind = LinearKind::mamba2;
  else if (kind == "kda") s.kind = LinearKind::kda;
  else throw InputError(f.name("kind"), "\"" + kind + "\"", "must be \"gated_deltanet\", \"mamba2\" or \"kda\"");
  s.batch = f.require_int("batch");
  s.q_len = f.require_int("q_len");
  s.num_k_heads = f.require_int("num_k_heads");
  s.num_v_heads = f.require_int("num_v_heads");
  s.head_k_dim = f.require_int("head_k_dim");
  s.head_v_dim = f.require_int("head_v_dim");
  s.conv_kernel = f.require_int("conv_kernel");
  if (s.num_v_heads % s.num_k_heads != 0)
    throw InputError(f.name("num_k_heads"), std::to_string(s.num_k_heads),
                     "must divide num_v_heads = " + std::to_string(s.num_v_heads));
  if (r.phase == Phase::decode && s.q_len != 1)
    throw InputError(f.name("q_len"), std::to_string(s.q_len), "a linear_attention decode step takes one token (q_len 1)");
  try {
    s.conv_dim();
  } catch (const InputError&) {  // the overflow, named by the record's field
    throw InputError(f.name("num_v_heads"), std::to_string(s.num_v_heads),
                     "the convolution's width 2 x num_k_heads x head_k_dim + num_v_heads x head_v_dim overflows a 64-bit count");
  }
}

// Fields of an indexer record: the IndexerShape's; its keys and queries are fp8 (dtype "fp8", the
// default).
void parse_indexer_fields(const JsonFields& f, MeasurementRecord& r) {
  IndexerShape& s = r.indexer;
  r.phase = parse_phase(f);
  s.batch = f.require_int("batch");
  s.q_len = f.require_int("q_len");
  s.kv_len = f.require_int("kv_len");
  s.num_heads = f.require_int("num_heads");
  s.head_dim = f.require_int("head_dim");
  s.topk = f.require_int("topk");
  if (s.q_len > s.kv_len)
    throw InputError(f.name("q_len"), std::to_string(s.q_len), "must not exceed kv_len = " + std::to_string(s.kv_len));
  indexer_flops(s);  // overflow-checked
  indexer_bytes(s);
}

}  // namespace

MeasurementRecord parse_record(const nlohmann::json& j, const std::string& where) {
  JsonFields f(j, where);
  MeasurementRecord r;
  const std::string op = f.require_string("op");
  if (op == "attention") {
    r.op = OpKind::attention;
    parse_attention_fields(f, r);
  } else if (op == "attention_block") {
    r.op = OpKind::attention_block;
    parse_attention_fields(f, r);
    r.d_model = f.require_int("d_model");
    if (r.attention.is_mla())
      throw InputError(f.name("kv_lora_rank"), std::to_string(r.attention.kv_lora_rank),
                       "attention_block records describe MHA/GQA/MQA blocks only");
  } else if (op == "gemm") {
    r.op = OpKind::gemm;
    r.gemm.m = f.require_int("m");
    r.gemm.n = f.require_int("n");
    r.gemm.k = f.require_int("k");
  } else if (op == "linear_attention") {
    r.op = OpKind::linear_attention;
    parse_linear_fields(f, r);
  } else if (op == "indexer") {
    r.op = OpKind::indexer;
    parse_indexer_fields(f, r);
  } else {
    throw InputError(f.name("op"), "\"" + op + "\"",
                     "unknown op (expected attention, gemm, attention_block, linear_attention or indexer)");
  }
  r.dtype = parse_dtype(f.optional_string("dtype").value_or(r.op == OpKind::indexer ? "fp8" : "bf16"), f.name("dtype"));
  if (r.op == OpKind::indexer && r.dtype != DType::fp8)
    throw InputError(f.name("dtype"), "\"" + std::string(to_string(r.dtype)) + "\"",
                     "an indexer's keys and queries are fp8 (as the engines cache them)");
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
  j["op"] = std::string(to_string(r.op));
  if (r.op == OpKind::gemm) {
    j["m"] = r.gemm.m;
    j["n"] = r.gemm.n;
    j["k"] = r.gemm.k;
  } else if (r.op == OpKind::linear_attention) {
    const LinearAttentionShape& s = r.linear;
    j["phase"] = std::string(to_string(r.phase));
    j["kind"] = std::string(to_string(s.kind));
    j["batch"] = s.batch;
    j["q_len"] = s.q_len;
    j["num_k_heads"] = s.num_k_heads;
    j["num_v_heads"] = s.num_v_heads;
    j["head_k_dim"] = s.head_k_dim;
    j["head_v_dim"] = s.head_v_dim;
    j["conv_kernel"] = s.conv_kernel;
  } else if (r.op == OpKind::indexer) {
    const IndexerShape& s = r.indexer;
    j["phase"] = std::string(to_string(r.phase));
    j["batch"] = s.batch;
    j["q_len"] = s.q_len;
    j["kv_len"] = s.kv_len;
    j["num_heads"] = s.num_heads;
    j["head_dim"] = s.head_dim;
    j["topk"] = s.topk;
  } else {
    const AttentionShape& s = r.attention;
    j["phase"] = std::string(to_string(r.phase));
    if (r.op == OpKind::attention_block) j["d_model"] = r.d_model;
    j["batch"] = s.batch;
    j["q_len"] = s.q_len;
    j["kv_len"] = s.kv_len;
    j["num_q_heads"] = s.num_q_heads;
    j["num_kv_heads"] = s.kv_heads();
    j["head_dim"] = s.qk_dim();
    j["v_head_dim"] = s.v_dim();
    if (s.is_mla()) {
      j["kv_lora_rank"] = s.kv_lora_rank;
      j["rope_head_dim"] = s.rope_head_dim;
    }
    if (s.window > 0) j["window"] = s.window;
    if (s.chunk > 0) j["chunk"] = s.chunk;
    j["causal"] = s.causal;
  }
  j["dtype"] = std::string(to_string(r.dtype));
  if (!r.backend.empty()) j["backend"] = r.backend;
  if (!r.device.empty()) j["device"] = r.device;
  if (r.time_ms) j["time_ms"] = *r.time_ms;
  return j;
}

std::vector<MeasurementRecord> read_records(std::istream& in, const std::string& name) {
  std::vector<MeasurementRecord> out;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = name + ":" + std::to_string(lineno);
    out.push_back(parse_record(parse_json(line, where), where));
    out.back().where = where;
  }
  return out;
}

std::vector<MeasurementRecord> read_records(const std::string& path, const std::string& field) {
  std::istringstream in(read_file(path, field));
  auto records = read_records(in, path);
  if (records.empty()) throw InputError(field, path, "holds no records");
  return records;
}

void write_records(const std::string& path, const std::vector<nlohmann::json>& lines) {
  std::string out;
  for (const auto& j : lines) out += json_text(j) + "\n";
  write_file_atomic(path, out);
}

}  // namespace mhacfg
