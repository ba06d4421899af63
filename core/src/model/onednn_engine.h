#pragma once
// What the oneDNN-based kernels share (onednn_matmul.cpp, attention_onednn.cpp): the CPU engine and a
// cache of matmul primitives by description. Only for files built with SAPIENS_HAVE_ONEDNN.

#include <dnnl.hpp>

#include <functional>
#include <optional>
#include <string>

namespace sapiens::detail {

const dnnl::engine& oneDnnEngine();

/// The matmul primitive `key` names, made from `describe()` the first time it is asked for. Empty when
/// oneDNN has only its reference kernel for it (far slower than ATen) or cannot make it; that answer is
/// cached too.
const std::optional<dnnl::matmul>& cachedMatmul(
    const std::string& key, const std::function<dnnl::matmul::primitive_desc()>& describe);

}  // namespace sapiens::detail
