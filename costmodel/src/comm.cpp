#include "mhacfg/costmodel/comm.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {

// Line rates are per GPU and per direction; the achievable fractions are what NCCL's bus bandwidth
// reaches of them. Sources:
//  [nccl-topo]  NVIDIA/nccl src/graph/topo.h (commit 5067397c): the per-link bandwidths NCCL's topology
//               search plans with: SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 GB/s
//               per NVLink, PCI_BW 12.0 GB/s for a PCIe Gen3 x16 path.
//  [nccl-212]   github.com/NVIDIA/nccl-tests/issues/212, sjeaugey (NCCL maintainer): H100 NVLink line rate
//               450 GB/s, "effective NVLink bandwidth of 370GB/s" as ring busbw; NVLink SHARP all-reduce
//               on 8 GPUs "a peak busBw of ~480GB/s".
//  [a100-nvl]   nvidia.com/de-de/data-center/nvlink: an A100 has 12 third-generation NVLinks, 600 GB/s in
//               all (both directions): 300 GB/s and 25 GB/s per link per direction.
//  [h200-mlperf] MLCommons inference v4.1, NVIDIA H200-SXM-141GBx8 system description: "18x 4th Gen
//               NVLink, 900GB/s" (both directions): 450 GB/s, 25 GB/s per link per direction.
//  [b200-vultr] docs.vultr.com HGX B200 hardware overview: NVLink 5 / NVSwitch, 1.8 TB/s bidirectional per
//               GPU, NV18 between every pair: 900 GB/s, 50 GB/s per link per direction.
//  [pcie]       glennklockwood.com/garden/processors/A100: "32+32 GB/s PCIe Gen4"; H100 SXM PCIe Gen5
//               128 GB/s both directions (scaleway docs-content pull 5834): 32 and 64 GB/s per direction.
//  [amd-xgmi]   rocm.blogs.amd.com "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct
//               MI300X" (2025-03-02): seven xGMI peers, 64 GB/s per link, ~48 GB/s usable (75 %).
//  [cx7]        docs.nvidia.com/networking ConnectX-7 VPI introduction: NDR 400 Gb/s and 400GbE per port;
//               DGX H100 user guide, network modules table: one ConnectX-7 port per GPU.
//  [xdr]        alpha-one-index.github.io ai-infra-index networking page: XDR 800G (ConnectX-8), HDR 200G.
//  [nccl-119]   github.com/NVIDIA/nccl-tests/issues/119: 3 nodes of 8 A100 with four 200 Gb/s HDR NICs
//               each (100 GB/s per node): all-reduce busbw peaks at ~96 GB/s, 0.96 of the NICs' rate.
constexpr double kGB = 1e9;
const LinkConstants kNone{0, 0, LinkClass::nvlink, 0};
const LinkConstants kNvlink3{300 * kGB, 20.0 / 25.0, LinkClass::nvlink, 0};                  // [a100-nvl] [nccl-topo]
const LinkConstants kNvlink4{450 * kGB, 20.6 / 25.0, LinkClass::nvlink, 480.0 / (18 * 20.6)};  // [h200-mlperf] [nccl-topo] [nccl-212]
const LinkConstants kNvlink5{900 * kGB, 40.1 / 50.0, LinkClass::nvlink, 0};                  // [b200-vultr] [nccl-topo]
const LinkConstants kPcie4{32 * kGB, 12.0 / 16.0, LinkClass::pci, 0};                        // [pcie] [nccl-topo]
const LinkConstants kPcie5{64 * kGB, 12.0 / 16.0, LinkClass::pci, 0};                        // [pcie] [nccl-topo]
// RCCL's latencies are not measured here: xGMI steps take NCCL's NVLink latencies.
const LinkConstants kXgmi{7 * 64 * kGB, 48.0 / 64.0, LinkClass::nvlink, 0};                  // [amd-xgmi]
const LinkConstants kIbHdr{25 * kGB, 0.96, LinkClass::net, 0};                               // [nccl-119]
const LinkConstants kIbNdr{50 * kGB, 0.96, LinkClass::net, 0};                               // [cx7], fraction [nccl-119]
const LinkConstants kIbXdr{100 * kGB, 0.96, LinkClass::net, 0};                              // [xdr], fraction [nccl-119]
const LinkConstants kRoce400{50 * kGB, 0.96, LinkClass::net, 0};                             // [cx7], fraction [nccl-119]

struct KindName {
  LinkKind kind;
  const char* name;
  const LinkConstants* constants;
};
const std::array<KindName, 12> kKinds = {{
    {LinkKind::none, "none", &kNone},
    {LinkKind::custom, "custom", &kNone},
    {LinkKind::nvlink3, "nvlink3", &kNvlink3},
    {LinkKind::nvlink4, "nvlink4", &kNvlink4},
    {LinkKind::nvlink5, "nvlink5", &kNvlink5},
    {LinkKind::pcie4, "pcie4", &kPcie4},
    {LinkKind::pcie5, "pcie5", &kPcie5},
    {LinkKind::infinity_fabric, "infinity-fabric", &kXgmi},
    {LinkKind::ib_hdr, "ib-hdr", &kIbHdr},
    {LinkKind::ib_ndr, "ib-ndr", &kIbNdr},
    {LinkKind::ib_xdr, "ib-xdr", &kIbXdr},
    {LinkKind::roce_400, "roce-400", &kRoce400},
}};

// NCCL's tuner constants (NVIDIA/nccl src/graph/tuning.cc, commit 5067397c, ncclTunerConstantsDefaults),
// in microseconds, per protocol LL, LL128, Simple: the base latency of a ring or tree launch, and the
// latency of each step over a link class.
enum Proto { kLL = 0, kLL128 = 1, kSimple = 2 };
constexpr int kProtos = 3;
constexpr double kRingBaseUs[kProtos] = {6.6, 14.0, 8.4};
constexpr double kTreeBaseUs[kProtos] = {6.8, 14.0, 8.4};
constexpr double kRingStepUs[3][kProtos] = {{0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}};   // NVLink, PCI, NET
constexpr double kTreeStepUs[3][kProtos] = {{0.6, 1.25, 4.0}, {1.0, 1.9, 4.0}, {5.0, 8.5, 14.0}};  // NVLink, PCI, NET
// An NVLink SHARP all-reduce: no base latency, 25 us on the NVSwitch (Simple only).
constexpr double kNvlsUs = 25.0;
// Inter-node rings pay the network's post overhead on every step (1 us on x86 Intel hosts), x3 for Simple.
constexpr double kNetOverheadUs = 1.0;
// Bandwidth each protocol reaches of the bus bandwidth: LL carries 4 flag bytes per 8 (0.5), LL128 120
// of 128 bytes (0.92 in the tuner); the tree all-reduce 0.92 of it, LL on a tree 1/3.8 of that.
constexpr double kRingProtoBw[kProtos] = {0.5, 0.92, 1.0};
constexpr double kTreeProtoBw[kProtos] = {0.92 / 3.8, 0.92 * 120.0 / 128.0, 0.92};

double step_us(const LinkTier& t, const double (&table)[3][kProtos], int p) {
  if (t.latency_s > 0) return t.latency_s * 1e6;
  return table[static_cast<int>(t.latency_class)][p];
}

std::int64_t ceil_log2(std::int64_t n) {
  std::int64_t k = 0;
  while ((std::int64_t{1} << k) < n) ++k;
  return k;
}

// The ranks of one collective laid out: n GPUs, `nodes` nodes, `per_node` GPUs in each.
struct Layout {
  std::int64_t n = 1, nodes = 1, per_node = 1;
};

// A ring through every rank: NCCL's ring latency (each step over NVLink/PCIe, the node-crossing
// steps over the network) and the slower of the intra-node bus and the node's network links.
double ring_us(const Interconnect& ic, Collective c, const Layout& l, double bytes, int p) {
  const bool ar = c == Collective::all_reduce;
  const double steps = double(ar ? 2 * (l.n - 1) : l.n - 1);
  const double inter_steps = l.nodes == 1 ? 0.0 : double(ar ? 2 * (l.nodes - 1) : l.nodes - 1);
  double intra_step = step_us(ic.intra_node, kRingStepUs, p);
  double busbw = ic.intra_node.busbw_bytes_per_s();
  double inter_step = 0;
  if (l.nodes > 1) {
    intra_step = std::max(intra_step, kNetOverheadUs * (p == kSimple ? 3 : 1));
    // One GPU per node: no intra-node steps to hide behind, the tree's network latency.
    inter_step = step_us(ic.inter_node, l.per_node == 1 ? kTreeStepUs : kRingStepUs, p);
    const double node_net = double(l.per_node) * ic.inter_node.busbw_bytes_per_s();
    busbw = l.per_node == 1 ? node_net : std::min(busbw, node_net);
  }
  const double lat = kRingBaseUs[p] + (steps - inter_steps) * intra_step + inter_steps * inter_step;
  return lat + bytes * busbw_factor(c, l.n) / (busbw * kRingProtoBw[p]) * 1e6;
}

// Across nodes, the hierarchical all-reduce NCCL runs as its tree on two or more nodes: reduce-scatter
// inside each node, all-reduce of each GPU's 1/per_node share across nodes, all-gather inside the node;
// NCCL's tree latency.
double tree_us(const Interconnect& ic, const Layout& l, double bytes, int p) {
  const double g = double(l.per_node), N = double(l.nodes);
  const double lat = kTreeBaseUs[p] + 2.0 * ((g - 1) * step_us(ic.intra_node, kTreeStepUs, p) +
                                            double(ceil_log2(l.nodes)) * step_us(ic.inter_node, kTreeStepUs, p));
  double s = 2.0 * (N - 1) / N / g / ic.inter_node.busbw_bytes_per_s();
  if (l.per_node > 1) s += 2.0 * (g - 1) / g / ic.intra_node.busbw_bytes_per_s();
  return lat + bytes * s / kTreeProtoBw[p] * 1e6;
}

// All-to-all: every rank sends 1/n of its buffer to each other rank at once, the shares for other
// nodes over its own network link; one launch and one step of the slowest link crossed.
double all_to_all_us(const Interconnect& ic, const Layout& l, double bytes, int p) {
  const double n = double(l.n), g = double(l.per_node);
  const LinkTier& slowest = l.nodes > 1 ? ic.inter_node : ic.intra_node;
  const double lat = kRingBaseUs[p] + step_us(slowest, kRingStepUs, p);
  double s = l.per_node > 1 ? (g - 1) / n / ic.intra_node.busbw_bytes_per_s() : 0.0;
  if (l.nodes > 1) s = std::max(s, (n - g) / n / ic.inter_node.busbw_bytes_per_s());
  return lat + bytes * s / kRingProtoBw[p] * 1e6;
}

}  // namespace

std::string to_string(LinkKind k) {
  for (const auto& e : kKinds)
    if (e.kind == k) return e.name;
  return "none";
}

std::optional<LinkKind> parse_link_kind(const std::string& name) {
  for (const auto& e : kKinds)
    if (name == e.name && e.kind != LinkKind::custom) return e.kind;
  return std::nullopt;
}

const LinkConstants& link_constants(LinkKind k) {
  for (const auto& e : kKinds)
    if (e.kind == k) return *e.constants;
  return kNone;
}

LinkTier link_tier(LinkKind k) {
  const LinkConstants& c = link_constants(k);
  LinkTier t;
  t.kind = k;
  t.bw_bytes_per_s = c.bw_bytes_per_s;
  t.busbw_fraction = c.busbw_fraction;
  t.latency_class = c.latency_class;
  return t;
}

Interconnect interconnect_from_kinds(LinkKind intra, std::int64_t gpus_per_node, LinkKind inter) {
  Interconnect ic;
  ic.intra_node = link_tier(intra);
  ic.inter_node = link_tier(inter);
  ic.gpus_per_node = gpus_per_node;
  return ic;
}

Interconnect interconnect_from_bandwidth(double bw_bytes_per_s) {
  Interconnect ic;
  if (bw_bytes_per_s <= 0) return ic;
  ic.intra_node.kind = LinkKind::custom;
  ic.intra_node.bw_bytes_per_s = bw_bytes_per_s;
  ic.intra_node.busbw_fraction = 1.0;
  ic.intra_node.latency_class = bw_bytes_per_s > kPcie5.bw_bytes_per_s ? LinkClass::nvlink : LinkClass::pci;
  return ic;
}

std::string to_string(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_to_all: return "all_to_all";
  }
  return "all_reduce";
}

double busbw_factor(Collective c, std::int64_t ranks) {
  if (ranks <= 1) return 0.0;
  const double n = double(ranks);
  return c == Collective::all_reduce ? 2.0 * (n - 1) / n : (n - 1) / n;
}

std::int64_t nodes_spanned(const Interconnect& ic, const Workload& w, std::int64_t ranks) {
  if (ranks <= 1) return 1;
  // GPUs per node the replica uses: its tp x pp GPUs spread over Workload.nodes, else the profile's.
  std::int64_t per_node = ic.gpus_per_node > 0 ? ic.gpus_per_node : ranks;
  if (w.nodes > 0) {
    const std::int64_t replica = std::max<std::int64_t>(1, w.tp) * std::max<std::int64_t>(1, w.pp);
    per_node = (replica + w.nodes - 1) / w.nodes;
    if (ic.gpus_per_node > 0 && per_node > ic.gpus_per_node)
      throw InputError("nodes", std::to_string(w.nodes),
                       std::to_string(replica) + " GPUs (tp x pp) do not fit that many nodes of " +
                           std::to_string(ic.gpus_per_node) + " GPUs");
  }
  const std::int64_t nodes = (ranks + per_node - 1) / per_node;
  if (nodes > 1 && ic.inter_node.busbw_bytes_per_s() <= 0)
    throw InputError("spec.interconnect.inter_node", "\"" + to_string(ic.inter_node.kind) + "\"",
                     std::to_string(ranks) + " GPUs span " + std::to_string(nodes) + " nodes of " +
                         std::to_string(per_node) + " GPUs, and the profile names no link between nodes");
  return nodes;
}

DType activation_dtype(const Workload& w) {
  if (w.weight_dtype == DType::fp16 || w.weight_dtype == DType::fp32) return w.weight_dtype;
  return DType::bf16;
}

double collective_ms(const Interconnect& ic, const Workload& w, Collective c, std::int64_t ranks, double bytes) {
  if (ranks <= 1 || !(bytes > 0)) return 0.0;
  // A profile without links (a CPU's, a datasheet without interconnect) cannot price a collective:
  // pricing it at 0 would make every split look free.
  if (ic.intra_node.busbw_bytes_per_s() <= 0)
    throw InputError("spec.interconnect.intra_node", "\"" + to_string(ic.intra_node.kind) + "\"",
                     std::to_string(ranks) + " devices exchange data (--tp, --ep, --pp), and the profile names no link "
                     "between them (spec.interconnect or interconnect_bw_bytes_per_s)");
  Layout l;
  l.n = ranks;
  l.nodes = nodes_spanned(ic, w, ranks);
  l.per_node = (ranks + l.nodes - 1) / l.nodes;
  // NCCL prices every algorithm and protocol it can run and launches the fastest (enqueue.cc,
  // ncclTopoGetAlgoTime: latency + bytes / bandwidth); so does this model.
  double best_us = std::numeric_limits<double>::infinity();
  for (int p = 0; p < kProtos; ++p) {
    if (c == Collective::all_to_all) {
      best_us = std::min(best_us, all_to_all_us(ic, l, bytes, p));
      continue;
    }
    best_us = std::min(best_us, ring_us(ic, c, l, bytes, p));
    if (c == Collective::all_reduce && l.nodes > 1) best_us = std::min(best_us, tree_us(ic, l, bytes, p));
  }
  const double nvls = link_constants(ic.intra_node.kind).nvls_busbw_factor;
  if (c == Collective::all_reduce && l.nodes == 1 && nvls > 0)
    best_us = std::min(best_us, kNvlsUs + bytes * busbw_factor(c, l.n) / (nvls * ic.intra_node.busbw_bytes_per_s()) * 1e6);
  return best_us * 1e-3;
}

}  // namespace mhacfg
