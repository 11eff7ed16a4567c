// Time predictions from a device profile: per op (attention, GEMM, attention block) and per model
// (prefill, decode step). Calibrated op classes use their fitted model; the rest fall back to the
// datasheet roofline and say so. Predictions outside a class's calibrated range are flagged.
#pragma once

#include <string>
#include <vector>

#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/profile.hpp"
#include "mhacfg/costmodel/records.hpp"

namespace mhacfg {

// The time model's inputs whose calibrated [min, max] an op class records (FLOPs, bytes, parallel
// units, head_dim); a prediction whose inputs fall outside is flagged extrapolated.
using RangePoint = std::vector<std::pair<std::string, double>>;
RangePoint range_point(const OpFeatures& f);

struct Prediction {
  double time_ms = 0;
  Basis basis;                // measured or transferred fit, or the roofline (naming its op class)
  bool extrapolated = false;  // outside the calibrated range of its op class
  double launches = 0;        // kernels launched (1 per op; a sum over a layer or a model)
};

class Predictor {
 public:
  explicit Predictor(const Profile& profile);
  const Profile& profile() const { return profile_; }
  // The bytes that compete for the cache between one op's calls when ops run in sequence (a block,
  // a layer, a model): a warm-cache (CPU) profile's hit rate is taken at the larger of this and the
  // op's own bytes. 0 (the default): each op alone, as it was measured.
  Predictor with_working_set(double bytes) const;

  Prediction attention(const AttentionShape& s, Phase phase, DType dtype) const;
  Prediction gemm(const GemmShape& g, DType dtype) const;
  // Linear attention's core (op class linear_attention/prefill or /decode): its fit where the profile
  // calibrated the class, else the roofline of its FLOPs and bytes. `dtype`: the state's.
  Prediction linear_attention(const LinearAttentionShape& s, Phase phase, DType dtype) const;
  // A sparse model's lightning indexer (op class indexer/prefill or /decode): a profile's fit where it has
  // one (mhacfg's CPU kernel measures it; no CUDA kernel yet), else the roofline of its FLOPs at the fp8
  // peak (the engines' indexer kernels run in fp8) and its bytes.
  Prediction indexer(const IndexerShape& s, Phase phase) const;
  // Any op of a class with these features (the op types' op_class() and features()).
  Prediction op(const OpClass& cls, const OpFeatures& f, DType dtype) const;
  // attention_block: QKV GEMM + attention + O GEMM, composed from the op predictions.
  Prediction record(const MeasurementRecord& r) const;

 private:
  Prediction predict(const std::string& op_class, const OpFeatures& f, const RangePoint& point, DType dtype) const;
  // With `fit` (nullptr: the roofline) for the class `op_class` names.
  Prediction predict(const std::string& op_class, const OpFit* fit, const OpFeatures& f, const RangePoint& point,
                     DType dtype) const;
  const Profile& profile_;
  double working_set_ = 0;
};


// Predicted times of a whole model under a workload, per GPU under tensor parallelism.
struct ModelTimes {
  // Prefill of `batch` sequences of `prompt_len` tokens.
  double prefill_attention_ms = 0;  // attention core + Q/K/V/O projections, all layers
  double prefill_ms = 0;            // everything: + FFN, LM head, TP all-reduces
  // One decode step of `batch` sequences at KV length `context`.
  double decode_attention_core_ms = 0;
  double decode_linear_core_ms = 0;   // of which linear attention's cores (a hybrid model's), all layers
  double prefill_linear_core_ms = 0;  // linear attention's cores in the prefill (part of prefill_attention_ms)
  double decode_indexer_ms = 0;       // of decode_attention_core_ms: a sparse model's indexers, all layers
  double prefill_indexer_ms = 0;      // the indexers in the prefill (part of prefill_attention_ms)
  double decode_projections_ms = 0;
  double decode_attention_ms = 0;   // core + projections
  double decode_ffn_ms = 0;
  double decode_lm_head_ms = 0;
  double decode_comm_ms = 0;        // TP all-reduces (comm.hpp: NCCL-style latency + bus bandwidth per tier)
  double decode_step_ms = 0;
  double tokens_per_s = 0;          // batch / decode step
  double prefill_launches = 0;      // kernels (and collectives) one prefill launches, all layers
  double decode_launches = 0;       // the same for one decode step
  bool extrapolated = false;        // some op lay outside its calibrated range
  // The worst basis of its ops; roofline_ops names the op classes the profile has no fit of (linear
  // attention's core and a sparse model's indexer: only CPU profiles measure them, no CUDA kernel yet).
  Basis basis;
};

// What the GEMM rates of the workload's weight dtypes on `profile` rest on, one sentence per dtype
// that is not its own fit or its own datasheet peak (empty: nothing to say). The text
// output's notes and JSON's predicted.dtype_notes.
std::vector<std::string> gemm_dtype_notes(const Profile& profile, const Workload& w);

// What the GEMM rates of the workload's weight dtypes on `profile` rest on, one sentence per dtype
// that is not its own fit or its own datasheet peak (empty: nothing to say). The text
// output's notes and JSON's predicted.dtype_notes.
std::vector<std::string> gemm_dtype_notes(const Profile& profile, const Workload& w);

// basis_text of both times' combined basis (a candidate's at its batch and for one sequence, or one
// model's): "measured, expected error ~5 % median, 13 % p90", "transferred from h200-sxm-cudnn, ...",
// "roofline", with "; roofline for indexer/decode" where some op classes fell back and "; gemm/fp8
// from the 16-bit GEMM fit" where a narrow dtype's rate was transferred.
std::string time_basis(const ModelTimes& a, const ModelTimes& b);
inline std::string time_basis(const ModelTimes& t) { return time_basis(t, t); }
inline Basis time_basis_of(const ModelTimes& a, const ModelTimes& b) { return combine(a.basis, b.basis); }

ModelTimes predict_model(const ModelSpec& m, const Workload& w, const Predictor& p);

}  // namespace mhacfg
