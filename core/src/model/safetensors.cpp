#include "sapiens/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

namespace sapiens {

namespace {

using Json = nlohmann::json;

constexpr std::uint64_t kMaxHeaderBytes = 100ull * 1000 * 1000;
constexpr std::string_view kMetadataKey = "__metadata__";

constexpr std::array<std::pair<StDType, std::string_view>, 10> kDTypeNames{{
    {StDType::F64, "F64"},
    {StDType::F32, "F32"},
    {StDType::F16, "F16"},
    {StDType::BF16, "BF16"},
    {StDType::I64, "I64"},
    {StDType::I32, "I32"},
    {StDType::I16, "I16"},
    {StDType::I8, "I8"},
    {StDType::U8, "U8"},
    {StDType::BOOL, "BOOL"},
}};

std::string errnoText(int error) {
  return std::generic_category().message(error);
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

std::string rangeText(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// nlohmann keeps only one value of a repeated key; the parser callback sees every key, so duplicates are
// collected here while parsing (one key set per open object).
class DuplicateKeyFinder {
 public:
  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        open_.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        if (!open_.empty()) open_.pop_back();
        break;
      case Json::parse_event_t::key: {
        if (open_.empty() || !parsed.is_string()) break;
        const std::string& key = parsed.get_ref<const std::string&>();
        Level& level = open_.back();
        if (!level.keys.insert(key).second && message_.empty()) {
          if (open_.size() == 1) {
            message_ = "duplicate tensor name '" + key + "' in the header";
          } else {
            message_ =
                "duplicate key '" + key + "' inside the entry '" + open_[open_.size() - 2].lastKey + "'";
          }
        }
        level.lastKey = key;
        break;
      }
      default:
        break;
    }
    return true;
  }

  const std::string& message() const { return message_; }

 private:
  struct Level {
    std::set<std::string> keys;
    std::string lastKey;
  };
  std::vector<Level> open_;
  std::string message_;
};

// Owns the read-only private mapping of a whole file.
struct Mapping {
  void* address = nullptr;
  std::size_t size = 0;
  ~Mapping() {
    if (address) ::munmap(address, size);
  }
};

class HeaderParser {
 public:
  HeaderParser(const std::string& path, std::uint64_t dataSize) : path_(path), dataSize_(dataSize) {}

  void parse(const char* text, std::size_t length, std::vector<TensorEntry>& tensors,
             std::map<std::string, std::string>& metadata) const {
    DuplicateKeyFinder duplicates;
    Json header;
    try {
      header = Json::parse(text, text + length, std::ref(duplicates));
    } catch (const Json::exception& e) {
      fail("header is not valid JSON: " + std::string(e.what()));
    }
    if (!header.is_object())
      fail("header is not a JSON object (it is a JSON " + std::string(header.type_name()) + ")");
    if (!duplicates.message().empty()) fail(duplicates.message());

    for (const auto& [name, value] : header.items()) {
      if (name == kMetadataKey) {
        readMetadata(value, metadata);
      } else {
        tensors.push_back(readEntry(name, value));
      }
    }
    checkCoverage(tensors);
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const { throw SafetensorsError(path_, reason); }
  [[noreturn]] void failTensor(const std::string& name, const std::string& reason) const {
    fail("tensor '" + name + "': " + reason);
  }

  void readMetadata(const Json& value, std::map<std::string, std::string>& metadata) const {
    if (!value.is_object()) {
      fail("__metadata__ is not an object of strings (it is a JSON " + std::string(value.type_name()) + ")");
    }
    for (const auto& [key, text] : value.items()) {
      if (!text.is_string()) {
        fail("__metadata__ value of key '" + key + "' is not a string (it is a JSON " +
             std::string(text.type_name()) + ")");
      }
      metadata.emplace(key, text.get<std::string>());
    }
  }

  const Json& field(const std::string& name, const Json& entry, const char* key) const {
    auto it = entry.find(key);
    if (it == entry.end()) failTensor(name, std::string("missing field '") + key + "'");
    return *it;
  }

  StDType readDType(const std::string& name, const Json& entry) const {
    const Json& value = field(name, entry, "dtype");
    if (!value.is_string()) {
      failTensor(name, "field 'dtype' is not a string (it is " + value.dump() + ")");
    }
    const auto& text = value.get_ref<const std::string&>();
    for (const auto& [dtype, spelling] : kDTypeNames) {
      if (text == spelling) return dtype;
    }
    failTensor(name,
               "unknown dtype '" + text + "' (supported: F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)");
  }

  std::vector<std::int64_t> readShape(const std::string& name, const Json& entry) const {
    const Json& value = field(name, entry, "shape");
    if (!value.is_array()) failTensor(name, "field 'shape' is not an array (it is " + value.dump() + ")");
    std::vector<std::int64_t> shape;
    shape.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
      const Json& dim = value[i];
      if (!dim.is_number_integer()) {
        failTensor(name, "shape " + value.dump() + ": dimension " + std::to_string(i) + " is not an integer");
      }
      if (dim.is_number_unsigned()) {
        const auto size = dim.get<std::uint64_t>();
        if (size > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          failTensor(name, "shape " + value.dump() + ": dimension " + std::to_string(i) + " overflows int64");
        }
        shape.push_back(static_cast<std::int64_t>(size));
      } else {
        const auto size = dim.get<std::int64_t>();
        if (size < 0) {
          failTensor(name, "shape " + value.dump() + " has the negative dimension " + std::to_string(size));
        }
        shape.push_back(size);
      }
    }
    return shape;
  }

  std::pair<std::uint64_t, std::uint64_t> readOffsets(const std::string& name, const Json& entry) const {
    const Json& value = field(name, entry, "data_offsets");
    const bool wellFormed = value.is_array() && value.size() == 2 && value[0].is_number_unsigned() &&
                            value[1].is_number_unsigned();
    if (!wellFormed) {
      failTensor(name, "data_offsets must be two non-negative integers [begin, end], got " + value.dump());
    }
    const auto begin = value[0].get<std::uint64_t>();
    const auto end = value[1].get<std::uint64_t>();
    if (begin > end) failTensor(name, "data_offsets " + rangeText(begin, end) + " have begin > end");
    return {begin, end};
  }

  TensorEntry readEntry(const std::string& name, const Json& value) const {
    if (!value.is_object()) {
      failTensor(name, "entry is not a JSON object (it is a JSON " + std::string(value.type_name()) + ")");
    }
    TensorEntry entry;
    entry.name = name;
    entry.dtype = readDType(name, value);
    entry.shape = readShape(name, value);

    std::uint64_t numel = 1;
    for (std::int64_t dim : entry.shape) {
      if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(dim), &numel) ||
          numel > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        failTensor(name,
                   "shape " + shapeText(entry.shape) + " has more elements than fit in int64 (overflow)");
      }
    }
    std::uint64_t needed = 0;
    if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(elementSize(entry.dtype)), &needed)) {
      failTensor(name, "shape " + shapeText(entry.shape) + " x " + std::string(dtypeName(entry.dtype)) +
                           " needs more bytes than fit in 64 bits (overflow)");
    }

    std::tie(entry.begin, entry.end) = readOffsets(name, value);
    if (entry.end > dataSize_) {
      failTensor(name, "data_offsets " + rangeText(entry.begin, entry.end) +
                           " lie outside the data area of " + std::to_string(dataSize_) + " bytes");
    }
    if (entry.byteSize() != needed) {
      failTensor(name, "data_offsets " + rangeText(entry.begin, entry.end) + " hold " +
                           std::to_string(entry.byteSize()) + " bytes but shape " + shapeText(entry.shape) +
                           " x " + std::string(dtypeName(entry.dtype)) + " needs " + std::to_string(needed));
    }
    return entry;
  }

  // The format requires the tensors to tile the data area exactly: no overlap, no gap, nothing after.
  void checkCoverage(std::vector<TensorEntry>& tensors) const {
    std::stable_sort(tensors.begin(), tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    std::uint64_t covered = 0;
    const TensorEntry* previous = nullptr;
    for (const TensorEntry& entry : tensors) {
      if (entry.begin < covered) {
        fail("tensor '" + entry.name + "' at " + rangeText(entry.begin, entry.end) + " overlaps tensor '" +
             previous->name + "' at " + rangeText(previous->begin, previous->end));
      }
      if (entry.begin > covered) {
        fail("gap in the data area: bytes " + rangeText(covered, entry.begin) +
             " belong to no tensor (before tensor '" + entry.name + "')");
      }
      covered = entry.end;
      previous = &entry;
    }
    if (covered != dataSize_) {
      fail("trailing bytes: the data area holds " + std::to_string(dataSize_) +
           " bytes but the tensors end at " + std::to_string(covered));
    }
  }

  const std::string& path_;
  std::uint64_t dataSize_;
};

}  // namespace

std::size_t elementSize(StDType dtype) {
  switch (dtype) {
    case StDType::F64:
    case StDType::I64:
      return 8;
    case StDType::F32:
    case StDType::I32:
      return 4;
    case StDType::F16:
    case StDType::BF16:
    case StDType::I16:
      return 2;
    case StDType::I8:
    case StDType::U8:
    case StDType::BOOL:
      return 1;
  }
  throw std::invalid_argument("elementSize: invalid StDType " + std::to_string(static_cast<int>(dtype)));
}

std::string_view dtypeName(StDType dtype) {
  for (const auto& [value, spelling] : kDTypeNames) {
    if (value == dtype) return spelling;
  }
  throw std::invalid_argument("dtypeName: invalid StDType " + std::to_string(static_cast<int>(dtype)));
}

SafetensorsError::SafetensorsError(std::string path, const std::string& reason)
    : std::runtime_error(path + ": " + reason), path_(std::move(path)), reason_(reason) {}

std::int64_t TensorEntry::numel() const {
  std::int64_t count = 1;
  for (std::int64_t dim : shape) count *= dim;
  return count;
}

struct SafetensorsFile::Impl {
  std::string path;
  std::shared_ptr<Mapping> mapping;
  std::uint64_t dataStart = 0;  // 8 + header length
  std::vector<TensorEntry> tensors;
  std::map<std::string, std::size_t, std::less<>> index;
  std::map<std::string, std::string> metadata;
};

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  auto fail = [&](const std::string& reason) -> SafetensorsError { return SafetensorsError(path, reason); };

  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    throw fail("cannot open: " + errnoText(error));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    throw fail("cannot stat: " + errnoText(error));
  }
  if (S_ISDIR(info.st_mode)) {
    ::close(fd);
    throw fail("is a directory, not a safetensors file");
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    const char* kind = S_ISFIFO(info.st_mode)   ? "a FIFO"
                       : S_ISSOCK(info.st_mode) ? "a socket"
                       : S_ISCHR(info.st_mode)  ? "a character device"
                       : S_ISBLK(info.st_mode)  ? "a block device"
                                                : "a special file";
    throw fail(std::string("is ") + kind + ", not a regular file");
  }
  const auto fileSize = static_cast<std::uint64_t>(info.st_size);
  if (fileSize == 0) {
    ::close(fd);
    throw fail("file is empty (0 bytes)");
  }
  if (fileSize < 8) {
    ::close(fd);
    throw fail("file is " + std::to_string(fileSize) + " bytes, shorter than the 8-byte header length");
  }
  if (fileSize > std::numeric_limits<std::size_t>::max()) {
    ::close(fd);
    throw fail("file of " + std::to_string(fileSize) + " bytes cannot be mapped");
  }

  auto mapping = std::make_shared<Mapping>();
  mapping->size = static_cast<std::size_t>(fileSize);
  void* address = ::mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int mapError = errno;
  ::close(fd);
  if (address == MAP_FAILED)
    throw fail("cannot map " + std::to_string(fileSize) + " bytes: " + errnoText(mapError));
  mapping->address = address;
  const auto* bytes = static_cast<const unsigned char*>(address);

  std::uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i) headerLength = (headerLength << 8) | bytes[i];
  if (headerLength > kMaxHeaderBytes) {
    throw fail("header length " + std::to_string(headerLength) + " is absurd (more than the 100 MB limit)");
  }
  if (headerLength > fileSize - 8) {
    throw fail("header length " + std::to_string(headerLength) + " goes beyond the file: only " +
               std::to_string(fileSize - 8) + " bytes follow the 8-byte length");
  }

  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->dataStart = 8 + headerLength;
  HeaderParser parser(path, fileSize - impl->dataStart);
  parser.parse(reinterpret_cast<const char*>(bytes + 8), static_cast<std::size_t>(headerLength),
               impl->tensors, impl->metadata);
  for (std::size_t i = 0; i < impl->tensors.size(); ++i) impl->index.emplace(impl->tensors[i].name, i);
  impl->mapping = std::move(mapping);
  return SafetensorsFile(std::move(impl));
}

SafetensorsFile::SafetensorsFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;
SafetensorsFile::~SafetensorsFile() = default;

const std::string& SafetensorsFile::path() const {
  return impl_->path;
}
std::uint64_t SafetensorsFile::fileSize() const {
  return impl_->mapping->size;
}
const std::vector<TensorEntry>& SafetensorsFile::tensors() const {
  return impl_->tensors;
}
const std::map<std::string, std::string>& SafetensorsFile::metadata() const {
  return impl_->metadata;
}

const TensorEntry* SafetensorsFile::find(std::string_view name) const {
  auto it = impl_->index.find(name);
  return it == impl_->index.end() ? nullptr : &impl_->tensors[it->second];
}

const std::byte* SafetensorsFile::data(const TensorEntry& entry) const {
  return static_cast<const std::byte*>(impl_->mapping->address) + impl_->dataStart + entry.begin;
}

std::shared_ptr<const void> SafetensorsFile::mappingOwner() const {
  return std::shared_ptr<const void>(impl_->mapping, impl_->mapping->address);
}

void SafetensorsFile::releasePages(const TensorEntry& entry, std::uint64_t offset,
                                   std::uint64_t length) const {
  if (offset >= entry.byteSize()) return;
  length = std::min(length, entry.byteSize() - offset);
  static const auto pageSize = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(data(entry)) + offset;
  const auto mapped = reinterpret_cast<std::uintptr_t>(impl_->mapping->address);
  // Whole pages, the neighbours' shares of the first and last included: unmodified pages of a private
  // file mapping are read back from the page cache when touched again.
  const std::uintptr_t first = std::max(mapped, begin / pageSize * pageSize);
  const std::uintptr_t last =
      std::min(mapped + impl_->mapping->size, (begin + length + pageSize - 1) / pageSize * pageSize);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace sapiens
