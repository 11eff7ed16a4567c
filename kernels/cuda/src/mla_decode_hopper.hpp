// The wgmma MLA decode (mla_decode_hopper.cu), called by mla_decode::run for Variant::wgmma. Private.
#pragma once

#include "combine.hpp"
#include "mhacfg/kernels/cuda/mla_decode.hpp"

namespace mhacfg::kernels::cuda::mla_decode::hopper_detail {

constexpr int kHeads = 64;  // query heads per block (one m64 wgmma tile)
constexpr int kTile = 64;   // tokens per TMA stage

// Resident blocks per SM (1: 225 KiB of shared memory).
int blocks_per_sm();
// Launches the split kernel (p validated by mla_decode::run; ws empty when num_splits == 1).
void launch(const Params& p, int num_splits, int tokens_per_split, const detail::SplitWorkspace& ws, Stream stream);
unsigned barrier_timeouts(bool reset);

}  // namespace mhacfg::kernels::cuda::mla_decode::hopper_detail
