// Transferred profiles: a device without its own measurements takes the fitted time models of a
// measured profile, each term scaled by the ratio of the two devices' datasheet figures that bounds
// it (docs/cost-model.md, "Transferred profiles", gives the reasoning term by term).
#pragma once

#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

// `m`, fitted on a device with ceilings `from`, moved to a device with ceilings `to`: FLOP rate by
// the bf16 peak ratio, bandwidth by the memory-bandwidth ratio, per-element rates by the fp32
// (CUDA-core) peak ratio, parallel-unit half-points and slots by the SM ratio, cache capacity by the
// L2 ratio; the fixed cost per call and the kernel's shape terms are kept. Throws InputError when
// either side lacks a figure the scaling needs (bf16 peak, bandwidth, compute units).
OpModel transfer_op_model(const OpModel& m, const SpecCeilings& from, const SpecCeilings& to, const std::string& where);

// `target` (a datasheet profile naming source.name in its transfer) with every fit of `source`
// scaled to its datasheet. The fits' records, errors and ranges stay the source's (they describe the
// fit); the basis is the transfer's.
Profile apply_transfer(Profile target, const Profile& source);

// The bare datasheet roofline of `p`: no fits, no transfer (what --roofline asks for).
Profile as_roofline(Profile p);

}  // namespace mhacfg
