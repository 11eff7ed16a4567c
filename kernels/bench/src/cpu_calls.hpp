// Turns a supported measurement record into a ready-to-time CPU kernel call that owns fresh random
// inputs for the record's shape. Shared by measure_cpu and the mhacfg_kernels_bench executable.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "inputs.hpp"
#include "mhacfg/costmodel/records.hpp"

namespace mhacfg::kernels::detail {

// Empty when a CPU kernel runs the record; otherwise one line naming the field and value.
std::string cpu_call_unsupported_reason(const MeasurementRecord& r);

// Bytes of inputs, outputs and workspaces the call allocates.
std::int64_t cpu_call_bytes(const MeasurementRecord& r);

// Values of the inputs a call of the record takes from an InputArena first (its K/V cache or MLA
// latent, a GEMM's B, an attention block's weights): a run's arena holds the largest of these. Other
// inputs (Q, a GEMM's A, a block's x) come from it too when they still fit; what a call writes (outputs,
// a block's K/V cache, linear attention's states) and the indexer's fp8 inputs are its own.
InputArena::Cursor cpu_call_arena_need(const MeasurementRecord& r);
// The largest of the records' needs: the arena a run of them reserves.
InputArena::Cursor cpu_calls_arena_need(const std::vector<MeasurementRecord>& rs);

// The record must be supported (throws InputError with the reason otherwise). With an arena, the inputs
// the call only reads are views of it where they fit; `arena_bytes` (when given) gets their bytes.
std::function<void()> prepare_cpu_call(const MeasurementRecord& r, int threads, const InputArena* arena = nullptr,
                                       std::int64_t* arena_bytes = nullptr);

}  // namespace mhacfg::kernels::detail
