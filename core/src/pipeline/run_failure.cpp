#include "sapiens/pipeline/run_failure.h"

#include "sapiens/model/model_error.h"

#include <c10/util/Exception.h>
#include <opencv2/core.hpp>

#include <algorithm>
#include <new>

namespace sapiens {

RunFailure classifyFailure(const std::exception& e) {
  RunFailure failure;
  const auto* torchError = dynamic_cast<const c10::Error*>(&e);
  failure.message = torchError ? torchError->what_without_backtrace() : e.what();
  failure.message.resize(std::min(failure.message.find('\n'), failure.message.size()));
  if (dynamic_cast<const ModelOutOfMemoryError*>(&e) || dynamic_cast<const c10::OutOfMemoryError*>(&e) ||
      dynamic_cast<const std::bad_alloc*>(&e)) {
    failure.outOfMemory = true;
  } else if (const auto* cvError = dynamic_cast<const cv::Exception*>(&e)) {
    failure.outOfMemory = cvError->code == cv::Error::StsNoMem;
  } else {
    // LibTorch's CPU allocator says so in a plain c10::Error.
    failure.outOfMemory = failure.message.find("can't allocate memory") != std::string::npos;
  }
  return failure;
}

}  // namespace sapiens
