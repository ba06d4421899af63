#pragma once
// Custom CUDA kernels for post-processing on the device that produced the outputs, with plain C++
// signatures (raw device pointers, sizes, a cudaStream_t passed as void*) so that nvcc compiles them
// without LibTorch. Each has a CPU reference (kernels_reference.cpp, ordinary compiler) computing the same
// values with the same float operations; tests/cuda/test_cuda_kernels.cpp compares the two on a GPU.
// The kernels (sapiens_cuda_kernels) are built only when SAPIENS_ENABLE_CUDA_KERNELS is on and nvcc is
// found; the references are always built (sapiens_kernel_reference).
//
// Kernel functions enqueue work on `stream` and return without synchronising; they throw
// std::runtime_error when a launch fails and std::invalid_argument for bad sizes.

#include <cstddef>
#include <cstdint>

namespace sapiens::cuda {

/// Element type of the input tensors; every kernel converts to float32 (exactly) on load.
enum class ElementType { Float32, BFloat16, Float16 };

const char* elementTypeName(ElementType type);

// --- (a) fused bilinear upsampling + argmax of segmentation logits --------------------------------

/// labels[b][y][x] = index of the first maximal value over the `classes` channels of the bilinear
/// upsampling (align_corners = false, as at::upsample_bilinear2d) of contiguous logits
/// (batch x classes x height x width) to outHeight x outWidth; a NaN counts as the maximum. The arithmetic
/// is float32 (the logits converted exactly) with the fused multiply-adds written out (kernel_math.h),
/// so the kernel and its reference agree bit for bit; at::upsample_bilinear2d rounds differently only
/// in the last bit, so labels agree except where the top two classes are that close.
/// classes in 1..256; labels is batch x outHeight x outWidth bytes.
void upsampleArgmax(const void* logits, ElementType type, int batch, int classes, int height, int width,
                    int outHeight, int outWidth, std::uint8_t* labels, void* stream);
void upsampleArgmaxReference(const void* logits, ElementType type, int batch, int classes, int height,
                             int width, int outHeight, int outWidth, std::uint8_t* labels);

// --- (b) per-channel peak of heatmaps ---------------------------------------------------------------

/// For each of the batch x channels maps (height x width, contiguous): the row-major index of the first
/// maximum (a NaN counts as the maximum and the first NaN wins, as numpy's argmax) and that value (NaN
/// when the map holds one, as numpy's amax). One launch (one block per map) for all maps.
void heatmapPeaks(const void* heatmaps, ElementType type, int batch, int channels, int height, int width,
                  std::int32_t* indices, float* values, void* stream);
void heatmapPeaksReference(const void* heatmaps, ElementType type, int batch, int channels, int height,
                           int width, std::int32_t* indices, float* values);

// --- (c) pointmap to a packed vertex buffer ----------------------------------------------------------

/// Bytes of device scratch memory pointmapVertices needs for `pixels` pixels.
std::size_t pointmapVerticesWorkspaceBytes(std::int64_t pixels);

/// Packs the points of a planar pointmap (3 x height x width: x, y, z planes) into
/// `vertices` (x, y, z floats, room for height x width points), in row-major pixel order, skipping
/// points with a non-finite coordinate and, when `mask` (height x width bytes) is given, pixels whose
/// mask byte is 0. Writes the number of points kept to *count (device memory). `workspace` holds
/// pointmapVerticesWorkspaceBytes(height * width) bytes of device memory.
void pointmapVertices(const void* pointmap, ElementType type, const std::uint8_t* mask, int height, int width,
                      float* vertices, std::int64_t* count, void* workspace, void* stream);
std::int64_t pointmapVerticesReference(const void* pointmap, ElementType type, const std::uint8_t* mask,
                                       int height, int width, float* vertices);

}  // namespace sapiens::cuda
