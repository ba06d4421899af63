#include "sapiens/export/image_file.h"

#include "export/file_extension.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"

#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace sapiens {

namespace {

std::uint32_t crc32(const unsigned char* data, std::size_t size, std::uint32_t crc = 0) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

void appendBigEndian(std::vector<unsigned char>& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<unsigned char>(value >> shift));
}

}  // namespace

std::vector<unsigned char> withPngText(std::vector<unsigned char> png, const std::string& keyword,
                                       const std::string& text) {
  static constexpr unsigned char kIend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
  if (png.size() < 8 + sizeof kIend || !std::equal(std::begin(kIend), std::end(kIend), png.end() - 12))
    throw std::invalid_argument("not a complete PNG file (no IEND chunk at its end)");
  if (keyword.empty() || keyword.size() > 79)
    throw std::invalid_argument("a PNG text keyword has 1-79 characters");
  std::vector<unsigned char> chunk;
  appendBigEndian(chunk, static_cast<std::uint32_t>(keyword.size() + 1 + text.size()));
  const std::size_t typeAt = chunk.size();
  for (char c : std::string("tEXt") + keyword) chunk.push_back(static_cast<unsigned char>(c));
  chunk.push_back(0);
  for (char c : text) chunk.push_back(static_cast<unsigned char>(c));
  appendBigEndian(chunk, crc32(chunk.data() + typeAt, chunk.size() - typeAt));
  png.insert(png.end() - 12, chunk.begin(), chunk.end());
  return png;
}

void writeImageFile(const std::string& path, const cv::Mat& image, const std::vector<int>& params,
                    const std::string& note) {
  static constexpr std::array<const char*, 8> kExtensions = {".png", ".jpg",  ".jpeg", ".bmp",
                                                             ".tif", ".tiff", ".webp", ".ppm"};
  const std::string extension = lowerExtension(path);
  if (std::find(kExtensions.begin(), kExtensions.end(), extension) == kExtensions.end()) {
    throw ExportError(path, "unknown picture format '" + extension +
                                "' (use .png, .jpg, .jpeg, .bmp, .tif, .tiff, .webp or .ppm)");
  }
  if (image.empty()) throw ExportError(path, "the picture to write is empty");
  std::vector<uchar> encoded;
  try {
    if (!cv::imencode(extension, image, encoded, params) || encoded.empty()) {
      throw ExportError(
          path, "OpenCV could not encode a " + cv::typeToString(image.type()) + " picture as " + extension);
    }
  } catch (const cv::Exception& error) {
    throw ExportError(path, "OpenCV could not encode the picture as " + extension + ": " + error.msg);
  }
  if (!note.empty() && extension == ".png") encoded = withPngText(std::move(encoded), "Comment", note);
  writeFileAtomically(path, std::string_view(reinterpret_cast<const char*>(encoded.data()), encoded.size()));
}

}  // namespace sapiens
