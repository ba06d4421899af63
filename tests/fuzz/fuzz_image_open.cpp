// libFuzzer target: opening a still picture (readImageBgr, readImageThumbnailBgr) on arbitrary bytes. The
// first byte picks the file's extension (low 3 bits) and the call: bit 3 clear reads the whole picture, set
// reads a thumbnail of at most 1 + (byte >> 4) pixels a side; the rest is the file. OpenCV chooses its
// decoder by the file's content, so the extension mostly varies the name; our header checks (size limits,
// truncated JPEG) and conversions run on every input. Every input must give a non-empty CV_8UC3 picture
// within the pixel limit (and the thumbnail size) or be refused with MediaError; anything else (a crash, a
// sanitizer report, another exception) is a bug.

#include "fuzz_support.h"
#include "sapiens/media/image_io.h"

#include <sys/resource.h>

#include <opencv2/core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#define SAPIENS_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SAPIENS_FUZZ_ASAN 1
#endif
#endif

namespace {

// A header claiming a huge picture must be refused before OpenCV allocates it (a 30-byte PPM made it
// allocate 2.7 GB). libFuzzer reports such an allocation itself (-malloc_limit_mb); the replay test, built
// without sanitizers, gets a 2 GiB data limit instead, under which the allocation fails and comes back as
// a MediaError saying so, which the check below counts as a finding.
void limitMemoryOnce() {
#ifndef SAPIENS_FUZZ_ASAN
  static const bool limited = [] {
    rlimit limit{};
    const rlim_t cap = rlim_t{2} << 30;
    if (getrlimit(RLIMIT_DATA, &limit) == 0 && (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > cap)) {
      limit.rlim_cur = cap;
      setrlimit(RLIMIT_DATA, &limit);
    }
    return true;
  }();
  (void)limited;
#endif
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  limitMemoryOnce();
  if (size == 0) return 0;
  static const std::array<const char*, 8> kExtensions = {".png", ".jpg",  ".bmp", ".tif",
                                                         ".exr", ".webp", ".hdr", ".ppm"};
  const std::uint8_t selector = data[0];
  const std::string path = sapiens::fuzz::scratchDir("image_open") + "/input" + kExtensions[selector & 7u];
  sapiens::fuzz::writeFile(path, data + 1, size - 1);
  const bool thumbnail = (selector & 8u) != 0;
  const int maxSide = 1 + (selector >> 4);
  try {
    const cv::Mat image =
        thumbnail ? sapiens::readImageThumbnailBgr(path, maxSide) : sapiens::readImageBgr(path);
    sapiens::fuzz::check(!image.empty() && image.type() == CV_8UC3, "the picture is a non-empty CV_8UC3");
    sapiens::fuzz::check(std::uint64_t(image.cols) * std::uint64_t(image.rows) <= sapiens::kMaxImagePixels,
                         "the picture is within kMaxImagePixels");
    if (thumbnail)
      sapiens::fuzz::check(std::max(image.cols, image.rows) <= maxSide, "the thumbnail is at most maxSide");
  } catch (const sapiens::MediaError& error) {
    sapiens::fuzz::check(std::strstr(error.what(), "Failed to allocate") == nullptr,
                         "a picture too large is refused by its header, before OpenCV fails to allocate it");
  }
  return 0;
}
