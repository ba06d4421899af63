#pragma once
// Fused bilinear upsampling + argmax of segmentation logits on the CPU (segLabels' fast path): the class
// of the first maximal upsampled logit, row by row, without materialising the C x H x W upsampled map.

#include <cstddef>
#include <cstdint>

namespace sapiens::detail {

/// How at::upsample_bilinear2d (align_corners = false) rounds. LibTorch 1.13 computes the source index
/// in double and the lambdas in float; 2.x computes both in float. Its CPU kernels are compiled per
/// instruction set: the AVX2 and AVX-512 builds contract `t0 * w0 + t1 * w1` to fma(t0, w0, t1 * w1),
/// the default build does not. Reproducing the same operations gives bit-identical values.
struct BilinearRounding {
  bool doubleIndex = true;  ///< source index computed in double
  bool fmaIndex = false;    ///< scale * (dst + 0.5) - 0.5 as one fused multiply-add
  bool fmaCombine = false;  ///< t0 * w0 + t1 * w1 as fma(t0, w0, t1 * w1)
  bool exact = true;        ///< reproduces ATen bit for bit (else segLabels keeps ATen's own path)
};

/// The rounding of this process's at::upsample_bilinear2d on the CPU, found once (thread-safe) by
/// comparing it with each candidate on small deterministic maps (outputs of more than 128 rows +
/// columns: below that, LibTorch >= 2.1 takes its channels-last kernel, see fusedArgmaxMatchesAten).
/// When none matches exactly, `exact` is false.
const BilinearRounding& atenBilinearRounding();

/// Whether the fused path gives ATen's labels for an upsampling of a `height` x `width` map to
/// `outHeight` x `outWidth`: the rounding probe matched, and ATen takes the kernel the probe measured (not
/// its channels-last one, which it uses for a 1 x 1 map and, from LibTorch 2.1 on, for any output of at
/// most 128 rows + columns).
bool fusedArgmaxMatchesAten(int height, int width, int outHeight, int outWidth);

/// Labels (outHeight x outWidth, rows `labelStride` bytes apart) = index of the first maximal value over
/// `classes` of the bilinear upsampling (align_corners = false) of contiguous float logits
/// (classes x height x width); a NaN counts as the maximum, as in torch.argmax. Parallel over output
/// rows (at::parallel_for); each thread holds two horizontally interpolated input rows of all classes
/// (2 x classes x outWidth floats) instead of the whole upsampled map. classes must be in 1..256.
void upsampleArgmax(const float* logits, int classes, int height, int width, int outHeight, int outWidth,
                    std::uint8_t* labels, std::size_t labelStride, const BilinearRounding& rounding);

}  // namespace sapiens::detail
