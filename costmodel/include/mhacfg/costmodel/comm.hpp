// Collective communication times: a latency-bandwidth model per link tier (NVLink/NVSwitch, PCIe or
// Infinity Fabric in a node; InfiniBand or RoCE across nodes) for all-reduce, all-gather,
// reduce-scatter and all-to-all, priced the way NCCL's own tuner prices them (docs/cost-model.md,
// "Communication"): per algorithm and protocol a launch latency plus a latency per step, plus the
// bytes over the bus bandwidth; the fastest algorithm and protocol wins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mhacfg/costmodel/dtype.hpp"

namespace mhacfg {

struct Workload;

// Link kinds a profile's spec.interconnect names (intra_node, inter_node).
enum class LinkKind {
  none,             // no link of this tier (a single GPU, or no network between nodes)
  custom,           // a bandwidth only (the legacy interconnect_bw_bytes_per_s)
  nvlink3,          // A100
  nvlink4,          // H100, H200, H20
  nvlink5,          // B200, GB200
  pcie4,
  pcie5,
  infinity_fabric,  // MI300X xGMI
  ib_hdr,
  ib_ndr,
  ib_xdr,
  roce_400,
};
// The profile spelling: "nvlink4", "infinity-fabric", "ib-ndr", ...
std::string to_string(LinkKind k);
// nullopt for a name that is none of them.
std::optional<LinkKind> parse_link_kind(const std::string& name);

// Which of NCCL's latency classes a link's steps pay (its tuner's NVLINK, PCI and NET hardware).
enum class LinkClass { nvlink, pci, net };

// Constants of one link kind: the line rate, the fraction of it NCCL's bus bandwidth reaches, and
// its latency class. Sources in comm.cpp, beside each value.
struct LinkConstants {
  double bw_bytes_per_s = 0;      // per GPU, per direction, line rate
  double busbw_fraction = 0;      // achievable bus bandwidth / line rate
  LinkClass latency_class = LinkClass::nvlink;
  double nvls_busbw_factor = 0;   // NVLink SHARP all-reduce busbw / ring busbw; 0 = no NVLS
};
const LinkConstants& link_constants(LinkKind k);

// One tier as a profile describes it: the kind's constants, with the profile's overrides.
struct LinkTier {
  LinkKind kind = LinkKind::none;
  double bw_bytes_per_s = 0;      // per GPU, per direction (line rate); the kind's unless overridden
  double busbw_fraction = 0;      // the kind's achievable fraction of it
  LinkClass latency_class = LinkClass::nvlink;
  double latency_s = 0;           // per step, every protocol; 0: NCCL's per-protocol step latencies
  double busbw_bytes_per_s() const { return bw_bytes_per_s * busbw_fraction; }
};
// A tier of kind k with the kind's constants.
LinkTier link_tier(LinkKind k);

struct Interconnect {
  LinkTier intra_node;
  LinkTier inter_node;
  std::int64_t gpus_per_node = 0;  // 0: unknown (every rank taken to share one node)
};

// A profile's interconnect from kinds and overrides (the JSON's spec.interconnect).
Interconnect interconnect_from_kinds(LinkKind intra, std::int64_t gpus_per_node, LinkKind inter);
// From the legacy interconnect_bw_bytes_per_s alone (0 = none): one intra-node tier of that line
// rate, reached whole, with NCCL's NVLink step latencies above PCIe 5's 64 GB/s and PCIe's below.
Interconnect interconnect_from_bandwidth(double bw_bytes_per_s);

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all };
std::string to_string(Collective c);

// nccl-tests' bus-bandwidth factor: busbw = algbw x factor; 2 (n - 1) / n for all-reduce,
// (n - 1) / n for all-gather, reduce-scatter and all-to-all.
double busbw_factor(Collective c, std::int64_t ranks);

// The nodes `ranks` GPUs span: Workload.nodes when set, else ceil(ranks / gpus_per_node) (1 when
// gpus_per_node is unknown). InputError when they span nodes with no inter-node link.
std::int64_t nodes_spanned(const Interconnect& ic, const Workload& w, std::int64_t ranks);

// The dtype activations travel in between layers: bf16 unless the workload's weights are fp16 or
// fp32 (an fp8 or int4 model's GEMMs return bf16, so its all-reduces carry bf16).
DType activation_dtype(const Workload& w);

// Milliseconds of one collective over `ranks` GPUs, `bytes` the buffer of one GPU as nccl-tests
// sizes it: the buffer reduced (all-reduce), the gathered output (all-gather), the input
// (reduce-scatter), the send buffer (all-to-all). 0 for one rank, no bytes, or no known link.
double collective_ms(const Interconnect& ic, const Workload& w, Collective c, std::int64_t ranks, double bytes);
inline double all_reduce_ms(const Interconnect& ic, const Workload& w, std::int64_t ranks, double bytes) {
  return collective_ms(ic, w, Collective::all_reduce, ranks, bytes);
}
inline double all_gather_ms(const Interconnect& ic, const Workload& w, std::int64_t ranks, double bytes) {
  return collective_ms(ic, w, Collective::all_gather, ranks, bytes);
}
inline double reduce_scatter_ms(const Interconnect& ic, const Workload& w, std::int64_t ranks, double bytes) {
  return collective_ms(ic, w, Collective::reduce_scatter, ranks, bytes);
}
inline double all_to_all_ms(const Interconnect& ic, const Workload& w, std::int64_t ranks, double bytes) {
  return collective_ms(ic, w, Collective::all_to_all, ranks, bytes);
}

}  // namespace mhacfg
