#include "taught_branch.h"

#include "model/head_forward.h"
#include "model/layers.h"
#include "sapiens/model/parameter_layout.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <stdexcept>

namespace sapiens::detail {

namespace {

struct Widened {
  at::Tensor value, trainable;
};

// A layer's weight with its output axis doubled (the copy beside the original) and, unless it reads the
// backbone, its input axis too, the copy reading only the copy: [[W, 0], [0, C]].
Widened widenWeight(const at::Tensor& weight, const at::Tensor& copy, std::int64_t inAxis,
                    std::int64_t outAxis, bool widenInput) {
  const std::int64_t in = weight.size(inAxis), out = weight.size(outAxis);
  std::vector<std::int64_t> shape = weight.sizes().vec();
  shape[static_cast<std::size_t>(outAxis)] *= 2;
  if (widenInput) shape[static_cast<std::size_t>(inAxis)] *= 2;
  Widened w{at::zeros(shape, weight.options()), at::zeros(shape, weight.options())};
  w.value.narrow(outAxis, 0, out).narrow(inAxis, 0, in).copy_(weight);
  const std::int64_t inStart = widenInput ? in : 0;
  w.value.narrow(outAxis, out, out).narrow(inAxis, inStart, in).copy_(copy);
  w.trainable.narrow(outAxis, out, out).narrow(inAxis, inStart, in).fill_(1);
  return w;
}

Widened widenBias(const at::Tensor& bias, const at::Tensor& copy) {
  const std::int64_t out = bias.size(0);
  Widened w{at::cat({bias, copy}), at::zeros({2 * out}, bias.options())};
  w.trainable.narrow(0, out, out).fill_(1);
  return w;
}

const at::Tensor& tensorAt(const std::map<std::string, at::Tensor>& tensors, const std::string& key) {
  const auto found = tensors.find(key);
  if (found == tensors.end()) throw std::invalid_argument("the head has no tensor " + key);
  return found->second;
}

}  // namespace

TaughtBranchHead widenForTaughtOutputs(Task task, const HeadArch& head,
                                       const std::map<std::string, at::Tensor>& tensors,
                                       const at::Tensor& taught) {
  return widenForTaughtOutputs(task, head, tensors, tensors, taught);
}

TaughtBranchHead widenForTaughtOutputs(Task task, const HeadArch& head,
                                       const std::map<std::string, at::Tensor>& tensors,
                                       const std::map<std::string, at::Tensor>& copy,
                                       const at::Tensor& taught) {
  at::NoGradGuard noGrad;
  if (task != Task::Pose && task != Task::Seg)
    throw std::invalid_argument("only pose and seg heads have outputs of their own to keep");
  const std::string prefix = kHeadPrefix;
  TaughtBranchHead result;
  result.head = head;
  const auto put = [&](const std::string& key, Widened w) {
    result.tensors[key] = std::move(w.value);
    result.trainable[key] = std::move(w.trainable);
  };
  bool readsBackbone = true;
  for (std::size_t t = 0; t < head.deconvChannels.size(); ++t) {
    const std::string key = fmt::format("{}deconv_layers.{}.weight", prefix, 3 * t);
    put(key, widenWeight(tensorAt(tensors, key), tensorAt(copy, key), 0, 1,
                         !readsBackbone));  // transposed: (in, out, k, k)
    result.head.deconvChannels[t] *= 2;
    readsBackbone = false;
  }
  for (std::size_t t = 0; t < head.convChannels.size(); ++t) {
    const std::string layer = fmt::format("{}conv_layers.{}", prefix, 3 * t);
    put(layer + ".weight", widenWeight(tensorAt(tensors, layer + ".weight"),
                                       tensorAt(copy, layer + ".weight"), 1, 0, !readsBackbone));
    if (tensors.count(layer + ".bias"))
      put(layer + ".bias", widenBias(tensors.at(layer + ".bias"), tensorAt(copy, layer + ".bias")));
    result.head.convChannels[t] *= 2;
    readsBackbone = false;
  }
  if (readsBackbone) throw std::invalid_argument("the head has no layer before its last one to copy");

  // The last layer: an output nobody labelled reads the starting branch with its own weights, a taught
  // one reads the copy, starting from its own weights too.
  const std::string last = prefix + (task == Task::Pose ? "conv_pose" : "conv_seg");
  const at::Tensor& weight = tensorAt(tensors, last + ".weight");
  const at::Tensor& copyWeight = tensorAt(copy, last + ".weight");
  const std::int64_t outputs = weight.size(0), in = weight.size(1);
  if (taught.numel() != outputs)
    throw std::invalid_argument(
        fmt::format("{} outputs taught or not for a head of {}", taught.numel(), outputs));
  const at::Tensor rows = taught.to(at::kBool).to(weight.device()).view({-1, 1, 1, 1});
  std::vector<std::int64_t> shape = weight.sizes().vec();
  shape[1] *= 2;
  Widened w{at::zeros(shape, weight.options()), at::zeros(shape, weight.options())};
  w.value.narrow(1, 0, in).copy_(at::where(rows, at::zeros_like(weight), weight));
  w.value.narrow(1, in, in).copy_(at::where(rows, copyWeight, at::zeros_like(weight)));
  w.trainable.narrow(1, in, in).copy_(rows.expand_as(weight));
  put(last + ".weight", std::move(w));
  const at::Tensor& bias = tensorAt(tensors, last + ".bias");
  const at::Tensor taughtBias = taught.to(bias.device()).to(at::kBool);
  put(last + ".bias",
      {at::where(taughtBias, tensorAt(copy, last + ".bias"), bias), taught.to(bias.options())});

  for (const auto& [key, tensor] : tensors) {
    if (!result.tensors.count(key)) throw std::invalid_argument("cannot widen the head's tensor " + key);
  }
  return result;
}

namespace {

std::string lastLayer(Task task) {
  return std::string(kHeadPrefix) + (task == Task::Pose ? "conv_pose" : "conv_seg");
}

}  // namespace

TaughtBranchTraining::TaughtBranchTraining(Task task, HeadArch head,
                                           std::map<std::string, at::Tensor> starting,
                                           const at::Tensor& taught)
    : task_(task),
      head_(std::move(head)),
      starting_(std::move(starting)),
      taught_(taught.to(at::kBool).cpu()) {
  widened_ = widenForTaughtOutputs(task_, head_, starting_, taught_);  // checks the task and the layout
  taughtIndex_ = taught_.nonzero().view({-1});
  for (auto& [key, tensor] : starting_) {
    tensor = tensor.detach();
    copy_[key] = tensor.clone().requires_grad_(true);
  }
}

const char* TaughtBranchTraining::outputName() const {
  return task_ == Task::Pose ? "pose_heatmaps" : "seg_logits";
}

std::vector<at::Tensor> TaughtBranchTraining::trainedTensors() const {
  std::vector<at::Tensor> tensors;
  for (const auto& entry : copy_) tensors.push_back(entry.second);
  return tensors;
}

std::vector<std::string> TaughtBranchTraining::trainedNames() const {
  std::vector<std::string> names;
  for (const auto& entry : copy_) names.push_back(entry.first);
  return names;
}

at::Tensor TaughtBranchTraining::startingOutputs(const at::Tensor& featmap) const {
  at::NoGradGuard noGrad;
  ModelOutputs outputs;
  runHead(ParameterAccess(starting_, kHeadPrefix), task_, head_, featmap, outputs);
  return outputs.get(outputName());
}

at::Tensor TaughtBranchTraining::forward(const at::Tensor& featmap, at::Tensor untaught) const {
  const at::Tensor body = runDeconvConvBody(ParameterAccess(copy_, kHeadPrefix), head_, featmap);
  const std::string last = lastLayer(task_);
  const at::Tensor index = taughtIndex_.to(body.device());
  const at::Tensor taughtOutputs =
      conv2dSummingInFloat(body, copy_.at(last + ".weight").index_select(0, index),
                           copy_.at(last + ".bias").index_select(0, index), {1, 1}, {0, 0});
  // In the untaught outputs' dtype (float32): under bf16 mixed precision, casting them to the branch's
  // bf16 and the loss casting back cost two full passes over every class's plane each way.
  const at::Tensor taught = taughtOutputs.to(untaught.scalar_type());
  // A tensor nobody else holds (the batch stacked for this call) takes the taught outputs in place: the
  // copy would be another pass over every plane.
  const bool handedOver = untaught.use_count() == 1 && untaught.storage().use_count() == 1;
  if (handedOver && !untaught.requires_grad()) return untaught.index_copy_(1, index, taught);
  return untaught.detach().index_copy(1, index, taught);
}

const TaughtBranchHead& TaughtBranchTraining::widened() {
  if (!widenedCurrent_) {
    std::map<std::string, at::Tensor> copy;
    for (const auto& [key, tensor] : copy_) copy[key] = tensor.detach();
    widened_ = widenForTaughtOutputs(task_, head_, starting_, copy, taught_);
    widenedCurrent_ = true;
  }
  return widened_;
}

}  // namespace sapiens::detail
