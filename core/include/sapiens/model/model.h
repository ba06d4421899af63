#pragma once
// A Sapiens2 model: its architecture plus named parameter tensors (exactly the checkpoint's keys), run
// by plain ATen functions. Loading is strict and needs no configuration; the forward pass reproduces
// the official implementation's numerics, including its bfloat16 rotary embedding.

#include "sapiens/model/architecture.h"
#include "sapiens/model/task.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sapiens {

struct ModelOptions {
  std::string device = "cpu";                ///< "cpu", "cuda", "cuda:N" or "auto"
  std::optional<c10::ScalarType> dtype;      ///< default (auto): defaultComputeDtype(device)
  std::optional<Task> expectedTask;          ///< refuse files of another task
  std::optional<Architecture> expectedArch;  ///< check against this instead of the inferred one
};

/// Precision of the rotary position embedding. The official model computes it in bfloat16; Float32
/// exists only to show that the parity tests notice the difference.
enum class RopePrecision { BFloat16, Float32 };

struct ForwardOptions {
  bool intermediates = false;  ///< also return patch_embed_out, block0_*, gqa_block_*, last_block_out, rope_*
  bool inferenceMode = true;   ///< false keeps autograd available (fine-tuning)
  RopePrecision ropePrecision = RopePrecision::BFloat16;
};

/// Named forward results, in the order they were produced. Names as in the golden io.safetensors:
/// backbone_out, backbone_featmap (backbone models), pose_heatmaps, seg_logits, normal, albedo, pointmap,
/// scale, matting (B x 4 x H x W: premultiplied foreground RGB, then alpha), and the intermediates.
class ModelOutputs {
 public:
  void add(std::string name, at::Tensor tensor);
  bool contains(std::string_view name) const;
  /// Throws std::out_of_range naming the missing output.
  const at::Tensor& get(std::string_view name) const;
  const std::vector<std::pair<std::string, at::Tensor>>& all() const { return tensors_; }

 private:
  std::vector<std::pair<std::string, at::Tensor>> tensors_;
};

class Model {
 public:
  /// Reads a .safetensors checkpoint (pretrain = backbone only, or backbone + task head). Every missing,
  /// unexpected and mis-shaped tensor is reported in one ModelFormatError naming the file.
  static Model load(const std::string& path, const ModelOptions& options = {});
  /// Random weights with the official initialisation scheme (for benchmarks and fresh heads); the
  /// same seed gives the same weights on every device.
  static Model random(const Architecture& arch, const ModelOptions& options = {}, std::uint64_t seed = 0);

  const Architecture& architecture() const { return arch_; }
  Task task() const { return arch_.task; }
  const c10::Device& device() const { return device_; }
  c10::ScalarType dtype() const { return dtype_; }
  /// The file it came from ("" for random models).
  const std::string& source() const { return source_; }
  /// The checkpoint's safetensors "__metadata__" (empty for random models).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  /// Whether the checkpoint is Sapiens2 Studio's untrained demo weights (metadata
  /// "sapiens_demo_weights": "untrained", see demo_weights.h). Front ends must label their results so.
  bool isDemoWeights() const;

  /// Keys exactly as in the checkpoint (`backbone.`/`decode_head.` prefixes for task models). The
  /// tensors are the ones the forward pass reads: modifying them in place changes the model.
  std::map<std::string, at::Tensor>& parameters() { return parameters_; }
  const std::map<std::string, at::Tensor>& parameters() const { return parameters_; }

  /// `input`: (B, 3, H, W) normalised RGB, H and W multiples of architecture().backbone.inputMultiple().
  /// Moved to the model's device and dtype. Throws ModelRunError for an unusable shape, and for an input
  /// the device has no memory for (naming the batch and size); the model stays usable after either.
  ModelOutputs forward(const at::Tensor& input, const ForwardOptions& options = {}) const;

  // Fine-tuning the head on precomputed backbone features.

  /// The featmap the head consumes, (B, C, H/16, W/16), computed in inference mode (no autograd) and
  /// returned as an ordinary tensor, so that autograd may record the head on it. Same checks as forward().
  at::Tensor backboneFeatures(const at::Tensor& input,
                              RopePrecision ropePrecision = RopePrecision::BFloat16) const;
  /// The head alone on a featmap from backboneFeatures(): forward() == forwardHead(backboneFeatures())
  /// bit for bit. With options.inferenceMode false, autograd records it. Throws ModelRunError for a
  /// backbone-only model or a featmap of the wrong width.
  ModelOutputs forwardHead(const at::Tensor& featmap, const ForwardOptions& options = {}) const;
  /// The head's tensors (keys under "decode_head.", layout order), sharing storage and autograd state
  /// with parameters().
  std::vector<std::pair<std::string, at::Tensor>> headParameters() const;
  /// Replaces the head by one of other widths (e.g. another class count) with fresh weights in the
  /// official initialisation; the backbone is kept. Throws ModelFormatError for a backbone-only model.
  void resetHead(const HeadArch& head, std::uint64_t seed = 0);
  /// Replaces the head by `tensors` (every key of `head`'s layout with its exact shape, nothing else),
  /// converted to the model's device and dtype. Throws ModelFormatError naming `source` and every problem.
  void setHead(const HeadArch& head, const std::map<std::string, at::Tensor>& tensors,
               const std::string& source);

 private:
  Model(Architecture arch, std::map<std::string, at::Tensor> parameters, c10::Device device,
        c10::ScalarType dtype, std::string source);
  ModelOutputs forwardChecked(const at::Tensor& input, const ForwardOptions& options) const;

  Architecture arch_;
  std::map<std::string, at::Tensor> parameters_;
  c10::Device device_;
  c10::ScalarType dtype_;
  std::string source_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace sapiens
