#pragma once
// What a front end needs to know about an exception that ended a run, whichever library threw it.

#include <exception>
#include <string>

namespace sapiens {

struct RunFailure {
  std::string message;       ///< the first line of the message, without LibTorch's backtrace
  bool outOfMemory = false;  ///< an allocation failed, on the host or a GPU
};

/// The model's passes report running out of memory as ModelOutOfMemoryError; pre- and post-processing
/// throw LibTorch's, OpenCV's or the standard library's own errors, which this recognises too.
RunFailure classifyFailure(const std::exception& e);

}  // namespace sapiens
