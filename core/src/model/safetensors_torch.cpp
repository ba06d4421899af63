#include "sapiens/model/safetensors_torch.h"

#include "sapiens/io/atomic_file.h"
#include "sapiens/model/model_error.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace sapiens {

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors stores little-endian data; this reader/writer assumes a little-endian host"
#endif

void requireFiniteTensor(const at::Tensor& tensor, const std::string& fileName, const std::string& key) {
  if (!at::isFloatingType(tensor.scalar_type()) || tensor.numel() == 0) return;
  // NaN and infinities propagate through a sum, so a finite sum proves every element finite. A sum that
  // is not finite may still be an overflow of finite values (fp16), so then the elements are counted.
  if (std::isfinite(tensor.sum().item<double>())) return;
  const std::int64_t nans = at::isnan(tensor).sum().item<std::int64_t>();
  const std::int64_t infinities = at::isinf(tensor).sum().item<std::int64_t>();
  if (nans == 0 && infinities == 0) return;
  throw ModelFormatError(fileName + ": tensor '" + key + "' holds " + std::to_string(nans) + " NaN and " +
                         std::to_string(infinities) + " infinite values (of " +
                         std::to_string(tensor.numel()) + " " +
                         std::string(c10::toString(tensor.scalar_type())) +
                         "); the checkpoint is damaged or its training diverged");
}

c10::ScalarType toScalarType(StDType dtype) {
  switch (dtype) {
    case StDType::F64:
      return at::kDouble;
    case StDType::F32:
      return at::kFloat;
    case StDType::F16:
      return at::kHalf;
    case StDType::BF16:
      return at::kBFloat16;
    case StDType::I64:
      return at::kLong;
    case StDType::I32:
      return at::kInt;
    case StDType::I16:
      return at::kShort;
    case StDType::I8:
      return at::kChar;
    case StDType::U8:
      return at::kByte;
    case StDType::BOOL:
      return at::kBool;
  }
  throw std::invalid_argument("toScalarType: invalid StDType " + std::to_string(static_cast<int>(dtype)));
}

StDType toStDType(c10::ScalarType type) {
  switch (type) {
    case at::kDouble:
      return StDType::F64;
    case at::kFloat:
      return StDType::F32;
    case at::kHalf:
      return StDType::F16;
    case at::kBFloat16:
      return StDType::BF16;
    case at::kLong:
      return StDType::I64;
    case at::kInt:
      return StDType::I32;
    case at::kShort:
      return StDType::I16;
    case at::kChar:
      return StDType::I8;
    case at::kByte:
      return StDType::U8;
    case at::kBool:
      return StDType::BOOL;
    default:
      throw std::invalid_argument(std::string("safetensors cannot store the scalar type ") +
                                  c10::toString(type));
  }
}

at::Tensor loadTensor(const SafetensorsFile& file, const TensorEntry& entry,
                      std::optional<c10::ScalarType> as) {
  const c10::ScalarType stored = toScalarType(entry.dtype);
  const c10::ScalarType wanted = as.value_or(stored);
  const at::IntArrayRef sizes(entry.shape);
  if (entry.numel() == 0) return at::empty(sizes, at::TensorOptions().dtype(wanted));

  const std::byte* bytes = file.data(entry);
  const bool aligned = reinterpret_cast<std::uintptr_t>(bytes) % elementSize(entry.dtype) == 0;
  // BOOL bytes other than 0/1 would be invalid bool values: read them as U8 and normalise.
  const c10::ScalarType viewType = entry.dtype == StDType::BOOL ? at::kByte : stored;

  at::Tensor view;
  if (aligned) {
    std::shared_ptr<const void> owner = file.mappingOwner();
    view = at::from_blob(
        const_cast<std::byte*>(bytes), sizes, [owner](void*) {}, at::TensorOptions().dtype(viewType));
  } else {
    view = at::empty(sizes, at::TensorOptions().dtype(viewType));
    std::memcpy(view.data_ptr(), bytes, entry.byteSize());
  }
  if (entry.dtype == StDType::BOOL) view = view.ne(0);
  return view.scalar_type() == wanted ? view : view.to(wanted);
}

at::Tensor copyTensorReleasingPages(const SafetensorsFile& file, const TensorEntry& entry, c10::ScalarType as,
                                    std::uint64_t chunkBytes) {
  const std::size_t size = elementSize(entry.dtype);
  const bool aligned = reinterpret_cast<std::uintptr_t>(file.data(entry)) % size == 0;
  if (entry.dtype == StDType::BOOL || !aligned || entry.numel() == 0) {
    at::Tensor tensor = loadTensor(file, entry, as);
    if (entry.numel() > 0 && tensor.data_ptr() == static_cast<const void*>(file.data(entry)))
      tensor = tensor.clone();
    file.releasePages(entry);
    return tensor;
  }
  const at::Tensor source = loadTensor(file, entry).reshape({-1});  // aliases the mapping
  at::Tensor out = at::empty(at::IntArrayRef(entry.shape), at::TensorOptions().dtype(as));
  const at::Tensor flat = out.view({-1});
  const std::int64_t chunk = std::max<std::int64_t>(1, static_cast<std::int64_t>(chunkBytes / size));
  for (std::int64_t start = 0; start < entry.numel(); start += chunk) {
    const std::int64_t count = std::min(chunk, entry.numel() - start);
    flat.narrow(0, start, count).copy_(source.narrow(0, start, count));
    file.releasePages(entry, static_cast<std::uint64_t>(start) * size,
                      static_cast<std::uint64_t>(count) * size);
  }
  return out;
}

void saveSafetensors(const std::string& path, const NamedTensors& tensors,
                     const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;

  std::vector<at::Tensor> contiguous;
  contiguous.reserve(tensors.size());
  std::set<std::string> names;
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    auto fail = [&, &name = name](const std::string& reason) {
      return SafetensorsError(path, "cannot save tensor '" + name + "': " + reason);
    };
    if (name == "__metadata__") throw fail("the name is reserved for the metadata");
    if (!names.insert(name).second) throw fail("duplicate tensor name");
    if (!tensor.defined()) throw fail("the tensor is undefined");
    if (tensor.layout() != at::kStrided) throw fail("only dense (strided) tensors can be stored");
    StDType dtype{};
    try {
      dtype = toStDType(tensor.scalar_type());
    } catch (const std::invalid_argument& e) {
      throw fail(e.what());
    }
    at::Tensor data = tensor.to(at::kCPU).contiguous();
    const auto bytes = static_cast<std::uint64_t>(data.nbytes());
    header[name] = {{"dtype", std::string(dtypeName(dtype))},
                    {"shape", std::vector<std::int64_t>(data.sizes().begin(), data.sizes().end())},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    contiguous.push_back(std::move(data));
  }

  std::string headerText;
  try {
    headerText = header.dump();
  } catch (const nlohmann::json::exception& e) {
    throw SafetensorsError(path, std::string("cannot encode the header: ") + e.what());
  }
  // Padding the header to a multiple of 8 keeps the data area (and so most tensors) aligned.
  headerText.append((8 - headerText.size() % 8) % 8, ' ');

  try {
    AtomicFile file(path);
    unsigned char length[8];
    std::uint64_t headerLength = headerText.size();
    for (unsigned char& byte : length) {
      byte = static_cast<unsigned char>(headerLength & 0xff);
      headerLength >>= 8;
    }
    file.write(length, sizeof length);
    file.write(headerText);
    for (const at::Tensor& data : contiguous) {
      if (data.nbytes() > 0) file.write(data.data_ptr(), data.nbytes());
    }
    file.commit();
  } catch (const IoError& e) {
    throw SafetensorsError(path, e.what());
  }
}

}  // namespace sapiens
