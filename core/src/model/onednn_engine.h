#pragma once
// What the oneDNN-based kernels share (onednn_matmul.cpp, attention_onednn.cpp, onednn_deconvolution.cpp):
// the CPU engine and caches of primitives by description. Only for files built with SAPIENS_HAVE_ONEDNN.

#include <dnnl.hpp>

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace sapiens::detail {

const dnnl::engine& oneDnnEngine();

/// Whether `impl` (a primitive descriptor's impl_info_str) is oneDNN's reference kernel, far slower than
/// ATen; logs that `key` goes back to ATen when it is.
bool onlyReferenceKernel(const char* impl, const std::string& key);

/// Logs that oneDNN could not make `key`, which goes back to ATen.
void logOneDnnCannotMake(const std::string& key, const dnnl::error& error);

/// What `make()` gives for `key`, made the first time it is asked for and cached, an empty answer (no
/// kernel worth using) too; a dnnl::error while making it is an empty answer.
template <typename Made>
const std::optional<Made>& cachedOneDnn(const std::string& key,
                                        const std::function<std::optional<Made>()>& make) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::optional<Made>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  std::optional<Made> made;
  try {
    made = make();
  } catch (const dnnl::error& error) {
    logOneDnnCannotMake(key, error);
  }
  return cache.emplace(key, std::move(made)).first->second;
}

/// The matmul primitive `key` names, made from `describe()` the first time it is asked for. Empty when
/// oneDNN has only its reference kernel for it or cannot make it; that answer is cached too.
const std::optional<dnnl::matmul>& cachedMatmul(
    const std::string& key, const std::function<dnnl::matmul::primitive_desc()>& describe);

}  // namespace sapiens::detail
