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

}  // namespace sapiens
