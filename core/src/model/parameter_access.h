#pragma once
// Looks up a model's named parameters under a key prefix ("backbone.", "decode_head.", "blocks.3.").

#include "sapiens/model/model_error.h"

#include <ATen/core/Tensor.h>
#include <fmt/format.h>

#include <map>
#include <string>

namespace sapiens::detail {

class ParameterAccess {
 public:
  ParameterAccess(const std::map<std::string, at::Tensor>& parameters, std::string prefix)
      : parameters_(parameters), prefix_(std::move(prefix)) {}

  /// Throws ModelRunError naming the full key when absent.
  const at::Tensor& operator()(const std::string& name) const {
    auto it = parameters_.find(prefix_ + name);
    if (it == parameters_.end())
      throw ModelRunError(fmt::format("model parameter {}{} is missing", prefix_, name));
    return it->second;
  }
  /// Undefined tensor when absent (optional biases).
  at::Tensor optional(const std::string& name) const {
    auto it = parameters_.find(prefix_ + name);
    return it == parameters_.end() ? at::Tensor() : it->second;
  }
  ParameterAccess sub(const std::string& more) const { return ParameterAccess(parameters_, prefix_ + more); }

 private:
  const std::map<std::string, at::Tensor>& parameters_;
  std::string prefix_;
};

}  // namespace sapiens::detail
