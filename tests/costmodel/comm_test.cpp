// Collective communication times: nccl-tests' busbw factors, latency-bound small messages and
// bandwidth-bound large ones per tier, the tier chosen from ranks and nodes, the profile's
// spec.interconnect, and the model against published nccl-tests measurements kept out of its constants.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/comm.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/profile.hpp"

using namespace mhacfg;

namespace {
const Interconnect kH100 = interconnect_from_kinds(LinkKind::nvlink4, 8, LinkKind::ib_ndr);
}  // namespace

TEST_CASE("nccl-tests bus-bandwidth factors", "[comm]") {
  CHECK(busbw_factor(Collective::all_reduce, 8) == Approx(2.0 * 7 / 8));
  CHECK(busbw_factor(Collective::all_gather, 8) == Approx(7.0 / 8));
  CHECK(busbw_factor(Collective::reduce_scatter, 16) == Approx(15.0 / 16));
  CHECK(busbw_factor(Collective::all_to_all, 4) == Approx(3.0 / 4));
  CHECK(busbw_factor(Collective::all_reduce, 1) == 0.0);
}

TEST_CASE("small messages pay NCCL's LL ring latency, large ones the bus bandwidth", "[comm]") {
  const Workload w;
  // 8 bytes over 8 NVLink 4 GPUs: LL ring, 6.6 us launch + 14 steps of 0.6 us.
  CHECK(all_reduce_ms(kH100, w, 8, 8) == Approx((6.6 + 14 * 0.6) * 1e-3).epsilon(1e-3));
  // 8 GiB all-gathered: Simple ring at 20.6 / 25 of 450 GB/s, 7/8 of the buffer through each GPU.
  const double bytes = 8.0 * (1 << 30);
  const double busbw = 450e9 * 20.6 / 25.0;
  CHECK(all_gather_ms(kH100, w, 8, bytes) == Approx((8.4 + 7 * 3.4) * 1e-3 + bytes * 7 / 8 / busbw * 1e3).epsilon(1e-9));
  CHECK(reduce_scatter_ms(kH100, w, 8, bytes) == Approx(all_gather_ms(kH100, w, 8, bytes)));
  // A large all-reduce inside the node takes NVLink SHARP: 480 GB/s busbw.
  CHECK(all_reduce_ms(kH100, w, 8, bytes) == Approx(25e-3 + bytes * 2 * 7 / 8 / 480e9 * 1e3).epsilon(1e-6));
  // Time grows with the bytes, and one rank, or nothing to send, costs nothing.
  CHECK(all_reduce_ms(kH100, w, 8, 1 << 20) < all_reduce_ms(kH100, w, 8, 1 << 24));
  CHECK(all_reduce_ms(kH100, w, 1, bytes) == 0.0);
  CHECK(all_to_all_ms(kH100, w, 8, 0) == 0.0);
}

TEST_CASE("ranks beyond a node cross the network tier", "[comm]") {
  const Workload w;
  const double decode = 2.0 * 7168 * 8;  // 8 tokens of DeepSeek-V3's d_model in bf16
  const double one_node = all_reduce_ms(kH100, w, 8, decode);
  const double two_nodes = all_reduce_ms(kH100, w, 16, decode);
  CHECK(two_nodes > one_node);
  // Small: NCCL's tree, 6.8 us + 2 x (7 NVLink steps of 0.6 us + 1 network step of 5 us).
  CHECK(all_reduce_ms(kH100, w, 16, 8) == Approx((6.8 + 2 * (7 * 0.6 + 5.0)) * 1e-3).epsilon(1e-3));
  // Large: a ring through all 16 (Simple), its bus bandwidth the lower of NVLink's and the node's
  // 8 x 50 GB/s x 0.96 of NDR; 28 NVLink steps (at least the 3 us network post overhead) and 2 over IB.
  // The hierarchical all-reduce (NCCL's tree) loses here: its intra-node phases alone move as much.
  const double big = 1e9;
  const double ring_ms = (8.4 + 28 * 3.4 + 2 * 14.0) * 1e-3 + big * 2 * 15 / 16 / (450e9 * 20.6 / 25.0) * 1e3;
  CHECK(all_reduce_ms(kH100, w, 16, big) == Approx(ring_ms).epsilon(1e-6));
  CHECK(all_reduce_ms(kH100, w, 16, big) > all_reduce_ms(kH100, w, 8, big));
  // With a quarter of the network (two 200 Gb/s NICs per 8 GPUs) the hierarchical one wins: each GPU
  // sends only its 1/8 share across.
  Interconnect thin = kH100;
  thin.inter_node.bw_bytes_per_s = 12.5e9;
  const double tree_ms = (8.4 + 2 * (7 * 4.0 + 14.0)) * 1e-3 +
                         big * (2.0 * 1 / 2 / 8 / (12.5e9 * 0.96) + 2.0 * 7 / 8 / (450e9 * 20.6 / 25.0)) / 0.92 * 1e3;
  CHECK(all_reduce_ms(thin, w, 16, big) == Approx(tree_ms).epsilon(1e-6));
  // All-to-all across nodes (Simple): the half of the buffer bound for the other node over each GPU's NIC.
  CHECK(all_to_all_ms(kH100, w, 16, big) == Approx((8.4 + 14.0) * 1e-3 + big * 8 / 16 / (50e9 * 0.96) * 1e3).epsilon(1e-6));
  // No network named: 16 GPUs on 8-GPU nodes is an input error.
  const Interconnect alone = interconnect_from_kinds(LinkKind::nvlink4, 8, LinkKind::none);
  CHECK_THROWS_WITH(all_reduce_ms(alone, w, 16, decode),
                    "spec.interconnect.inter_node = \"none\": 16 GPUs span 2 nodes of 8 GPUs, and the profile names no "
                    "link between nodes");
}

TEST_CASE("Workload.nodes spreads tp x pp over nodes, 0 packs them", "[comm]") {
  Workload w;
  w.tp = 8;
  w.pp = 2;
  CHECK(nodes_spanned(kH100, w, 8) == 1);  // auto: a tp group of 8 fits one node
  w.nodes = 4;                             // 16 GPUs over 4 nodes: 4 per node, tp crosses 2 nodes
  CHECK(nodes_spanned(kH100, w, 8) == 2);
  CHECK(all_reduce_ms(kH100, w, 8, 1e6) > all_reduce_ms(kH100, Workload{}, 8, 1e6));
  w.nodes = 1;
  CHECK_THROWS_WITH(nodes_spanned(kH100, w, 8), "nodes = 1: 16 GPUs (tp x pp) do not fit that many nodes of 8 GPUs");
}

TEST_CASE("activations travel in bf16 unless the model runs in fp16 or fp32", "[comm]") {
  Workload w;
  CHECK(activation_dtype(w) == DType::bf16);
  w.weight_dtype = DType::fp8;
  CHECK(activation_dtype(w) == DType::bf16);
  w.weight_dtype = DType::int4;
  CHECK(activation_dtype(w) == DType::bf16);
  w.weight_dtype = DType::fp16;
  CHECK(activation_dtype(w) == DType::fp16);
}

namespace {
nlohmann::json profile_json() {
  return {{"name", "p"},
          {"device", "d"},
          {"source", "datasheet"},
          {"spec",
           {{"memory_bytes", 80000000000},
            {"mem_bw_bytes_per_s", 3.35e12},
            {"peak_flop_per_s", {{"bf16", 989e12}}},
            {"interconnect_bw_bytes_per_s", 450e9},
            {"compute_units", 132}}}};
}
}  // namespace

TEST_CASE("a profile's spec.interconnect: kinds, overrides, and the legacy bandwidth without it", "[comm]") {
  nlohmann::json j = profile_json();
  const Profile legacy = profile_from_json(j, "p.json");
  CHECK_FALSE(legacy.spec.interconnect_declared);
  CHECK(legacy.spec.interconnect.intra_node.kind == LinkKind::custom);
  CHECK(legacy.spec.interconnect.intra_node.busbw_bytes_per_s() == 450e9);
  CHECK(legacy.spec.interconnect.gpus_per_node == 0);
  CHECK(nodes_spanned(legacy.spec.interconnect, Workload{}, 16) == 1);

  j["spec"]["interconnect"] = {{"intra_node", "nvlink4"}, {"gpus_per_node", 8}, {"inter_node", "ib-ndr"},
                               {"inter_node_bw_bytes_per_s", 25e9}, {"intra_node_latency_s", 1e-6}};
  const Profile p = profile_from_json(j, "p.json");
  CHECK(p.spec.interconnect.intra_node.kind == LinkKind::nvlink4);
  CHECK(p.spec.interconnect.intra_node.bw_bytes_per_s == 450e9);
  CHECK(p.spec.interconnect.intra_node.latency_s == 1e-6);
  CHECK(p.spec.interconnect.inter_node.bw_bytes_per_s == 25e9);
  CHECK(p.spec.interconnect.gpus_per_node == 8);
  // The overridden per-step latency: 6.6 us + 14 steps of 1 us.
  CHECK(all_reduce_ms(p.spec.interconnect, Workload{}, 8, 8) == Approx((6.6 + 14 * 1.0) * 1e-3).epsilon(1e-3));
  const Profile again = profile_from_json(profile_to_json(p), "again");
  CHECK(profile_to_json(again)["spec"]["interconnect"] == profile_to_json(p)["spec"]["interconnect"]);

  j["spec"]["interconnect"]["intra_node"] = "nvlink9";
  CHECK_THROWS_AS(profile_from_json(j, "p.json"), InputError);
  CHECK_THROWS_WITH(profile_from_json(j, "p.json"),
                    Catch::StartsWith("p.json: spec: interconnect: intra_node = \"nvlink9\": unknown link kind"));
  j["spec"]["interconnect"]["intra_node"] = "nvlink4";
  j["spec"]["interconnect"]["inter_node_latency_s"] = -1;
  CHECK_THROWS_WITH(profile_from_json(j, "p.json"), Catch::Contains("inter_node_latency_s = -1"));
}

// Published nccl-tests results, none of them a source of the constants (tests/fixtures/nccl-published.jsonl
// names each). Today the model is 11 % off at the median over the 12 rows, 47 % at worst; the bounds keep
// a change that worsens it from passing. The rows it misses most: 2 x 8 H20 with NVLS-tree forced (47 us
// measured against the 25 us of NCCL's default tree latency modelled here), and mid-size messages on
// 8 H100, where NCCL has not yet reached its peak bandwidth (16 MB: 124 us measured, 86 us modelled).
// The 8 GB H100 row sits on NCCL's 480 GB/s NVLS peak, which a maintainer stated (a constant's source).
constexpr double kMedianError = 0.15;
constexpr double kRowError = 0.50;

TEST_CASE("collective times against published nccl-tests measurements", "[comm][published]") {
  std::ifstream in(std::string(MHACFG_FIXTURES_DIR) + "/nccl-published.jsonl");
  REQUIRE(in);
  std::vector<double> errors;
  std::string line;
  while (std::getline(in, line)) {
    const auto r = nlohmann::json::parse(line);
    Interconnect ic = interconnect_from_kinds(*parse_link_kind(r["intra_node"]), r["gpus_per_node"],
                                              *parse_link_kind(r["inter_node"]));
    if (r.contains("inter_node_bw_bytes_per_s")) ic.inter_node.bw_bytes_per_s = r["inter_node_bw_bytes_per_s"];
    const std::int64_t ranks = r["ranks"];
    const double bytes = r["bytes"];
    const double predicted_us = all_reduce_ms(ic, Workload{}, ranks, bytes) * 1e3;
    const double measured_us = r.contains("time_us")
                                   ? double(r["time_us"])
                                   : bytes * busbw_factor(Collective::all_reduce, ranks) / (double(r["busbw_gb_s"]) * 1e9) * 1e6;
    const double error = std::abs(predicted_us - measured_us) / measured_us;
    INFO(r["source"].get<std::string>() << ", " << bytes << " B: predicted " << predicted_us << " us, measured "
                                        << measured_us << " us");
    CHECK(error <= kRowError);
    errors.push_back(error);
  }
  REQUIRE(errors.size() == 12);
  std::sort(errors.begin(), errors.end());
  const double median = (errors[5] + errors[6]) / 2;
  INFO("median error " << median);
  CHECK(median <= kMedianError);
}
