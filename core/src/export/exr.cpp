#include "sapiens/export/exr.h"

#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace sapiens {

namespace {

struct ExrSupport {
  bool supported = false;
  std::string reason;
};

// At load time, before any thread runs (see image_io.cpp); probeExrSupport's call then changes nothing.
[[maybe_unused]] const bool openExrEnabledAtLoad = (::setenv("OPENCV_IO_ENABLE_OPENEXR", "1", 0), true);

ExrSupport probeExrSupport() {
  // OpenCV reads this variable once, at the codec's first use; it must be set before that. An explicit
  // value in the environment (e.g. 0 to disable the codec) is respected.
  ::setenv("OPENCV_IO_ENABLE_OPENEXR", "1", /*overwrite=*/0);
  ExrSupport support;
  if (!cv::haveImageWriter(".exr")) {
    support.reason = "this OpenCV build has no OpenEXR encoder";
    return support;
  }
  try {
    std::vector<uchar> encoded;
    const cv::Mat probe(1, 1, CV_32FC1, cv::Scalar(0.5));
    support.supported = cv::imencode(".exr", probe, encoded) && !encoded.empty();
    if (!support.supported) support.reason = "OpenCV failed to encode a test OpenEXR image";
  } catch (const cv::Exception& error) {
    support.reason = "OpenCV's OpenEXR codec is unavailable: " + error.msg;
  }
  return support;
}

const ExrSupport& exrSupport() {
  static const ExrSupport support = probeExrSupport();
  return support;
}

}  // namespace

bool exrWritingSupported(std::string* reason) {
  const ExrSupport& support = exrSupport();
  if (reason != nullptr) *reason = support.reason;
  return support.supported;
}

void writeExr(const std::string& path, const cv::Mat& map) {
  std::string reason;
  if (!exrWritingSupported(&reason)) throw ExportError(path, "cannot write OpenEXR: " + reason);
  if (map.empty() || (map.type() != CV_32FC1 && map.type() != CV_32FC3)) {
    throw ExportError(path, "OpenEXR export takes a CV_32FC1 or CV_32FC3 map, not " +
                                (map.empty() ? std::string("an empty one") : cv::typeToString(map.type())));
  }
  // OpenCV names the channels of a 3-channel image B, G, R (in memory order): reverse so that channel 0
  // (x or red) becomes the EXR channel R.
  cv::Mat ordered;
  if (map.channels() == 3) {
    cv::cvtColor(map, ordered, cv::COLOR_RGB2BGR);
  } else {
    ordered = map;
  }
  // Written by name into a temporary file beside the target: OpenCV's in-memory OpenEXR encoding goes
  // through a file of its own in the system's temp folder, which a killed run would leave behind.
  const std::vector<int> params = {cv::IMWRITE_EXR_TYPE, cv::IMWRITE_EXR_TYPE_FLOAT};
  AtomicFile file(path, ".exr");
  try {
    if (!cv::imwrite(file.temporaryPath(), ordered, params)) {
      throw ExportError(path, "OpenCV failed to write the map as OpenEXR");
    }
  } catch (const cv::Exception& error) {
    throw ExportError(path, "OpenCV failed to write the map as OpenEXR: " + error.msg);
  }
  file.commit();
}

}  // namespace sapiens
