#pragma once
// Reader and writer for the safetensors format (https://github.com/huggingface/safetensors):
// 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets}} plus an
// optional "__metadata__" object of strings, then the raw little-endian tensor bytes.
// The reader memory-maps the file and validates the header completely before anything is read;
// every failure throws SafetensorsError naming the file and what is wrong with it.
// This header has no LibTorch dependency; see safetensors_torch.h for tensors.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sapiens {

enum class StDType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

/// Bytes per element of a dtype.
std::size_t elementSize(StDType dtype);
/// The format's spelling ("F32", "BF16", ...).
std::string_view dtypeName(StDType dtype);

class SafetensorsError : public std::runtime_error {
 public:
  SafetensorsError(std::string path, const std::string& reason);
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_;
  std::string reason_;
};

struct TensorEntry {
  std::string name;
  StDType dtype = StDType::F32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  ///< byte offset relative to the data area
  std::uint64_t end = 0;

  std::int64_t numel() const;
  std::uint64_t byteSize() const { return end - begin; }
};

class SafetensorsFile {
 public:
  /// Maps and validates the file. Throws SafetensorsError.
  static SafetensorsFile open(const std::string& path);

  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  ~SafetensorsFile();

  const std::string& path() const;
  std::uint64_t fileSize() const;
  /// Tensors ordered by their position in the data area.
  const std::vector<TensorEntry>& tensors() const;
  /// nullptr when absent.
  const TensorEntry* find(std::string_view name) const;
  const std::map<std::string, std::string>& metadata() const;
  /// Start of a tensor's bytes inside the mapping (valid while this object lives).
  /// May be unaligned for the element type.
  const std::byte* data(const TensorEntry& entry) const;
  /// Shares ownership of the read-only mapping: what aliases it (zero-copy tensors) stays valid while
  /// a copy of this pointer lives, even after this object is gone.
  std::shared_ptr<const void> mappingOwner() const;
  /// Drops the mapped pages of bytes [offset, offset + length) of the entry (the whole entry by default;
  /// rounded out to whole pages) from this process's resident memory. The kernel's page cache keeps them
  /// and touching them again reads them back, so what aliases them stays valid. For a loader that has
  /// copied or converted the bytes: its peak memory is then the copies, not the copies plus the file.
  void releasePages(const TensorEntry& entry, std::uint64_t offset = 0,
                    std::uint64_t length = UINT64_MAX) const;

 private:
  struct Impl;
  explicit SafetensorsFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sapiens
