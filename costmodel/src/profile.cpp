#include "mhacfg/costmodel/profile.hpp"

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/records.hpp"

namespace mhacfg {

std::string Profile::peak_dtype(DType compute) const {
  std::vector<std::string> order = {std::string(to_string(compute))};
  // A 4-bit float's nearest wider rate is fp8's (the tensor cores of the generation before fp4).
  if (compute == DType::nvfp4 || compute == DType::mxfp4) order.push_back("fp8");
  for (const char* wider : {"bf16", "fp16", "fp32"}) order.push_back(wider);
  for (const std::string& dtype : order)
    if (spec.peak_flop_per_s.count(dtype)) return dtype;
  // None of those listed: the lowest listed peak (never 0, which would make compute free).
  std::string lowest;
  for (const auto& [dtype, peak] : spec.peak_flop_per_s)
    if (peak > 0 && (lowest.empty() || peak < spec.peak_flop_per_s.at(lowest))) lowest = dtype;
  return lowest;
}

Basis Profile::basis() const {
  Basis b;
  if (ops.empty()) return b;
  if (transfer) {
    b.kind = BasisKind::transferred;
    b.from = transfer->from;
    b.expected_median_ape = transfer->expected_median_ape;
    b.expected_p90_ape = transfer->expected_p90_ape;
    b.expected_how = transfer->expected_how;
    return b;
  }
  b.kind = BasisKind::measured;
  if (!validation.empty()) {
    b.expected_median_ape = validation.front().median_ape;
    b.expected_p90_ape = validation.front().p90_ape;
    b.expected_how = std::to_string(validation.front().records) + " " + validation.front().what;
  }
  return b;
}

const KernelClass* Profile::kernel_class_for(const std::string& op_class) const {
  const auto it = kernel_classes.find(op_class);
  return it == kernel_classes.end() ? nullptr : find_kernel_class(it->second);
}

double Profile::peak_flop_per_s(DType compute) const {
  const auto it = spec.peak_flop_per_s.find(peak_dtype(compute));
  return it != spec.peak_flop_per_s.end() ? it->second : 0.0;
}

namespace {

std::vector<std::int64_t> int_list(const JsonFields& f, const char* key) {
  std::vector<std::int64_t> out;
  if (!f.has(key)) return out;
  const auto& v = f.at(key);
  if (!v.is_array()) throw InputError(f.name(key), json_value_text(v), "must be a list of integers");
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(json_to_int(v[i], f.name(key) + "[" + std::to_string(i) + "]", true));
  return out;
}

// A bandwidth or FLOP rate below 1e6 per second describes no device mhacfg advises on; such values
// (1e-300, a typo for a unit) turned every prediction into inf.
constexpr double kMinRate = 1e6;
double rate(const JsonFields& f, const char* key) {
  const double v = f.require_number(key);
  if (v < kMinRate) throw InputError(f.name(key), json_value_text(f.at(key)), "must be at least 1e6 per second");
  return v;
}



// spec.interconnect: link kinds by name, GPUs per node, and optional numeric overrides.
LinkTier tier_from_json(const JsonFields& f, const char* kind_key, const char* bw_key, const char* latency_key) {
  const std::string name = f.require_string(kind_key);
  const auto kind = parse_link_kind(name);
  if (!kind)
    throw InputError(f.name(kind_key), "\"" + name + "\"",
                     "unknown link kind (expected nvlink3, nvlink4, nvlink5, pcie4, pcie5, infinity-fabric, ib-hdr, "
                     "ib-ndr, ib-xdr, roce-400 or none)");
  LinkTier t = link_tier(*kind);
  if (f.has(bw_key)) {
    t.bw_bytes_per_s = rate(f, bw_key);
    if (t.busbw_fraction <= 0) t.busbw_fraction = 1.0;  // "none" given a bandwidth: reached whole
  }
  if (f.has(latency_key)) {
    t.latency_s = f.require_number(latency_key);
    if (!(t.latency_s > 0 && t.latency_s < 1.0))
      throw InputError(f.name(latency_key), json_value_text(f.at(latency_key)), "must be a latency in seconds in (0, 1)");
  }
  return t;
}

Interconnect interconnect_from_json(const nlohmann::json& j, const std::string& where) {
  JsonFields f(j, where);
  Interconnect ic;
  ic.intra_node = tier_from_json(f, "intra_node", "intra_node_bw_bytes_per_s", "intra_node_latency_s");
  ic.inter_node = tier_from_json(f, "inter_node", "inter_node_bw_bytes_per_s", "inter_node_latency_s");
  ic.gpus_per_node = f.require_int("gpus_per_node");
  return ic;
}

nlohmann::json interconnect_to_json(const Interconnect& ic) {
  nlohmann::json j = {{"intra_node", to_string(ic.intra_node.kind)},
                      {"gpus_per_node", ic.gpus_per_node},
                      {"inter_node", to_string(ic.inter_node.kind)}};
  const auto overrides = [&](const LinkTier& t, const std::string& prefix) {
    if (t.bw_bytes_per_s != link_constants(t.kind).bw_bytes_per_s) j[prefix + "_bw_bytes_per_s"] = t.bw_bytes_per_s;
    if (t.latency_s > 0) j[prefix + "_latency_s"] = t.latency_s;
  };
  overrides(ic.intra_node, "intra_node");
  overrides(ic.inter_node, "inter_node");
  return j;
}

OpFit op_fit_from_json(const nlohmann::json& j, const std::string& where) {
  JsonFields f(j, where);
  OpFit o;
  o.model = op_model_from_json(f.at("model"), f.name("model"));
  o.records = f.optional_int("records", false).value_or(0);
  if (f.has("fit")) {
    JsonFields fit(f.at("fit"), f.name("fit"));
    o.fit_median_ape = fit.optional_number("median_ape").value_or(0);
    o.fit_p90_ape = fit.optional_number("p90_ape").value_or(0);
  }
  if (f.has("cross_validation")) {
    JsonFields cv(f.at("cross_validation"), f.name("cross_validation"));
    o.cv_median_ape = cv.optional_number("median_ape").value_or(0);
    o.cv_p90_ape = cv.optional_number("p90_ape").value_or(0);
  }
  if (f.has("range")) {
    const auto& r = f.at("range");
    if (!r.is_object()) throw InputError(f.name("range"), json_value_text(r), "must be an object");
    for (const auto& [key, v] : r.items()) {
      if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number() ||
          !(v[0].get<double>() <= v[1].get<double>()))
        throw InputError(f.name("range") + "." + key, json_value_text(v), "must be [min, max] with min <= max");
      o.range[key] = {v[0].get<double>(), v[1].get<double>()};
    }
  }
  return o;
}

// FP4 matmul rates are listed under these names (the storage dtypes that use them are the dtype
// module's); a profile may carry them before every command prices them.
bool is_fp4_rate_key(const std::string& key) { return key == "nvfp4" || key == "mxfp4"; }

Transfer transfer_from_json(const nlohmann::json& j, const std::string& where) {
  JsonFields f(j, where);
  Transfer t;
  t.from = f.require_string("from");
  if (t.from.empty() || escaped(t.from) != t.from)
    throw InputError(f.name("from"), json_value_text(f.at("from")), "must name a shipped measured profile");
  if (f.has("expected_error")) {
    JsonFields e(f.at("expected_error"), f.name("expected_error"));
    t.expected_median_ape = e.require_number("median_ape");
    t.expected_p90_ape = e.require_number("p90_ape");
    if (!(t.expected_median_ape >= 0 && t.expected_p90_ape >= t.expected_median_ape))
      throw InputError(e.name("p90_ape"), json_value_text(e.at("p90_ape")), "must be at least median_ape (both fractions >= 0)");
    t.expected_how = e.optional_string("how").value_or("");
  }
  return t;
}

nlohmann::json transfer_to_json(const Transfer& t) {
  return {{"from", t.from},
          {"expected_error", {{"median_ape", t.expected_median_ape}, {"p90_ape", t.expected_p90_ape}, {"how", t.expected_how}}}};
}

nlohmann::json op_fit_to_json(const OpFit& o) {
  nlohmann::json range = nlohmann::json::object();
  for (const auto& [k, v] : o.range) range[k] = {v.first, v.second};
  return {{"model", op_model_to_json(o.model)},
          {"records", o.records},
          {"fit", {{"median_ape", o.fit_median_ape}, {"p90_ape", o.fit_p90_ape}}},
          {"cross_validation", {{"method", "leave-one-out"}, {"median_ape", o.cv_median_ape}, {"p90_ape", o.cv_p90_ape}}},
          {"range", range}};
}

// The device's ceilings (`spec`): memory, bandwidths, links and peak FLOP/s per dtype.
SpecCeilings spec_from_json(const JsonFields& f) {
  JsonFields spec(f.at("spec"), f.name("spec"));
  SpecCeilings c;
  c.memory_bytes = spec.require_int("memory_bytes");
  c.mem_bw_bytes_per_s = rate(spec, "mem_bw_bytes_per_s");
  c.interconnect_bw_bytes_per_s = spec.optional_number("interconnect_bw_bytes_per_s").value_or(0);
  if (c.interconnect_bw_bytes_per_s != 0 && c.interconnect_bw_bytes_per_s < kMinRate)
    throw InputError(spec.name("interconnect_bw_bytes_per_s"), json_value_text(spec.at("interconnect_bw_bytes_per_s")),
                     "must be 0 (none) or at least 1e6 per second");
  c.compute_units = spec.optional_int("compute_units").value_or(0);
  c.l2_bytes = spec.optional_int("l2_bytes").value_or(0);
  if (c.l2_bytes < 0) throw InputError(spec.name("l2_bytes"), json_value_text(spec.at("l2_bytes")), "must be 0 (unknown) or more");
  c.interconnect_declared = spec.has("interconnect");
  c.interconnect = c.interconnect_declared
                       ? interconnect_from_json(spec.at("interconnect"), spec.name("interconnect"))
                       : interconnect_from_bandwidth(c.interconnect_bw_bytes_per_s);
  const auto& peaks = spec.at("peak_flop_per_s");
  if (!peaks.is_object() || peaks.empty())
    throw InputError(spec.name("peak_flop_per_s"), json_value_text(peaks), "must map dtypes to FLOP/s");
  for (const auto& [dtype, v] : peaks.items()) {
    if (!is_fp4_rate_key(dtype)) parse_dtype(dtype, spec.name("peak_flop_per_s") + "." + dtype);
    if (!v.is_number() || !(v.get<double>() >= kMinRate))
      throw InputError(spec.name("peak_flop_per_s") + "." + dtype, json_value_text(v), "must be a number of at least 1e6 FLOP/s");
    c.peak_flop_per_s[dtype] = v.get<double>();
  }
  return c;
}

// "fits" holds each calibrated op class's model; "ops" lists the classes (it must match).
std::map<std::string, OpFit> fits_from_json(const JsonFields& f) {
  std::map<std::string, OpFit> ops;
  if (f.has("fits")) {
    const auto& fits = f.at("fits");
    if (!fits.is_object()) throw InputError(f.name("fits"), json_value_text(fits), "must be an object");
    for (const auto& [cls, v] : fits.items()) {
      if (!is_op_class(cls))
        throw InputError(f.name("fits") + "." + cls, "{...}",
                         "unknown op class (expected gemm, attention/prefill, attention/decode, attention/decode/mla, ...)");
      ops[cls] = op_fit_from_json(v, f.name("fits") + "." + cls);
    }
  }
  if (f.has("ops")) {
    const auto& listed = f.at("ops");
    if (!listed.is_array()) throw InputError(f.name("ops"), json_value_text(listed), "must be a list of op classes");
    for (const auto& cls : listed)
      if (!cls.is_string() || ops.count(cls.get<std::string>()) == 0)
        throw InputError(f.name("ops"), json_value_text(cls), "lists an op class with no entry in fits");
    if (listed.size() != ops.size())
      throw InputError(f.name("ops"), json_value_text(listed), "must list every op class in fits");
  }
  return ops;
}

}  // namespace

Profile profile_from_json(const nlohmann::json& j, const std::string& where) {
  JsonFields f(j, where);
  Profile p;
  p.name = f.require_string("name");
  if (p.name.empty() || escaped(p.name) != p.name)  // it heads tables and reports: one printable line
    throw InputError(f.name("name"), json_value_text(f.at("name")), "must be one line of printable text");
  p.device = f.require_string("device");
  if (p.device.empty() || escaped(p.device) != p.device)  // headings and the profiles list show it
    throw InputError(f.name("device"), json_value_text(f.at("device")), "must be one line of printable text");
  p.kind = f.optional_string("kind").value_or("gpu");
  if (p.kind != "gpu" && p.kind != "cpu")
    throw InputError(f.name("kind"), "\"" + p.kind + "\"", "must be \"gpu\" or \"cpu\"");
  p.source = f.require_string("source");
  if (p.source != "datasheet" && p.source != "measured")
    throw InputError(f.name("source"), "\"" + p.source + "\"", "must be \"datasheet\" or \"measured\"");
  if (f.has("provenance")) p.provenance = f.at("provenance");

  p.spec = spec_from_json(f);

  if (f.has("kernels")) {
    JsonFields k(f.at("kernels"), f.name("kernels"));
    p.kernels.head_dims = int_list(k, "head_dims");
    p.kernels.group_sizes = int_list(k, "group_sizes");
    p.kernels.mla = k.optional_bool("mla", true);
    p.kernels.source = k.optional_string("source").value_or("");
  }
  p.ops = fits_from_json(f);
  if (p.source == "measured" && p.ops.empty())
    throw InputError(f.name("fits"), "{}", "a measured profile must hold at least one calibrated op class");
  if (f.has("validation")) {
    const auto& v = f.at("validation");
    if (!v.is_array()) throw InputError(f.name("validation"), json_value_text(v), "must be a list");
    for (std::size_t i = 0; i < v.size(); ++i) {
      JsonFields e(v[i], f.name("validation") + "[" + std::to_string(i) + "]");
      p.validation.push_back({e.require_int("records"), e.require_number("median_ape"), e.require_number("p90_ape"),
                              e.optional_string("what").value_or("")});
    }
  }
  if (f.has("measured")) p.measured = f.at("measured");
  if (f.has("transfer")) {
    p.transfer = transfer_from_json(f.at("transfer"), f.name("transfer"));
    if (p.source != "datasheet")
      throw InputError(f.name("source"), "\"" + p.source + "\"", "a profile with transfer must have source \"datasheet\"");
  }
  if (f.has("kernel_classes")) {
    const auto& kc = f.at("kernel_classes");
    if (!kc.is_object()) throw InputError(f.name("kernel_classes"), json_value_text(kc), "must map op classes to kernel classes");
    if (p.kind != "gpu" && !kc.empty())
      throw InputError(f.name("kernel_classes"), json_value_text(kc), "kernel classes price GPU kernels: a CPU profile has none");
    for (const auto& [cls, v] : kc.items()) {
      const std::string where = f.name("kernel_classes") + "." + cls;
      const KernelClass* k = v.is_string() ? find_kernel_class(v.get<std::string>()) : nullptr;
      if (!k) throw InputError(where, json_value_text(v), "unknown kernel class (expected \"flashmla\")");
      if (k->op_class != cls)
        throw InputError(where, json_value_text(v), "kernel class " + k->name + " prices " + k->op_class + ", not " + cls);
      p.kernel_classes[cls] = k->name;
    }
  } else if (p.kind == "gpu") {
    for (const auto& [cls, name] : default_gpu_kernel_classes()) p.kernel_classes[cls] = name;
  }
  if (f.has("cpu_kernel_facts")) p.cpu_kernel_facts = cpu_kernel_facts_from_json(f.at("cpu_kernel_facts"), f.name("cpu_kernel_facts"));
  if (f.has("machine_probe")) p.machine_probe = machine_probe_from_json(f.at("machine_probe"), f.name("machine_probe"));
  return p;
}

nlohmann::json profile_to_json(const Profile& p) {
  nlohmann::json j;
  j["schema_version"] = kProfileSchemaVersion;
  j["name"] = p.name;
  j["device"] = p.device;
  j["kind"] = p.kind;
  j["source"] = p.source;
  j["provenance"] = p.provenance;
  nlohmann::json peaks = nlohmann::json::object();
  for (const auto& [k, v] : p.spec.peak_flop_per_s) peaks[k] = v;
  j["spec"] = {{"memory_bytes", p.spec.memory_bytes},
               {"mem_bw_bytes_per_s", p.spec.mem_bw_bytes_per_s},
               {"peak_flop_per_s", peaks},
               {"interconnect_bw_bytes_per_s", p.spec.interconnect_bw_bytes_per_s},
               {"compute_units", p.spec.compute_units}};
  if (p.spec.l2_bytes > 0) j["spec"]["l2_bytes"] = p.spec.l2_bytes;
  if (p.spec.interconnect_declared) j["spec"]["interconnect"] = interconnect_to_json(p.spec.interconnect);
  j["kernels"] = {{"head_dims", p.kernels.head_dims},
                  {"group_sizes", p.kernels.group_sizes},
                  {"mla", p.kernels.mla},
                  {"source", p.kernels.source}};
  nlohmann::json ops = nlohmann::json::array();
  nlohmann::json fits = nlohmann::json::object();
  for (const auto& [cls, o] : p.ops) {
    ops.push_back(cls);
    fits[cls] = op_fit_to_json(o);
  }
  j["ops"] = ops;
  j["fits"] = fits;
  nlohmann::json val = nlohmann::json::array();
  for (const auto& v : p.validation)
    val.push_back({{"records", v.records}, {"median_ape", v.median_ape}, {"p90_ape", v.p90_ape}, {"what", v.what}});
  j["validation"] = val;
  j["measured"] = p.measured;
  if (p.transfer) j["transfer"] = transfer_to_json(*p.transfer);
  nlohmann::json classes = nlohmann::json::object();
  for (const auto& [cls, name] : p.kernel_classes) classes[cls] = name;
  if (p.kind == "gpu") j["kernel_classes"] = classes;
  if (p.cpu_kernel_facts) j["cpu_kernel_facts"] = cpu_kernel_facts_to_json(*p.cpu_kernel_facts);
  if (p.machine_probe) j["machine_probe"] = machine_probe_to_json(*p.machine_probe);
  return j;
}

Profile load_profile_file(const std::string& path) {
  return profile_from_json(parse_json(read_file(path, "--profile"), path), path);
}

}  // namespace mhacfg
