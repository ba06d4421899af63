#include "export/png_by_rows.h"

#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"

#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <csetjmp>
#include <string>
#include <vector>

namespace sapiens::detail {

namespace {

constexpr int kBandRows = 64;

// libpng's callbacks run inside C code: nothing may throw through them. A failed write is kept here and
// the rest of the stream ignored; libpng's own errors are kept and reported by its longjmp.
struct Sink {
  AtomicFile* file;
  std::string writeError;
  std::string pngError;
};

void writeToSink(png_structp png, png_bytep data, png_size_t size) {
  auto* sink = static_cast<Sink*>(png_get_io_ptr(png));
  if (!sink->writeError.empty()) return;
  try {
    sink->file->write(data, size);
  } catch (const std::exception& error) {
    sink->writeError = error.what();
  }
}

void flushNothing(png_structp) {}

void keepError(png_structp png, png_const_charp message) {
  static_cast<Sink*>(png_get_error_ptr(png))->pngError = message ? message : "unknown error";
  png_longjmp(png, 1);
}

void ignoreWarning(png_structp, png_const_charp) {}

// Every call into libpng goes through here: its error handler longjmps back to this frame, which holds
// nothing with a destructor (nor does `call`, a lambda of references).
template <typename Call>
bool guarded(png_structp png, const Call& call) {
  if (setjmp(png_jmpbuf(png))) return false;
  call();
  return true;
}

class PngWriter {
 public:
  explicit PngWriter(Sink& sink) {
    png_ = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, keepError, ignoreWarning);
    if (png_) info_ = png_create_info_struct(png_);
  }
  ~PngWriter() { png_destroy_write_struct(&png_, &info_); }
  PngWriter(const PngWriter&) = delete;
  PngWriter& operator=(const PngWriter&) = delete;
  bool valid() const { return png_ && info_; }
  png_structp png() const { return png_; }
  png_infop info() const { return info_; }

 private:
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
};

}  // namespace

void writePngByRows(const std::string& path, int width, int height, int channels, const FillRows& fill,
                    const std::string& note) {
  if (width <= 0 || height <= 0 || (channels != 1 && channels != 3))
    throw ExportError(path, "a PNG of " + std::to_string(width) + " x " + std::to_string(height) + " with " +
                                std::to_string(channels) + " channels cannot be written");
  AtomicFile file(path);
  Sink sink{&file, {}, {}};
  PngWriter writer(sink);
  if (!writer.valid()) throw ExportError(path, "libpng could not start a PNG (out of memory)");
  png_structp png = writer.png();
  std::string comment = note;
  png_text text{};
  text.compression = PNG_TEXT_COMPRESSION_NONE;
  text.key = const_cast<char*>("Comment");
  text.text = comment.data();
  text.text_length = comment.size();
  bool ok = guarded(png, [&] {
    png_set_write_fn(png, &sink, writeToSink, flushNothing);
    png_set_IHDR(png, writer.info(), static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
                 channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
    png_set_compression_level(png, 1);
    png_set_compression_strategy(png, Z_RLE);
    if (!comment.empty()) png_set_text(png, writer.info(), &text, 1);
    png_write_info(png, writer.info());
    if (channels == 3) png_set_bgr(png);
  });
  cv::Mat band(std::min(kBandRows, height), width, CV_8UC(channels));
  for (int first = 0; ok && sink.writeError.empty() && first < height; first += kBandRows) {
    cv::Mat rows = band.rowRange(0, std::min(kBandRows, height - first));
    fill(first, rows);
    if (rows.data != band.data || rows.type() != band.type() || rows.cols != width)
      throw ExportError(path, "the rows to write were not filled in place");
    ok = guarded(png, [&] {
      for (int r = 0; r < rows.rows; ++r) png_write_row(png, rows.ptr(r));
    });
  }
  if (ok && sink.writeError.empty()) ok = guarded(png, [&] { png_write_end(png, nullptr); });
  if (!sink.writeError.empty()) throw IoError(sink.writeError);
  if (!ok) throw ExportError(path, "libpng could not write the picture: " + sink.pngError);
  file.commit();
}

}  // namespace sapiens::detail
