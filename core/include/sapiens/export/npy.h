#pragma once
// NumPy .npy files (format 1.0 when written; 1.0, 2.0 and 3.0 when read): little-endian, C order.
// What the official demos save (`np.save`) and what NumPy users load without any other library.

#include <opencv2/core/mat.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sapiens {

/// Element types. Writing supports Float32, UInt8 and Int64; reading supports all of them.
enum class NpyType { Bool, UInt8, Int32, Int64, Float16, Float32, Float64 };

/// NumPy's descr string ("<f4", "|u1", "<i8", ...).
std::string npyDescr(NpyType type);
std::size_t npySize(NpyType type);

struct NpyArray {
  NpyType type = NpyType::Float32;
  std::vector<std::size_t> shape;   ///< empty = a scalar (one element)
  std::vector<unsigned char> data;  ///< count() * npySize(type) bytes, C order, little-endian

  std::size_t count() const;
  /// The elements as T: bool, std::uint8_t, std::int32_t, std::int64_t, std::uint16_t (Float16 bits),
  /// float or double. Throws std::invalid_argument when T is not the stored type.
  template <typename T>
  const T* values() const;
};

/// The complete file contents: magic, version 1.0, header dict padded with spaces to a multiple of 64
/// bytes and ended by '\n', then the raw elements.
std::string encodeNpy(NpyType type, const std::vector<std::size_t>& shape, const void* elements);

void writeNpy(const std::string& path, const float* elements, const std::vector<std::size_t>& shape);
void writeNpy(const std::string& path, const std::uint8_t* elements, const std::vector<std::size_t>& shape);
void writeNpy(const std::string& path, const std::int64_t* elements, const std::vector<std::size_t>& shape);
/// A continuous-or-not CV_32F or CV_8U matrix with any channel count: shape (rows, cols) for one channel,
/// (rows, cols, channels) otherwise.
void writeNpy(const std::string& path, const cv::Mat& matrix);

/// Throws ExportError naming the file: unreadable, not .npy, unsupported descr, Fortran order, truncated.
NpyArray readNpy(const std::string& path);

/// A 2-D (rows, cols) or 3-D (rows, cols, channels <= 512) array as a cv::Mat: Float32 -> CV_32F,
/// Float16 -> CV_32F (converted), Float64 -> CV_64F, UInt8/Bool -> CV_8U, Int32 -> CV_32S,
/// Int64 -> CV_32S (throws when a value does not fit). Throws std::invalid_argument otherwise.
cv::Mat npyToMat(const NpyArray& array);

}  // namespace sapiens
