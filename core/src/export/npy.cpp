#include "sapiens/export/npy.h"

#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"
#include "sapiens/io/file_read.h"

#include <opencv2/core.hpp>

#include <cctype>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <type_traits>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy writer and reader copy elements as they are in memory: little-endian hosts only"
#endif

namespace sapiens {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

struct TypeInfo {
  NpyType type;
  const char* descr;
  std::size_t size;
};

constexpr TypeInfo kTypes[] = {
    {NpyType::Bool, "|b1", 1},    {NpyType::UInt8, "|u1", 1},   {NpyType::Int32, "<i4", 4},
    {NpyType::Int64, "<i8", 8},   {NpyType::Float16, "<f2", 2}, {NpyType::Float32, "<f4", 4},
    {NpyType::Float64, "<f8", 8},
};

const TypeInfo& infoOf(NpyType type) {
  for (const auto& info : kTypes) {
    if (info.type == type) return info;
  }
  throw std::logic_error("unknown NpyType");
}

template <typename>
constexpr bool kUnsupportedElement = false;

template <typename T>
constexpr NpyType npyTypeOf() {
  if constexpr (std::is_same_v<T, bool>) {
    return NpyType::Bool;
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return NpyType::UInt8;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return NpyType::Int32;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return NpyType::Int64;
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    return NpyType::Float16;  // the raw IEEE half-precision bits
  } else if constexpr (std::is_same_v<T, float>) {
    return NpyType::Float32;
  } else if constexpr (std::is_same_v<T, double>) {
    return NpyType::Float64;
  } else {
    static_assert(kUnsupportedElement<T>, "no .npy element type for T");
  }
}

std::string shapeText(const std::vector<std::size_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

std::size_t countOf(const std::vector<std::size_t>& shape) {
  std::size_t count = 1;
  for (const std::size_t extent : shape) {
    if (extent != 0 && count > std::numeric_limits<std::size_t>::max() / extent) {
      throw std::overflow_error("npy shape " + shapeText(shape) + " has too many elements");
    }
    count *= extent;
  }
  return count;
}

// --- header parsing: a Python dict literal with the keys 'descr', 'fortran_order' and 'shape'.

class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), text_(text) {}

  std::string stringValue(const char* key) {
    seekValue(key);
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(std::string("'") + key + "' is not a string");
    const auto end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) fail(std::string("'") + key + "' is not terminated");
    return text_.substr(pos_ + 1, end - pos_ - 1);
  }

  bool boolValue(const char* key) {
    seekValue(key);
    if (text_.compare(pos_, 4, "True") == 0) return true;
    if (text_.compare(pos_, 5, "False") == 0) return false;
    fail(std::string("'") + key + "' is not True or False");
  }

  std::vector<std::size_t> tupleValue(const char* key) {
    seekValue(key);
    if (peek() != '(') fail(std::string("'") + key + "' is not a tuple");
    ++pos_;
    std::vector<std::size_t> values;
    while (true) {
      skipSpace();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        fail(std::string("'") + key + "' holds a non-integer");
      std::size_t value = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        const std::size_t digit = static_cast<std::size_t>(text_[pos_] - '0');
        if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10) fail("shape extent too large");
        value = value * 10 + digit;
        ++pos_;
      }
      values.push_back(value);
      skipSpace();
      if (peek() == ',') ++pos_;
    }
    return values;
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const {
    throw ExportError(path_, "bad .npy header (" + reason + "): " + text_);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void seekValue(const char* key) {
    for (const char quote : {'\'', '"'}) {
      const std::string quoted = quote + std::string(key) + quote;
      const auto at = text_.find(quoted);
      if (at == std::string::npos) continue;
      pos_ = at + quoted.size();
      skipSpace();
      if (peek() != ':') fail(std::string("no ':' after '") + key + "'");
      ++pos_;
      skipSpace();
      return;
    }
    fail(std::string("no '") + key + "' key");
  }

  const std::string& path_;
  const std::string& text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string npyDescr(NpyType type) {
  return infoOf(type).descr;
}

std::size_t npySize(NpyType type) {
  return infoOf(type).size;
}

std::size_t NpyArray::count() const {
  return countOf(shape);
}

template <typename T>
const T* NpyArray::values() const {
  if (npyTypeOf<T>() != type) {
    throw std::invalid_argument("npy array holds '" + npyDescr(type) + "' elements, not '" +
                                npyDescr(npyTypeOf<T>()) + "'");
  }
  return reinterpret_cast<const T*>(data.data());
}

template const bool* NpyArray::values<bool>() const;
template const std::uint8_t* NpyArray::values<std::uint8_t>() const;
template const std::int32_t* NpyArray::values<std::int32_t>() const;
template const std::int64_t* NpyArray::values<std::int64_t>() const;
template const std::uint16_t* NpyArray::values<std::uint16_t>() const;
template const float* NpyArray::values<float>() const;
template const double* NpyArray::values<double>() const;

namespace {

// Everything before the elements: magic, version, header length and the padded header dictionary.
std::string npyPreamble(NpyType type, const std::vector<std::size_t>& shape) {
  const TypeInfo& info = infoOf(type);
  std::string dict = "{'descr': '" + std::string(info.descr) +
                     "', 'fortran_order': False, 'shape': " + shapeText(shape) + ", }";
  // magic (6) + version (2) + header length (2) + dict + padding + '\n' is a multiple of 64.
  const std::size_t unpadded = kMagicSize + 2 + 2 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  if (dict.size() > 0xffff)
    throw std::invalid_argument("npy header too long for format 1.0: " + shapeText(shape));
  std::string preamble(kMagic, kMagicSize);
  preamble += '\x01';
  preamble += '\x00';
  preamble += static_cast<char>(dict.size() & 0xff);
  preamble += static_cast<char>(dict.size() >> 8);
  return preamble + dict;
}

}  // namespace

std::string encodeNpy(NpyType type, const std::vector<std::size_t>& shape, const void* elements) {
  const std::size_t dataSize = countOf(shape) * infoOf(type).size;
  std::string file = npyPreamble(type, shape);
  if (dataSize > 0) file.append(static_cast<const char*>(elements), dataSize);
  return file;
}

namespace {

// Straight from the elements to the file: a map at a large picture's size is gigabytes, never copied.
template <typename T>
void writeTyped(const std::string& path, const T* elements, const std::vector<std::size_t>& shape) {
  std::string preamble;
  try {
    preamble = npyPreamble(npyTypeOf<T>(), shape);
  } catch (const std::invalid_argument& error) {
    throw ExportError(path, error.what());
  }
  AtomicFile file(path);
  file.write(preamble);
  if (countOf(shape) > 0) file.write(elements, countOf(shape) * sizeof(T));
  file.commit();
}

}  // namespace

void writeNpy(const std::string& path, const float* elements, const std::vector<std::size_t>& shape) {
  writeTyped(path, elements, shape);
}

void writeNpy(const std::string& path, const std::uint8_t* elements, const std::vector<std::size_t>& shape) {
  writeTyped(path, elements, shape);
}

void writeNpy(const std::string& path, const std::int64_t* elements, const std::vector<std::size_t>& shape) {
  writeTyped(path, elements, shape);
}

void writeNpy(const std::string& path, const cv::Mat& matrix) {
  if (matrix.dims != 2 || matrix.empty()) {
    throw ExportError(path, "cannot write an empty or more than 2-D matrix as .npy");
  }
  const cv::Mat continuous = matrix.isContinuous() ? matrix : matrix.clone();
  std::vector<std::size_t> shape = {static_cast<std::size_t>(matrix.rows),
                                    static_cast<std::size_t>(matrix.cols)};
  if (matrix.channels() > 1) shape.push_back(static_cast<std::size_t>(matrix.channels()));
  switch (matrix.depth()) {
    case CV_32F:
      writeTyped(path, continuous.ptr<float>(), shape);
      break;
    case CV_8U:
      writeTyped(path, continuous.ptr<std::uint8_t>(), shape);
      break;
    default:
      throw ExportError(
          path, "only CV_32F and CV_8U matrices are written as .npy, not " + cv::typeToString(matrix.type()));
  }
}

NpyArray readNpy(const std::string& path) {
  const std::string bytes = readWholeFile(path, kMaxNpyFileBytes, "an npy array");
  if (bytes.size() < kMagicSize + 4 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
    throw ExportError(path, "not a .npy file (no \\x93NUMPY magic)");
  }
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t headerSize = 0;
  std::size_t headerStart = 0;
  auto byteAt = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i])); };
  if (major == 1) {
    headerSize = byteAt(8) | byteAt(9) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw ExportError(path, "truncated .npy header");
    headerSize = byteAt(8) | byteAt(9) << 8 | byteAt(10) << 16 | byteAt(11) << 24;
    headerStart = 12;
  } else {
    throw ExportError(path, "unsupported .npy format version " + std::to_string(major));
  }
  if (bytes.size() < headerStart + headerSize) throw ExportError(path, "truncated .npy header");
  const std::string header = bytes.substr(headerStart, headerSize);

  HeaderParser parser(path, header);
  const std::string descr = parser.stringValue("descr");
  NpyArray array;
  const TypeInfo* found = nullptr;
  for (const auto& info : kTypes) {
    // NumPy writes '|u1' and '|b1'; '<u1' and '=' byte orders are equivalent on a little-endian host.
    const std::string name = info.descr;
    if (descr == name || descr == "<" + name.substr(1) || descr == "=" + name.substr(1)) found = &info;
  }
  if (found == nullptr) {
    throw ExportError(path, "unsupported element type '" + descr +
                                "' (supported: |b1 |u1 <i4 <i8 <f2 <f4 <f8, little-endian)");
  }
  if (parser.boolValue("fortran_order"))
    throw ExportError(path, "Fortran-ordered .npy arrays are not supported");
  array.type = found->type;
  array.shape = parser.tupleValue("shape");

  std::size_t count = 0;
  try {
    count = countOf(array.shape);
  } catch (const std::overflow_error& error) {
    throw ExportError(path, error.what());
  }
  const std::size_t dataStart = headerStart + headerSize;
  const std::size_t available = bytes.size() - dataStart;
  if (count > available / found->size) {
    throw ExportError(path, "truncated .npy data: shape " + shapeText(array.shape) + " of '" + descr +
                                "' needs " + std::to_string(count * found->size) + " bytes, the file has " +
                                std::to_string(available));
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(dataStart),
                    bytes.begin() + static_cast<std::ptrdiff_t>(dataStart + count * found->size));
  return array;
}

cv::Mat npyToMat(const NpyArray& array) {
  if (array.shape.size() != 2 && array.shape.size() != 3) {
    throw std::invalid_argument("npy array of shape " + shapeText(array.shape) + " is not 2-D or 3-D");
  }
  const auto rows = array.shape[0];
  const auto cols = array.shape[1];
  const auto channels = array.shape.size() == 3 ? array.shape[2] : 1;
  const auto limit = static_cast<std::size_t>(std::numeric_limits<int>::max());
  if (rows > limit || cols > limit || channels < 1 || channels > CV_CN_MAX) {
    throw std::invalid_argument("npy array of shape " + shapeText(array.shape) + " does not fit a cv::Mat");
  }
  const int r = static_cast<int>(rows);
  const int c = static_cast<int>(cols);
  const int n = static_cast<int>(channels);
  auto wrap = [&](int depth) {
    // The cv::Mat header only borrows the bytes: clone so the result owns them.
    return cv::Mat(r, c, CV_MAKETYPE(depth, n), const_cast<unsigned char*>(array.data.data())).clone();
  };
  switch (array.type) {
    case NpyType::Bool:
    case NpyType::UInt8:
      return wrap(CV_8U);
    case NpyType::Int32:
      return wrap(CV_32S);
    case NpyType::Float32:
      return wrap(CV_32F);
    case NpyType::Float64:
      return wrap(CV_64F);
    case NpyType::Float16: {
      cv::Mat converted;
      wrap(CV_16F).convertTo(converted, CV_32F);
      return converted;
    }
    case NpyType::Int64: {
      cv::Mat result(r, c, CV_MAKETYPE(CV_32S, n));
      const std::int64_t* source = array.values<std::int64_t>();
      auto* target = result.ptr<std::int32_t>();
      for (std::size_t i = 0; i < array.count(); ++i) {
        if (source[i] < std::numeric_limits<std::int32_t>::min() ||
            source[i] > std::numeric_limits<std::int32_t>::max()) {
          throw std::invalid_argument("npy int64 value " + std::to_string(source[i]) + " at element " +
                                      std::to_string(i) + " does not fit a 32-bit cv::Mat");
        }
        target[i] = static_cast<std::int32_t>(source[i]);
      }
      return result;
    }
  }
  throw std::logic_error("unknown NpyType");
}

}  // namespace sapiens
