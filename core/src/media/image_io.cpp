#include "sapiens/media/image_io.h"

#include "sapiens/io/file_read.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace sapiens {
namespace {

namespace fs = std::filesystem;

struct Dimensions {
  std::uint64_t width = 0;
  std::uint64_t height = 0;
};

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}
std::uint32_t le32(const unsigned char* p) {
  return (std::uint32_t{p[3]} << 24) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[1]} << 8) | p[0];
}
std::uint16_t be16(const unsigned char* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}
std::uint16_t le16(const unsigned char* p) {
  return static_cast<std::uint16_t>((p[1] << 8) | p[0]);
}

bool readAt(std::istream& in, std::streamoff offset, unsigned char* out, std::size_t n) {
  in.clear();
  in.seekg(offset);
  in.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(n));
  return static_cast<std::size_t>(in.gcount()) == n;
}

std::optional<Dimensions> pngDimensions(std::istream& in) {
  unsigned char h[24];
  if (!readAt(in, 0, h, sizeof h) || std::memcmp(h, "\x89PNG\r\n\x1a\n", 8) != 0) return std::nullopt;
  if (std::memcmp(h + 12, "IHDR", 4) != 0) return std::nullopt;
  return Dimensions{be32(h + 16), be32(h + 20)};
}

std::optional<Dimensions> bmpDimensions(std::istream& in) {
  unsigned char h[26];
  if (!readAt(in, 0, h, sizeof h) || h[0] != 'B' || h[1] != 'M') return std::nullopt;
  if (le32(h + 14) == 12) return Dimensions{le16(h + 18), le16(h + 20)};  // OS/2 core header
  auto height = static_cast<std::int32_t>(le32(h + 22));                  // negative = top-down
  return Dimensions{le32(h + 18), static_cast<std::uint64_t>(std::abs(static_cast<std::int64_t>(height)))};
}

// The offset of the first 0xFF byte at or after `pos`, or -1 at the end of the file.
std::streamoff nextFFByte(std::istream& in, std::streamoff pos) {
  std::array<char, 4096> block{};
  for (;;) {
    in.clear();
    in.seekg(pos);
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n == 0) return -1;
    if (const void* found = std::memchr(block.data(), 0xFF, n))
      return pos + (static_cast<const char*>(found) - block.data());
    pos += static_cast<std::streamoff>(n);
  }
}

// Walks a JPEG's marker segments from its start-of-image as libjpeg reads them: before each marker,
// bytes other than 0xFF are skipped (libjpeg warns of "extraneous bytes before marker" and goes on), as
// are 0xFF fill bytes and FF 00 pairs. Returns the offset of the first marker `wanted` accepts; nullopt at
// the end of the image, at a scan `wanted` does not accept, at a broken length or at the end of the file.
template <typename Wanted>
std::optional<std::streamoff> findJpegMarker(std::istream& in, Wanted wanted) {
  unsigned char h[4];
  if (!readAt(in, 0, h, 2) || h[0] != 0xFF || h[1] != 0xD8) return std::nullopt;
  std::streamoff pos = 2;
  for (int segment = 0; segment < 65536; ++segment) {
    pos = nextFFByte(in, pos);
    if (pos < 0 || !readAt(in, pos, h, 4)) return std::nullopt;
    const unsigned char marker = h[1];
    if (marker == 0xFF || marker == 0x00) {  // a fill byte; a stuffed zero, which is no marker
      pos += marker == 0xFF ? 1 : 2;
      continue;
    }
    if (wanted(marker)) return pos;
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {  // no length field
      pos += 2;
      continue;
    }
    if (marker == 0xD9 || marker == 0xDA) return std::nullopt;  // end of image / start of scan
    const std::uint16_t length = be16(h + 2);
    if (length < 2) return std::nullopt;
    pos += 2 + length;
  }
  return std::nullopt;
}

// The first start-of-frame's size; EXIF and ICC segments come before it.
std::optional<Dimensions> jpegDimensions(std::istream& in) {
  const std::optional<std::streamoff> frame = findJpegMarker(in, [](unsigned char marker) {
    return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
  });
  unsigned char size[5];
  if (!frame || !readAt(in, *frame + 4, size, sizeof size)) return std::nullopt;
  return Dimensions{be16(size + 3), be16(size + 1)};
}

// The offset of the first start-of-scan marker of a JPEG, past the segments before it (EXIF with its
// thumbnail, ICC, tables, the frame header). nullopt for anything else.
std::optional<std::streamoff> jpegFirstScan(std::istream& in) {
  return findJpegMarker(in, [](unsigned char marker) { return marker == 0xDA; });
}

// libjpeg decodes a truncated JPEG without an error (OpenCV only prints "Premature end of JPEG file") and
// fills the missing rows grey, so a cut file would pass as a picture. Inside the scans a 0xFF byte is
// always followed by 0x00, a restart marker or a table/scan marker, so the first FF D9 after the first
// scan starts is the end-of-image marker of a complete file (data appended after it is allowed).
bool jpegHasEndMarker(std::istream& in, std::streamoff from) {
  in.clear();
  in.seekg(from);
  std::vector<char> buffer(std::size_t{1} << 16);
  bool afterFF = false;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize n = in.gcount();
    for (std::streamsize i = 0; i < n; ++i) {
      const auto byte = static_cast<unsigned char>(buffer[static_cast<std::size_t>(i)]);
      if (afterFF && byte == 0xD9) return true;
      afterFF = byte == 0xFF;
    }
  }
  return false;
}

// The first image file directory's ImageWidth (256) and ImageLength (257) tags. Classic TIFF only.
std::optional<Dimensions> tiffDimensions(std::istream& in) {
  unsigned char h[8];
  if (!readAt(in, 0, h, sizeof h)) return std::nullopt;
  const bool little = h[0] == 'I' && h[1] == 'I' && h[2] == 42 && h[3] == 0;
  const bool big = h[0] == 'M' && h[1] == 'M' && h[2] == 0 && h[3] == 42;
  if (!little && !big) return std::nullopt;
  auto u16 = [little](const unsigned char* p) { return little ? le16(p) : be16(p); };
  auto u32 = [little](const unsigned char* p) { return little ? le32(p) : be32(p); };
  const std::streamoff ifd = u32(h + 4);
  unsigned char countBytes[2];
  if (!readAt(in, ifd, countBytes, 2)) return std::nullopt;
  const int entries = std::min<int>(u16(countBytes), 4096);
  Dimensions size;
  for (int i = 0; i < entries; ++i) {
    unsigned char e[12];
    if (!readAt(in, ifd + 2 + 12 * i, e, sizeof e)) return std::nullopt;
    const std::uint16_t tag = u16(e);
    const std::uint16_t type = u16(e + 2);
    const std::uint64_t value = type == 3 ? u16(e + 8) : type == 4 ? u32(e + 8) : 0;
    if (tag == 256) size.width = value;
    if (tag == 257) size.height = value;
  }
  if (size.width == 0 || size.height == 0) return std::nullopt;
  return size;
}

// A header that contradicts the file it is in (a field claiming more bytes than the file holds): refused
// before a decoder allocates what it claims.
struct InconsistentHeader : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A name read from a file, quoted for a message when it is an identifier as the format's names are;
// other bytes (control characters, text posing as a message) are not echoed.
std::string identifierForMessage(const std::string& name) {
  const bool identifier =
      !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
      });
  return identifier ? "'" + name + "'" : std::string("<not a name>");
}

std::uint64_t streamSize(std::istream& in) {
  in.clear();
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  return end > 0 ? static_cast<std::uint64_t>(end) : 0;
}

// The dataWindow attribute (box2i: xMin, yMin, xMax, yMax) of the header: every attribute (name, type,
// size, value) up to the empty name that ends it, and in a multi-part file every part's header up to the
// empty one. An attribute claiming more bytes than the file has left is refused: OpenEXR allocates and
// fills a string attribute's claimed size before it finds the file too short (a 934-byte file made it
// fill 1.9 GB).
std::optional<Dimensions> exrDimensions(std::istream& in) {
  unsigned char h[8];
  if (!readAt(in, 0, h, sizeof h) || le32(h) != 20000630u) return std::nullopt;
  const bool multiPart = (le32(h + 4) & 0x1000u) != 0;
  const std::uint64_t fileSize = streamSize(in);
  in.clear();
  in.seekg(8);
  auto readString = [&in](std::string& out) {
    out.clear();
    for (char c; in.get(c);) {
      if (c == '\0') return true;
      if (out.size() > 255) return false;
      out.push_back(c);
    }
    return false;
  };
  std::optional<Dimensions> window;
  std::string name;
  std::string type;
  bool headerEnded = false;
  for (int attribute = 0; attribute < 65536; ++attribute) {
    if (!readString(name)) return window;
    if (name.empty()) {
      if (!multiPart || headerEnded) return window;
      headerEnded = true;
      continue;
    }
    headerEnded = false;
    unsigned char sizeBytes[4];
    if (!readString(type) || !in.read(reinterpret_cast<char*>(sizeBytes), 4)) return window;
    const std::uint32_t size = le32(sizeBytes);
    const std::uint64_t left =
        fileSize - std::min<std::uint64_t>(fileSize, static_cast<std::uint64_t>(in.tellg()));
    if (size > left) {
      throw InconsistentHeader("EXR header attribute " + identifierForMessage(name) + " of type " +
                               identifierForMessage(type) + " claims " + std::to_string(size) +
                               " bytes, but only " + std::to_string(left) + " are left in the file");
    }
    if (!window && name == "dataWindow" && type == "box2i" && size == 16) {
      unsigned char box[16];
      if (!in.read(reinterpret_cast<char*>(box), 16)) return window;
      const auto xMin = static_cast<std::int32_t>(le32(box));
      const auto yMin = static_cast<std::int32_t>(le32(box + 4));
      const auto xMax = static_cast<std::int32_t>(le32(box + 8));
      const auto yMax = static_cast<std::int32_t>(le32(box + 12));
      if (xMax < xMin || yMax < yMin) return std::nullopt;
      window = Dimensions{static_cast<std::uint64_t>(std::int64_t{xMax} - xMin + 1),
                          static_cast<std::uint64_t>(std::int64_t{yMax} - yMin + 1)};
      continue;
    }
    in.seekg(size, std::ios::cur);
  }
  return window;
}

// A header of a format whose decoder allocates from it, too long to read its size from: refused rather
// than decoded unchecked.
struct UncheckableHeader : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A decimal number of a text header (PBM/PGM/PPM/PFM/PAM), after blanks and, in PNM, # comments. Digits
// past 2^40 saturate: the size check then refuses it instead of the header going unchecked.
std::optional<std::uint64_t> headerNumber(std::istream& in) {
  int c = in.get();
  while (c != EOF && (std::isspace(c) || c == '#')) {
    if (c == '#') {
      while (c != EOF && c != '\n' && c != '\r') c = in.get();
    } else {
      c = in.get();
    }
  }
  if (c == '+') c = in.get();
  if (c == EOF || !std::isdigit(c)) return std::nullopt;
  std::uint64_t value = 0;
  for (int digits = 0; c != EOF && std::isdigit(c) && digits < 64; c = in.get(), ++digits)
    value = std::min<std::uint64_t>(value * 10 + std::uint64_t(c - '0'), std::uint64_t{1} << 40);
  return value;
}

// A number of a PFM header as OpenCV reads it: the leading integer of the next blank-separated word
// ("30000+x" is 30000).
std::optional<std::uint64_t> pfmNumber(std::istream& in) {
  std::string word;
  if (!(in >> word)) return std::nullopt;
  std::istringstream text(word);
  return headerNumber(text);
}

// PBM/PGM/PPM (P1-P6) and PFM (PF, Pf): width and height follow the magic; PAM (P7): WIDTH and HEIGHT
// lines before ENDHDR. OpenCV allocates the whole picture from these before reading a pixel.
std::optional<Dimensions> pnmDimensions(std::istream& in) {
  unsigned char h[2];
  if (!readAt(in, 0, h, 2) || h[0] != 'P') return std::nullopt;
  if (h[1] == 'F' || h[1] == 'f') {
    const std::optional<std::uint64_t> width = pfmNumber(in);
    const std::optional<std::uint64_t> height = width ? pfmNumber(in) : std::nullopt;
    if (!height) return std::nullopt;
    return Dimensions{*width, *height};
  }
  if (h[1] >= '1' && h[1] <= '6') {
    const std::optional<std::uint64_t> width = headerNumber(in);
    const std::optional<std::uint64_t> height = width ? headerNumber(in) : std::nullopt;
    if (!height) return std::nullopt;
    return Dimensions{*width, *height};
  }
  if (h[1] != '7') return std::nullopt;
  Dimensions size;
  std::string word;
  int words = 0;
  while (in >> word && word != "ENDHDR") {
    if (word.front() == '#') {  // a comment line, skipped as OpenCV skips it
      std::getline(in, word);
      continue;
    }
    if (++words > 64) throw UncheckableHeader("a PAM header of more than 64 words before ENDHDR");
    if (word == "WIDTH" || word == "HEIGHT") {
      const std::optional<std::uint64_t> value = headerNumber(in);
      if (!value) return std::nullopt;
      (word == "WIDTH" ? size.width : size.height) = *value;
    }
  }
  if (size.width == 0 || size.height == 0) return std::nullopt;
  return size;
}

// Radiance HDR: header lines up to an empty one, then the resolution as OpenCV reads it ("-Y %d +X %d": the
// blanks are optional).
std::optional<Dimensions> hdrDimensions(std::istream& in) {
  unsigned char h[2];
  if (!readAt(in, 0, h, sizeof h) || std::memcmp(h, "#?", 2) != 0) return std::nullopt;
  in.clear();
  in.seekg(0);
  std::string line;
  for (int lines = 0; std::getline(in, line) && !line.empty(); ++lines) {
    if (lines == 1024) throw UncheckableHeader("a Radiance HDR header of more than 1024 lines");
  }
  if (!std::getline(in, line)) return std::nullopt;
  std::istringstream resolution(line);
  const auto axis = [&resolution](char sign, char name) {
    resolution >> std::ws;
    return resolution.get() == sign && resolution.get() == name;
  };
  if (!axis('-', 'Y')) return std::nullopt;
  const std::optional<std::uint64_t> height = headerNumber(resolution);
  if (!height || !axis('+', 'X')) return std::nullopt;
  const std::optional<std::uint64_t> width = headerNumber(resolution);
  if (!width) return std::nullopt;
  return Dimensions{*width, *height};
}

// Sun raster: magic 59 A6 6A 95, then width and height as big-endian 32-bit.
std::optional<Dimensions> sunRasterDimensions(std::istream& in) {
  unsigned char h[12];
  if (!readAt(in, 0, h, sizeof h) || be32(h) != 0x59A66A95u) return std::nullopt;
  return Dimensions{be32(h + 4), be32(h + 8)};
}

// JPEG 2000: the codestream's SIZ marker segment (Xsiz, Ysiz less the image offsets XOsiz, YOsiz), found at
// the start of a raw codestream or, in a JP2 file, at the start of its contiguous-codestream box (jp2c).
std::optional<Dimensions> jpeg2000CodestreamDimensions(std::istream& in, std::streamoff at) {
  unsigned char h[24];
  if (!readAt(in, at, h, sizeof h) || be16(h) != 0xFF4F || be16(h + 2) != 0xFF51) return std::nullopt;
  const std::uint32_t x = be32(h + 8), y = be32(h + 12), x0 = be32(h + 16), y0 = be32(h + 20);
  return Dimensions{x > x0 ? x - x0 : 0u, y > y0 ? y - y0 : 0u};
}

std::optional<Dimensions> jpeg2000Dimensions(std::istream& in) {
  if (auto size = jpeg2000CodestreamDimensions(in, 0)) return size;
  unsigned char h[16];
  if (!readAt(in, 0, h, 12) || std::memcmp(h, "\0\0\0\x0cjP  \r\n\x87\n", 12) != 0) return std::nullopt;
  std::streamoff pos = 12;
  for (int box = 0; box < 256; ++box) {
    if (!readAt(in, pos, h, 8)) return std::nullopt;
    std::uint64_t length = be32(h);
    std::streamoff header = 8;
    if (length == 1) {  // 64-bit length after the type
      if (!readAt(in, pos + 8, h + 8, 8)) return std::nullopt;
      length = (std::uint64_t{be32(h + 8)} << 32) | be32(h + 12);
      header = 16;
    }
    if (std::memcmp(h + 4, "jp2c", 4) == 0) return jpeg2000CodestreamDimensions(in, pos + header);
    if (length < std::uint64_t(header) || length > (std::uint64_t{1} << 62)) return std::nullopt;
    pos += static_cast<std::streamoff>(length);
  }
  return std::nullopt;
}

std::optional<Dimensions> headerDimensions(std::istream& in) {
  for (auto reader : {pngDimensions, jpegDimensions, bmpDimensions, tiffDimensions, exrDimensions,
                      pnmDimensions, hdrDimensions, sunRasterDimensions, jpeg2000Dimensions}) {
    if (auto size = reader(in)) return size;
  }
  return std::nullopt;
}

// EXR, Radiance HDR and PFM decode to floats; everything else is read the way cv::imread does by default.
bool isFloatFormat(std::istream& in) {
  unsigned char h[10] = {};
  if (!readAt(in, 0, h, sizeof h)) return false;
  return le32(h) == 20000630u || std::memcmp(h, "#?RADIANCE", 10) == 0 || std::memcmp(h, "#?RGBE", 6) == 0 ||
         ((h[0] == 'P') && (h[1] == 'F' || h[1] == 'f') && (h[2] == '\n' || h[2] == '\r' || h[2] == ' '));
}

// Linear scene values -> 8-bit sRGB, what a viewer shows for an EXR.
cv::Mat floatToSrgb8(const cv::Mat& image) {
  constexpr int kSteps = 16384;
  static const std::array<unsigned char, kSteps + 1> lut = [] {
    std::array<unsigned char, kSteps + 1> table{};
    for (int i = 0; i <= kSteps; ++i) {
      const double v = static_cast<double>(i) / kSteps;
      const double s = v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1.0 / 2.4) - 0.055;
      table[i] = static_cast<unsigned char>(std::lround(std::clamp(s, 0.0, 1.0) * 255.0));
    }
    return table;
  }();
  cv::Mat source;
  image.convertTo(source, CV_32F);
  cv::Mat out(source.size(), CV_8UC(source.channels()));
  const int valuesPerRow = source.cols * source.channels();
  for (int y = 0; y < source.rows; ++y) {
    const float* in = source.ptr<float>(y);
    unsigned char* dst = out.ptr<unsigned char>(y);
    for (int x = 0; x < valuesPerRow; ++x) {
      const float v = std::isfinite(in[x]) ? std::clamp(in[x], 0.0f, 1.0f) : (in[x] > 0 ? 1.0f : 0.0f);
      dst[x] = lut[static_cast<std::size_t>(std::lround(v * kSteps))];
    }
  }
  return out;
}

cv::Mat toBgr8(cv::Mat image) {
  if (image.depth() == CV_32F || image.depth() == CV_64F) {
    image = floatToSrgb8(image);
  } else if (image.depth() == CV_16U) {
    image.convertTo(image, CV_8U, 1.0 / 256.0);
  } else if (image.depth() != CV_8U) {
    image.convertTo(image, CV_8U);
  }
  if (image.channels() == 1) cv::cvtColor(image, image, cv::COLOR_GRAY2BGR);
  if (image.channels() == 4) cv::cvtColor(image, image, cv::COLOR_BGRA2BGR);
  return image;
}

// OpenCV 4.5.3+ refuses EXR unless OPENCV_IO_ENABLE_OPENEXR is set (read once, at the first EXR decode).
// We list .exr as an image type, so enable it unless the user chose otherwise in the environment.
void enableOpenExrUnlessConfigured() {
  static std::once_flag once;
  std::call_once(once, [] { ::setenv("OPENCV_IO_ENABLE_OPENEXR", "1", 0); });
}

// Also at load time, before any thread runs: setenv adding a variable moves the environment under
// another thread's getenv (a QtTest watchdog crashed so). Later calls find it set and change nothing.
[[maybe_unused]] const bool openExrEnabledAtLoad = (enableOpenExrUnlessConfigured(), true);

std::string lowerCase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

std::string lowerExtension(const std::string& path) {
  return lowerCase(fs::path(path).extension().string());
}

// Checks the file and its header, then decodes it. `maxSide` > 0 lets OpenCV decode at 1/2, 1/4 or 1/8
// scale when the result stays at least that large.
cv::Mat decodeImage(const std::string& path, int maxSide) {
  OpenedFile file;
  try {
    file = openRegularFile(path, kMaxPictureFileBytes, "an image file");
  } catch (const FileReadError& error) {
    throw MediaError(path, error.reason());
  }
  if (file.size == 0) throw MediaError(path, "file is empty (0 bytes)");
  std::istream& in = file.stream;

  std::optional<Dimensions> size;
  try {
    size = headerDimensions(in);
  } catch (const UncheckableHeader& e) {
    throw MediaError(path, std::string(e.what()) + ": its size cannot be checked; refusing to decode it");
  } catch (const InconsistentHeader& e) {
    throw MediaError(path, std::string(e.what()) + "; refusing to decode it");
  }
  const bool floatFormat = isFloatFormat(in);
  if (size) {
    const std::uint64_t pixels = size->width * size->height;
    const std::uint64_t limit = floatFormat ? kMaxFloatImagePixels : kMaxImagePixels;
    if (size->width > (std::uint64_t{1} << 31) || size->height > (std::uint64_t{1} << 31) || pixels > limit) {
      throw MediaError(path, "image header claims " + std::to_string(size->width) + " x " +
                                 std::to_string(size->height) + " pixels, more than the limit of " +
                                 std::to_string(limit) + (floatFormat ? " for a float picture" : "") +
                                 "; refusing to decode it");
    }
  }
  if (const std::optional<std::streamoff> scan = jpegFirstScan(in);
      scan && !jpegHasEndMarker(in, *scan + 2)) {
    throw MediaError(path, "JPEG data ends before its end-of-image marker: the file is truncated");
  }
  file.stream.close();

  int flags = floatFormat ? cv::IMREAD_COLOR | cv::IMREAD_ANYDEPTH : cv::IMREAD_COLOR;
  if (maxSide > 0 && size && !floatFormat) {
    const std::uint64_t longSide = std::max(size->width, size->height);
    if (longSide >= 8u * std::uint64_t(maxSide)) {
      flags = cv::IMREAD_REDUCED_COLOR_8;
    } else if (longSide >= 4u * std::uint64_t(maxSide)) {
      flags = cv::IMREAD_REDUCED_COLOR_4;
    } else if (longSide >= 2u * std::uint64_t(maxSide)) {
      flags = cv::IMREAD_REDUCED_COLOR_2;
    }
  }
  if (floatFormat) enableOpenExrUnlessConfigured();
  cv::Mat image;
  try {
    image = cv::imread(path, flags);
  } catch (const cv::Exception& e) {
    throw MediaError(path, "cannot decode the image: " + e.err);
  }
  if (image.empty()) throw MediaError(path, "not a decodable image (unknown format or corrupt data)");
  return toBgr8(std::move(image));
}

}  // namespace

cv::Mat readImageBgr(const std::string& path) {
  return decodeImage(path, 0);
}

cv::Mat readImageThumbnailBgr(const std::string& path, int maxSide) {
  if (maxSide <= 0) throw MediaError(path, "thumbnail size must be positive, got " + std::to_string(maxSide));
  cv::Mat image = decodeImage(path, maxSide);
  const int longSide = std::max(image.cols, image.rows);
  if (longSide <= maxSide) return image;
  const double scale = double(maxSide) / longSide;
  cv::Mat thumbnail;
  cv::resize(image, thumbnail,
             cv::Size(std::max(1, int(std::lround(image.cols * scale))),
                      std::max(1, int(std::lround(image.rows * scale)))),
             0, 0, cv::INTER_AREA);
  return thumbnail;
}

bool hasImageExtension(const std::string& path) {
  static const std::array<const char*, 8> kExtensions = {".png", ".jpg",  ".jpeg", ".bmp",
                                                         ".tif", ".tiff", ".webp", ".exr"};
  const std::string ext = lowerExtension(path);
  return std::any_of(kExtensions.begin(), kExtensions.end(), [&ext](const char* e) { return ext == e; });
}

std::vector<std::string> listImages(const std::string& folder, bool recursive) {
  std::error_code ec;
  const fs::file_status status = fs::status(folder, ec);
  if (!fs::exists(status)) throw MediaError(folder, "no such folder");
  if (!fs::is_directory(status)) throw MediaError(folder, "is not a folder");

  std::vector<std::string> images;
  auto consider = [&images](const fs::directory_entry& entry) {
    std::error_code fileEc;
    const std::string name = entry.path().filename().string();
    // Broken links named like pictures are listed too, so that a batch reports them instead of
    // silently skipping them.
    const bool candidate = entry.is_regular_file(fileEc) || entry.is_symlink(fileEc);
    if (!name.empty() && name[0] != '.' && candidate && hasImageExtension(name)) {
      images.push_back(entry.path().string());
    }
  };
  const auto options = fs::directory_options::skip_permission_denied;
  if (recursive) {
    fs::recursive_directory_iterator it(folder, options, ec);
    if (ec) throw MediaError(folder, "cannot list the folder: " + ec.message());
    for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
      if (ec) break;
      const std::string name = it->path().filename().string();
      std::error_code dirEc;
      // Hidden folders (.git, .cache, ...) hold no user images.
      if (!name.empty() && name[0] == '.' && it->is_directory(dirEc)) {
        it.disable_recursion_pending();
        continue;
      }
      consider(*it);
    }
  } else {
    fs::directory_iterator it(folder, options, ec);
    if (ec) throw MediaError(folder, "cannot list the folder: " + ec.message());
    for (const fs::directory_iterator end; it != end; it.increment(ec)) {
      if (ec) break;
      consider(*it);
    }
  }
  std::sort(images.begin(), images.end(), [](const std::string& a, const std::string& b) {
    const std::string la = lowerCase(a);
    const std::string lb = lowerCase(b);
    return la != lb ? la < lb : a < b;
  });
  return images;
}

}  // namespace sapiens
