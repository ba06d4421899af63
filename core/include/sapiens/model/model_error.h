#pragma once
// Errors from reading, checking and running Sapiens2 models. Messages are complete sentences that name
// the file (and key or shape) involved; they fit on one line.

#include <stdexcept>
#include <string>

namespace sapiens {

/// The file is not a usable Sapiens2 checkpoint (unrecognised tensors, inconsistent shapes, wrong task).
class ModelFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The model cannot run on what it was given (input shape, device, dtype).
class ModelRunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A pass that ran out of host or GPU memory; the message says which, at what batch and input size, and
/// what to lower. Front ends may say it in their own terms.
class ModelOutOfMemoryError : public ModelRunError {
 public:
  ModelOutOfMemoryError(const std::string& message, bool onGpu) : ModelRunError(message), onGpu_(onGpu) {}
  bool onGpu() const { return onGpu_; }

 private:
  bool onGpu_;
};

}  // namespace sapiens
