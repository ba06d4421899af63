#pragma once
// Backbone features by content: the key is a fingerprint of the backbone and of the exact network input,
// so a changed frame, crop or backbone misses by construction (nothing to invalidate). Entries stay in
// memory up to a budget; beyond it they spill to files in a folder and are mapped back on use. Shared
// between fine-tuning runs (e.g. a GUI keeps one across edits). Thread-safe.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace at {
class Tensor;
}

namespace sapiens {

class Model;

class FeatureCache {
 public:
  /// `folder` "": a fresh temporary folder, removed with the cache.
  explicit FeatureCache(std::size_t memoryBytes, std::string folder = {});
  ~FeatureCache();
  FeatureCache(const FeatureCache&) = delete;
  FeatureCache& operator=(const FeatureCache&) = delete;

  /// Identifies a backbone: its architecture, device, dtype and a hash of its tensors' leading bytes.
  static std::string backboneFingerprint(const Model& model);
  /// backboneFingerprint + a hash of the input tensor's bytes and shape.
  static std::string key(const std::string& backboneFingerprint, const at::Tensor& input);

  std::optional<at::Tensor> find(const std::string& key) const;
  /// Stores a CPU copy. Throws IoError when a spill cannot be written.
  void insert(const std::string& key, const at::Tensor& features);

  std::size_t size() const;
  std::size_t memoryBytes() const;
  std::size_t spilledEntries() const;
  void clear();

 private:
  struct Entries;  // by key; in memory or spilled to a file
  mutable std::mutex mutex_;
  std::unique_ptr<Entries> entries_;
  std::size_t budget_;
  std::size_t used_ = 0;
  std::string folder_;
  bool ownsFolder_ = false;
  std::uint64_t spills_ = 0;
};

}  // namespace sapiens
