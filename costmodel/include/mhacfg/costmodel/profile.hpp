// Device profiles: spec ceilings (datasheet or measured), what the device's fast kernels support,
// fitted time-model parameters per op class, and provenance. Stored as JSON with units in keys.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/basis.hpp"
#include "mhacfg/costmodel/comm.hpp"
#include "mhacfg/costmodel/cpu_kernel_facts.hpp"
#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/kernel_class.hpp"
#include "mhacfg/costmodel/machine_probe.hpp"
#include "mhacfg/costmodel/time_model.hpp"

namespace mhacfg {

inline constexpr const char* kProfileSchemaVersion = "1.0";

struct SpecCeilings {
  std::int64_t memory_bytes = 0;
  double mem_bw_bytes_per_s = 0;
  std::map<std::string, double> peak_flop_per_s;  // dense matmul rate by input dtype: bf16, fp16, fp8, fp32,
                                                  // int8, nvfp4, mxfp4
  double interconnect_bw_bytes_per_s = 0;         // per GPU per direction (NVLink, PCIe); 0 = unknown
  std::int64_t compute_units = 0;                 // SMs or cores
  std::int64_t l2_bytes = 0;                      // last-level on-chip cache; 0 = unknown
  // The links collectives cross (spec.interconnect); without that object, one intra-node tier of
  // interconnect_bw_bytes_per_s. interconnect_declared: the profile had the object.
  Interconnect interconnect;
  bool interconnect_declared = false;
};

// A datasheet profile's fits taken from a measured profile and scaled by the two datasheets
// (transfer.hpp), with the error such a transfer was measured to have.
struct Transfer {
  std::string from;               // the measured profile's name
  double expected_median_ape = 0;
  double expected_p90_ape = 0;
  std::string expected_how;       // how those figures were obtained
};

// What the device's fast attention kernels support (the recommender rejects or penalises the rest).
struct KernelSupport {
  std::vector<std::int64_t> head_dims;    // empty: any multiple of 8
  std::vector<std::int64_t> group_sizes;  // empty: any
  bool mla = true;
  std::string source;  // where the list comes from
};

// Calibrated time model of one op class, with its fit quality and calibrated range.
struct OpFit {
  OpModel model;
  std::int64_t records = 0;
  double fit_median_ape = 0;  // on the fitted records
  double fit_p90_ape = 0;
  double cv_median_ape = 0;   // leave-one-out cross-validation
  double cv_p90_ape = 0;
  std::map<std::string, std::pair<double, double>> range;  // feature -> [min, max] seen in the fit
};

struct Validation {
  std::int64_t records = 0;
  double median_ape = 0;
  double p90_ape = 0;
  std::string what;  // e.g. "held-out shapes measured with bench on the same machine"
};

struct Profile {
  std::string name;
  std::string device;
  std::string kind = "gpu";          // gpu or cpu
  std::string source = "datasheet";  // datasheet or measured
  nlohmann::json provenance = nlohmann::json::object();
  SpecCeilings spec;
  KernelSupport kernels;
  std::map<std::string, OpFit> ops;  // by op class: attention/prefill, attention/decode, ...
  std::vector<Validation> validation;
  nlohmann::json measured = nlohmann::json::object();  // measured ceilings and kernel-speed ratios
  // The tiles of the CPU kernels the fits were measured with, as the kernels publish them; absent
  // (every GPU profile, and CPU profiles written before the kernels published them): the defaults.
  std::optional<CpuKernelFacts> cpu_kernel_facts;
  // The reference probe measured with the fits (calibrate --device); absent in datasheet profiles and
  // fits of imported timings. --check-machine compares the machine against it.
  std::optional<MachineProbe> machine_probe;
  // Set on a datasheet profile whose fits come from another profile; its fits are filled in when it
  // is loaded (transfer.hpp), unless the bare roofline was asked for.
  std::optional<Transfer> transfer;
  // Op classes priced by a kernel class (kernel_class.hpp) instead of the fits, by name:
  // {"attention/decode/mla": "flashmla"}. A GPU profile file without "kernel_classes" gets
  // default_gpu_kernel_classes(); "kernel_classes": {} prices every class from the fits.
  std::map<std::string, std::string> kernel_classes;

  CpuKernelFacts cpu_facts() const { return cpu_kernel_facts.value_or(CpuKernelFacts{}); }

  bool calibrated() const { return !ops.empty(); }
  // The kernel class that prices `op_class` on this profile, or nullptr (its fit or the roofline).
  const KernelClass* kernel_class_for(const std::string& op_class) const;
  // What its fitted ops stand on: measured (expected error from its first held-out validation),
  // transferred (the transfer's), or roofline when it has no fits.
  Basis basis() const;
  // The dtype's peak; when it is not listed, the nearest wider one's: fp8's for nvfp4 and mxfp4, then
  // bf16's, fp16's, fp32's (a CPU profile lists fp32 only: its kernels widen bf16 to fp32), then the
  // lowest listed.
  double peak_flop_per_s(DType compute) const;
  // The key of spec.peak_flop_per_s that peak_flop_per_s(compute) reads ("" when none is listed).
  std::string peak_dtype(DType compute) const;
};

// Throws InputError naming `where` and the field.
Profile profile_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json profile_to_json(const Profile& p);
Profile load_profile_file(const std::string& path);

}  // namespace mhacfg
