#include "sapiens/finetune/feature_cache.h"

#include "sapiens/common/log.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/model.h"
#include "sapiens/model/parameter_layout.h"
#include "sapiens/model/safetensors_torch.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include <unistd.h>

namespace sapiens {

namespace fs = std::filesystem;

namespace {

// FNV-1a, 64 bits: enough to tell inputs apart, far cheaper than the backbone pass it saves.
std::uint64_t hashBytes(const void* data, std::size_t size, std::uint64_t hash = 1469598103934665603ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

std::uint64_t hashTensor(const at::Tensor& tensor, std::uint64_t hash, std::size_t maxBytes) {
  const at::Tensor cpu = tensor.to(at::kCPU).contiguous();
  const std::size_t bytes = std::min(maxBytes, static_cast<std::size_t>(cpu.nbytes()));
  hash = hashBytes(cpu.sizes().data(), cpu.sizes().size() * sizeof(std::int64_t), hash);
  return hashBytes(cpu.data_ptr(), bytes, hash);
}

}  // namespace

struct FeatureCache::Entries {
  struct Entry {
    at::Tensor tensor;  ///< undefined when spilled
    std::string file;
  };
  std::map<std::string, Entry> byKey;
};

FeatureCache::FeatureCache(std::size_t memoryBytes, std::string folder)
    : entries_(std::make_unique<Entries>()), budget_(memoryBytes), folder_(std::move(folder)) {}

FeatureCache::~FeatureCache() {
  if (ownsFolder_) {
    std::error_code ec;
    fs::remove_all(folder_, ec);
  }
}

std::string FeatureCache::backboneFingerprint(const Model& model) {
  std::uint64_t hash = hashBytes(model.device().str().data(), model.device().str().size());
  hash = hashBytes(computeDtypeName(model.dtype()).data(), computeDtypeName(model.dtype()).size(), hash);
  for (const auto& [name, tensor] : model.parameters()) {
    if (name.rfind(kHeadPrefix, 0) == 0) continue;
    hash = hashBytes(name.data(), name.size(), hash);
    hash = hashTensor(tensor, hash, 4096);
  }
  return fmt::format("{:016x}", hash);
}

std::string FeatureCache::key(const std::string& backboneFingerprint, const at::Tensor& input) {
  return fmt::format("{}-{:016x}", backboneFingerprint, hashTensor(input, 1469598103934665603ull, SIZE_MAX));
}

std::optional<at::Tensor> FeatureCache::find(const std::string& key) const {
  std::string file;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_->byKey.find(key);
    if (it == entries_->byKey.end()) return std::nullopt;
    if (it->second.tensor.defined()) return it->second.tensor;
    file = it->second.file;
  }
  const SafetensorsFile spilled = SafetensorsFile::open(file);
  return loadTensor(spilled, spilled.tensors().front());
}

void FeatureCache::insert(const std::string& key, const at::Tensor& features) {
  const at::Tensor cpu = features.detach().to(at::kCPU).contiguous();
  const auto bytes = static_cast<std::size_t>(cpu.nbytes());
  std::unique_lock<std::mutex> lock(mutex_);
  if (entries_->byKey.count(key) != 0) return;
  if (used_ + bytes <= budget_) {
    entries_->byKey[key] = Entries::Entry{cpu.clone(), {}};
    used_ += bytes;
    return;
  }
  if (folder_.empty()) {
    folder_ = (fs::temp_directory_path() /
               fmt::format("sapiens-features-{}-{}", ::getpid(), reinterpret_cast<std::uintptr_t>(this)))
                  .string();
    ownsFolder_ = true;
  }
  std::error_code ec;
  fs::create_directories(folder_, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create the feature cache folder: {}", folder_, ec.message()));
  const std::string file = (fs::path(folder_) / (key + ".safetensors")).string();
  if (spills_++ == 0)
    logger().info("Feature cache over its {} MiB budget: spilling to {}", budget_ >> 20, folder_);
  lock.unlock();
  saveSafetensors(file, {{"features", cpu}});
  lock.lock();
  entries_->byKey[key] = Entries::Entry{at::Tensor(), file};
}

std::size_t FeatureCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_->byKey.size();
}

std::size_t FeatureCache::memoryBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

std::size_t FeatureCache::spilledEntries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t spilled = 0;
  for (const auto& entry : entries_->byKey) spilled += entry.second.tensor.defined() ? 0 : 1;
  return spilled;
}

void FeatureCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& entry : entries_->byKey) {
    std::error_code ec;
    if (!entry.second.file.empty()) fs::remove(entry.second.file, ec);
  }
  entries_->byKey.clear();
  used_ = 0;
}

}  // namespace sapiens
