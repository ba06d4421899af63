#pragma once
// The memory layout the heads' channels-last passes take (instance_norm_silu_channels_last.h,
// pointwise_convolution.h, oneDNN's deconvolutions: NHWC).

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// Whether t is laid out NHWC in memory and not also NCHW (as a 1x1 picture or a single channel is).
inline bool isChannelsLastOnly(const at::Tensor& t) {
  return !t.is_contiguous() && t.is_contiguous(at::MemoryFormat::ChannelsLast);
}

}  // namespace sapiens::detail
