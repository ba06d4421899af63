#pragma once
// safetensors <-> at::Tensor.

#include "sapiens/model/safetensors.h"

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sapiens {

c10::ScalarType toScalarType(StDType dtype);
/// Throws std::invalid_argument for a scalar type the format cannot store.
StDType toStDType(c10::ScalarType type);

/// A CPU tensor holding one entry. When `as` is unset or equals the stored dtype and the bytes are
/// suitably aligned, the tensor aliases the mapping (zero-copy) and shares ownership of it, so it
/// stays valid after `file` is destroyed. The mapping is read-only: modifying such a tensor in place
/// crashes, call .clone() first. Otherwise (and always for BOOL, normalised to 0/1) the data is
/// converted into a fresh tensor of dtype `as`.
at::Tensor loadTensor(const SafetensorsFile& file, const TensorEntry& entry,
                      std::optional<c10::ScalarType> as = std::nullopt);

/// A fresh CPU tensor of dtype `as` holding the entry (a copy even when the dtypes match), converted in
/// chunks of about `chunkBytes` of the file, each chunk's mapped pages dropped from resident memory once
/// converted (SafetensorsFile::releasePages): loading a file this way peaks at the copies plus one chunk,
/// not at the copies plus the file. Same values as loadTensor(file, entry, as).
at::Tensor copyTensorReleasingPages(const SafetensorsFile& file, const TensorEntry& entry, c10::ScalarType as,
                                    std::uint64_t chunkBytes = 4u << 20);

/// Refuses a floating-point tensor holding NaN or infinite values (a damaged or diverged checkpoint would
/// otherwise give NaN outputs and no error): throws ModelFormatError naming `fileName` and `key`, with the
/// counts. One vectorised pass without allocation when the tensor is finite. Other dtypes pass.
void requireFiniteTensor(const at::Tensor& tensor, const std::string& fileName, const std::string& key);

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

/// Writes tensors (any device, made contiguous on the CPU) atomically: a temporary file in the same
/// folder, flushed, then renamed over `path`. Throws SafetensorsError on I/O failure (e.g. disk full),
/// leaving any previous file at `path` untouched.
void saveSafetensors(const std::string& path, const NamedTensors& tensors,
                     const std::map<std::string, std::string>& metadata = {});

}  // namespace sapiens
