#include "mhacfg/costmodel/serving_records.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <sstream>
#include <utility>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg {

std::vector<std::string> lowercase_words(const std::string& text) {
  std::vector<std::string> out;
  std::string w;
  for (char c : text + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += char(std::tolower(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      out.push_back(w);
      w.clear();
    }
  }
  return out;
}

namespace {

constexpr std::array<std::pair<std::string_view, ServingMetric>, 7> kMetricNames = {{
    {"ttft_ms", ServingMetric::ttft_ms},
    {"tpot_ms", ServingMetric::tpot_ms},
    {"itl_ms", ServingMetric::itl_ms},
    {"latency_ms", ServingMetric::latency_ms},
    {"output_tokens_per_s", ServingMetric::output_tokens_per_s},
    {"output_tokens_per_s_per_gpu", ServingMetric::output_tokens_per_s_per_gpu},
    {"output_tokens_per_s_per_user", ServingMetric::output_tokens_per_s_per_user},
}};

// Words that name a dtype in free text, and the dtype each names. fp4 formats are kept by name: the
// cost model decides whether it prices them.
constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kDtypeWords = {{
    {"fp32", "fp32"}, {"float32", "fp32"}, {"bf16", "bf16"}, {"bfloat16", "bf16"}, {"fp16", "fp16"},
    {"float16", "fp16"}, {"fp8", "fp8"}, {"float8", "fp8"}, {"int8", "int8"}, {"int4", "int4"},
    {"nvfp4", "nvfp4"}, {"mxfp4", "mxfp4"}, {"fp4", "fp4"}, {"w4a16", "int4"},
}};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}


// Python's json module writes an infinite float as the bare word Infinity (SGLang's default
// request_rate is inf), which is not JSON: outside strings, Infinity and NaN become the string "inf"
// and null before parsing.
std::string python_json_compat(const std::string& line) {
  std::string out;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < line.size()) out += line[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (line.compare(i, 9, "-Infinity") == 0) { out += "\"-inf\""; i += 8; continue; }
    if (line.compare(i, 8, "Infinity") == 0) { out += "\"inf\""; i += 7; continue; }
    if (line.compare(i, 3, "NaN") == 0) { out += "null"; i += 2; continue; }
    out += c;
  }
  return out;
}

// A record's fields over the defaults (a null in the record leaves the default).
nlohmann::json merged(const nlohmann::json& defaults, const nlohmann::json& j) {
  nlohmann::json m = defaults;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!it.value().is_null() || !m.contains(it.key())) m[it.key()] = it.value();
  return m;
}

// An integer field: a JSON integer, or a string of digits (vLLM's --metadata values are strings).
std::optional<std::int64_t> int_field(const JsonFields& f, const nlohmann::json& j, const char* key, bool positive) {
  if (!f.has(key)) return std::nullopt;
  const nlohmann::json& v = j.at(key);
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
      throw InputError(f.name(key), s, "must be a whole number");
    return json_to_int(nlohmann::json(std::stoll(s.substr(0, 18))), f.name(key), positive);
  }
  return f.optional_int(key, positive);
}

std::string text_field(const JsonFields& f, const nlohmann::json& j, const char* key) {
  if (!f.has(key)) return "";
  const nlohmann::json& v = j.at(key);
  return v.is_string() ? v.get<std::string>() : json_value_text(v);
}

// A model id without a trailing note: "deepseek-ai/DeepSeek-R1 (NVFP4 MoE via ModelOpt)" -> the id.
std::string model_id(const std::string& text) {
  std::string s = text.substr(0, text.find(" ("));
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// vLLM's multi-step scheduling as the record states it: a `num_scheduler_steps` field, else the launch
// flag `--num-scheduler-steps N` (or `--num_scheduler_steps=N`) quoted in its `engine_args`, `notes`
// or `scenario` text, as published measurements quote their launch commands. 0: not stated.
std::int64_t scheduler_steps(const JsonFields& f, const nlohmann::json& j) {
  if (f.has("num_scheduler_steps")) {
    const std::int64_t n = int_field(f, j, "num_scheduler_steps", true).value_or(0);
    if (n > 1024) throw InputError(f.name("num_scheduler_steps"), std::to_string(n), "must be 1 to 1024");
    return n;
  }
  for (const char* key : {"engine_args", "notes", "scenario"}) {
    if (!f.has(key) || !j.at(key).is_string()) continue;
    const std::string text = lower(j.at(key).get<std::string>());
    for (const char* flag : {"--num-scheduler-steps", "--num_scheduler_steps"}) {
      const std::size_t at = text.find(flag);
      if (at == std::string::npos) continue;
      std::size_t i = at + std::char_traits<char>::length(flag);
      while (i < text.size() && (text[i] == ' ' || text[i] == '=')) ++i;
      std::int64_t n = 0;
      std::size_t digits = 0;
      for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && digits < 5; ++i, ++digits)
        n = n * 10 + (text[i] - '0');
      if (n >= 1 && n <= 1024) return n;
    }
  }
  return 0;
}

// Whether the record's benchmark tool, as its text names it, reports ITL as each request's mean gap
// ((latency - ttft) / (osl - 1): AIPerf's InterTokenLatencyMetric, ai-dynamo/aiperf
// aiperf/metrics/types/inter_token_latency_metric.py; GenAI-Perf, its predecessor, and ray-project's
// LLMPerf likewise) rather than the gaps between streamed chunks (vLLM's `vllm bench serve` and SGLang's
// `bench_serving`: `output.itl.append(timestamp - most_recent_timestamp)`, the median over all gaps).
bool averages_itl_per_request(const nlohmann::json& j) {
  for (const char* key : {"benchmark", "scenario", "notes", "engine"}) {
    if (!j.contains(key) || !j.at(key).is_string()) continue;
    const std::string text = lower(j.at(key).get<std::string>());
    for (const char* tool : {"aiperf", "genai-perf", "genai_perf", "genaiperf", "llmperf"})
      if (text.find(tool) != std::string::npos) return true;
  }
  return false;
}

// The deployment fields every format shares (model, gpu, parallelism, dtypes), from the merged object.
ServingRecord common_fields(const nlohmann::json& j, const std::string& where, const std::string& format) {
  const JsonFields f(j, where);
  ServingRecord r;
  r.where = where;
  r.format = format;
  if (!f.has("model"))
    throw InputError(f.name("model"), "(missing)",
                     "the record does not name the model: add it (vLLM --metadata model=ID, or mhacfg --set model=ID)");
  r.model = model_id(f.require_string("model"));
  if (!f.has("gpu"))
    throw InputError(f.name("gpu"), "(missing)",
                     "the record does not name the GPU: add it (vLLM --metadata gpu=H200, or mhacfg --set gpu=H200)");
  r.gpu = f.require_string("gpu");
  r.engine = text_field(f, j, "engine");
  const auto tp = int_field(f, j, "tp", true);
  r.tp = tp.value_or(1);
  if (!tp && f.present("tp")) r.unusable = "tp not given";
  r.pp = int_field(f, j, "pp", true).value_or(1);
  r.ep = int_field(f, j, "ep", true).value_or(1);
  r.dp_attention = f.optional_bool("dp_attention", false);
  r.scheduler_steps = scheduler_steps(f, j);
  r.num_gpus = int_field(f, j, "num_gpus", true).value_or(0);
  if (f.has("weight_dtype")) r.weight_dtype = dtype_word(f.require_string("weight_dtype"), f.name("weight_dtype"));
  if (f.has("kv_dtype")) r.kv_dtype = dtype_word(f.require_string("kv_dtype"), f.name("kv_dtype"));
  return r;
}

void derive_category(ServingRecord& r) {
  if (!r.category.empty()) return;
  r.category = r.mode == ServingMode::static_batch ? "fixed_batch_static"
               : r.concurrency == 1                ? "latency_c1"
               : r.concurrency == 0                ? "max_throughput"
                                                   : "fixed_concurrency";
}

// mhacfg's serving JSONL: one metric per line.
ServingRecord jsonl_record(const nlohmann::json& j, const std::string& where) {
  ServingRecord r = common_fields(j, where, "jsonl");
  const JsonFields f(j, where);
  r.id = f.has("id") ? text_field(f, j, "id") : where;
  r.source = text_field(f, j, "source");
  r.metric = parse_serving_metric(f.require_string("metric"), f.name("metric"));
  r.value = f.require_number("value");
  if (!(r.value > 0) || !std::isfinite(r.value)) throw InputError(f.name("value"), json_value_text(j.at("value")), "must be positive");
  r.category = f.optional_string("category").value_or("");
  r.isl = int_field(f, j, "isl", true).value_or(0);
  r.osl = int_field(f, j, "osl", true).value_or(0);
  r.concurrency = int_field(f, j, "concurrency", false).value_or(0);
  r.batch = int_field(f, j, "batch", false).value_or(0);
  if (r.concurrency < 0) throw InputError(f.name("concurrency"), std::to_string(r.concurrency), "must be 0 or positive");
  r.spec_decode = f.optional_bool("spec_decode", false);
  r.itl_per_request = averages_itl_per_request(j);
  const bool static_text = lower(r.engine).find("static batch") != std::string::npos;
  if (static_text || (r.batch > 0 && r.category == "fixed_batch_static")) {
    r.mode = ServingMode::static_batch;
    if (r.batch <= 0) r.batch = r.concurrency;
    if (r.batch <= 0) throw InputError(f.name("batch"), "(missing)", "a static batch needs its batch (or concurrency)");
    r.concurrency = r.batch;
  } else {
    r.mode = r.concurrency == 1 ? ServingMode::latency : ServingMode::continuous;
  }
  derive_category(r);
  if (r.unusable.empty() && (r.isl <= 0 || r.osl <= 0)) r.unusable = "isl or osl not given";
  if (r.unusable.empty() && r.spec_decode) r.unusable = "speculative decoding is not modelled";
  return r;
}

// vLLM's and SGLang's benchmark results: one run, several metrics (the medians over its requests).
struct BenchKeys {
  const char* format;
  const char* default_engine;
  std::vector<std::pair<const char*, ServingMetric>> metrics;
};

const BenchKeys kVllm = {"vllm", "vllm",
                         {{"median_ttft_ms", ServingMetric::ttft_ms}, {"median_tpot_ms", ServingMetric::tpot_ms},
                          {"median_e2el_ms", ServingMetric::latency_ms},
                          {"output_throughput", ServingMetric::output_tokens_per_s}}};
const BenchKeys kSglang = {"sglang", "sglang",
                           {{"median_ttft_ms", ServingMetric::ttft_ms}, {"median_tpot_ms", ServingMetric::tpot_ms},
                            {"median_e2e_latency_ms", ServingMetric::latency_ms},
                            {"output_throughput", ServingMetric::output_tokens_per_s}}};

std::vector<ServingRecord> bench_records(const nlohmann::json& in, const std::string& where, const BenchKeys& k,
                                         const std::string& file) {
  nlohmann::json j = in;
  if (j.contains("model_id") && (!j.contains("model") || j["model"].is_null())) j["model"] = j["model_id"];
  const JsonFields f(j, where);
  ServingRecord base = common_fields(j, where, k.format);
  if (base.engine.empty()) base.engine = k.format == std::string("sglang") ? text_field(f, j, "backend") : k.default_engine;
  if (base.engine.empty()) base.engine = k.default_engine;
  const std::int64_t completed = f.require_int("completed");
  const auto mean_tokens = [&](const char* key) {
    return std::int64_t(std::llround(f.require_number(key) / double(completed)));
  };
  base.isl = mean_tokens("total_input_tokens");
  base.osl = mean_tokens("total_output_tokens");
  if (base.isl <= 0 || base.osl <= 0) base.unusable = "no input or output tokens";
  if (const auto c = int_field(f, j, "max_concurrency", true)) {
    base.concurrency = *c;
  } else if (f.has("request_rate") && text_field(f, j, "request_rate") != "inf") {
    base.unusable = "a finite request rate without --max-concurrency (open-loop arrivals) is not modelled";
  }
  base.mode = base.concurrency == 1 ? ServingMode::latency : ServingMode::continuous;
  derive_category(base);
  base.source = file + (f.has("date") ? " (" + text_field(f, j, "date") + ")" : "");
  std::vector<ServingRecord> out;
  for (const auto& [key, metric] : k.metrics) {
    const auto v = f.optional_number(key);
    if (!v || !(*v > 0)) continue;
    ServingRecord r = base;
    r.metric = metric;
    r.value = *v;
    r.id = where + ":" + std::string(to_string(metric));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::string_view to_string(ServingMetric m) {
  for (const auto& [name, v] : kMetricNames)
    if (v == m) return name;
  return "?";
}

ServingMetric parse_serving_metric(std::string_view name, const std::string& field) {
  for (const auto& [n, v] : kMetricNames)
    if (n == name) return v;
  std::string names;
  for (const auto& [n, v] : kMetricNames) names += (names.empty() ? "" : ", ") + std::string(n);
  throw InputError(field, std::string(name), "unknown serving metric (one of " + names + ")");
}

double serving_metric_value(const ServingTimes& t, ServingMetric m) {
  switch (m) {
    case ServingMetric::ttft_ms: return t.ttft_ms;
    case ServingMetric::tpot_ms: return t.tpot_ms;
    case ServingMetric::itl_ms: return t.itl_ms;
    case ServingMetric::latency_ms: return t.request_latency_ms;
    case ServingMetric::output_tokens_per_s: return t.output_tokens_per_s;
    case ServingMetric::output_tokens_per_s_per_gpu: return t.output_tokens_per_s_per_gpu;
    case ServingMetric::output_tokens_per_s_per_user: return t.output_tokens_per_s_per_user;
  }
  MHACFG_CHECK(false, "unhandled serving metric");
}

double serving_metric_value(const ServingTimes& t, const ServingRecord& r) {
  return serving_metric_value(t, r.metric == ServingMetric::itl_ms && r.itl_per_request ? ServingMetric::tpot_ms : r.metric);
}

std::string dtype_word(const std::string& text, const std::string& field) {
  const std::vector<std::string> ws = lowercase_words(text);
  if (!ws.empty() && ws.front() == "unstated") return "";
  for (const std::string& w : ws)
    for (const auto& [word, dtype] : kDtypeWords)
      if (w == word) return std::string(dtype);
  throw InputError(field, text, "names no dtype (bf16, fp16, fp8, int8, int4, nvfp4, mxfp4, ...; or \"unstated\")");
}

bool is_serving_json(const nlohmann::json& j) {
  return j.is_object() && (j.contains("metric") || j.contains("model_id") ||
                           (j.contains("backend") && (j.contains("median_ttft_ms") || j.contains("output_throughput"))));
}

bool is_serving_text(const std::string& text) {
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return false;
  const std::size_t end = text.find('\n', start);
  const std::string first = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  // A pretty-printed object starts with a line of "{" alone: the whole text is the object.
  const std::string candidate = first.find('}') == std::string::npos ? text : first;
  const nlohmann::json j = nlohmann::json::parse(python_json_compat(candidate), nullptr, false);
  return !j.is_discarded() && is_serving_json(j);
}

std::vector<ServingRecord> parse_serving_records(const std::string& text, const std::string& name,
                                                 const nlohmann::json& defaults) {
  std::vector<nlohmann::json> objects;
  std::vector<std::string> wheres;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  // One object over several lines (a pretty-printed vLLM result), else one object per line.
  const std::string first = lines.empty() ? "" : lines.front();
  if (first.find('{') != std::string::npos && first.find('}') == std::string::npos) {
    objects.push_back(parse_json(python_json_compat(text), name));
    wheres.push_back(name);
  } else {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = name + ":" + std::to_string(i + 1);
      objects.push_back(parse_json(python_json_compat(lines[i]), where));
      wheres.push_back(where);
    }
  }
  std::vector<ServingRecord> out;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const nlohmann::json& o = objects[i];
    if (!is_serving_json(o))
      throw InputError(wheres[i], json_value_text(o).substr(0, 60),
                       "not a serving record: mhacfg's JSONL has metric and value, vLLM's result model_id, SGLang's backend");
    const nlohmann::json m = merged(defaults, o);
    if (o.contains("metric")) out.push_back(jsonl_record(m, wheres[i]));
    else for (ServingRecord& r : bench_records(m, wheres[i], o.contains("model_id") ? kVllm : kSglang, name)) out.push_back(std::move(r));
  }
  if (out.empty()) throw InputError(name, "(no records)", "the file holds no serving measurement");
  return out;
}

std::vector<ServingRecord> read_serving_records(const std::string& path, const std::string& field,
                                                const nlohmann::json& defaults) {
  (void)field;
  return parse_serving_records(read_file(path, field), path, defaults);
}

nlohmann::json serving_record_to_json(const ServingRecord& r) {
  const char* modes[] = {"latency", "static_batch", "continuous"};
  return {{"id", r.id},           {"model", r.model},     {"gpu", r.gpu},
          {"engine", r.engine},   {"tp", r.tp},           {"pp", r.pp},
          {"ep", r.ep},           {"dp_attention", r.dp_attention}, {"num_scheduler_steps", r.scheduler_steps},
          {"isl", r.isl},         {"osl", r.osl},         {"concurrency", r.concurrency},
          {"batch", r.batch},     {"mode", modes[int(r.mode)]},
          {"weight_dtype", r.weight_dtype.empty() ? nlohmann::json() : nlohmann::json(r.weight_dtype)},
          {"kv_dtype", r.kv_dtype.empty() ? nlohmann::json() : nlohmann::json(r.kv_dtype)},
          {"metric", std::string(to_string(r.metric))}, {"value", r.value},
          {"category", r.category}, {"source", r.source}};
}

}  // namespace mhacfg
