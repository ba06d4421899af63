#include "task_losses.h"

#include "seg_loss.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cmath>

namespace sapiens::detail {

namespace {

at::Tensor segLoss(const at::Tensor& logits, const SampleTargets& t, const at::Tensor& classWeights) {
  const SegLossTargets targets{t.labels, t.teacherLabels, t.distillWeights, classWeights};
  return fusedSegLossApplies(logits) ? fusedSegLoss(logits, targets) : compositeSegLoss(logits, targets);
}

// The official heatmap MSE plus a location term: per labelled keypoint, the cross-entropy between a
// softmax over its heatmap (temperature 0.1) and its target normalised to sum 1. Alone, the MSE first
// flattens a head's heatmaps towards 0 (almost every target pixel is 0) and moves the peaks only later:
// on a few frames with a fresh head, 120 steps lowered it 100-fold while PCK stayed at 0.04. The location
// term moves the peak from the first step. At temperature 0.1 its optimum spread between the peak and
// the background is about 1, as the MSE's is, so the heatmap maxima still read as scores (about 1 at a
// labelled keypoint).
at::Tensor poseLoss(const at::Tensor& heatmaps, const SampleTargets& t) {
  constexpr double kTemperature = 0.1;
  // The unlabelled keypoints' targets are the starting head's heatmaps where it is kept (distillWeights).
  const at::Tensor weights =
      (t.distillWeights.defined() ? t.weights + t.distillWeights : t.weights).unsqueeze(-1).unsqueeze(-1);
  const at::Tensor mse = 10.0 * ((heatmaps - t.heatmaps).pow(2) * weights).mean();
  const at::Tensor target = t.heatmaps.flatten(2);
  const at::Tensor mass = target.sum(2);
  const at::Tensor distribution = target / mass.unsqueeze(2).clamp_min(1e-6);
  const at::Tensor crossEntropy =
      -(distribution * at::log_softmax(heatmaps.flatten(2) / kTemperature, 2)).sum(2);
  const at::Tensor used = t.weights * (mass > 0).to(t.weights.scalar_type());
  at::Tensor loss = mse + (crossEntropy * used).sum() / used.sum().clamp_min(1);
  if (t.distillWeights.defined()) {
    // The unlabelled keypoints keep their place: the KL divergence of the softmax over each heatmap from
    // the starting head's (zero, with a zero gradient, where they agree), at the same temperature.
    const at::Tensor teacher = at::log_softmax(t.heatmaps.flatten(2) / kTemperature, 2);
    const at::Tensor student = at::log_softmax(heatmaps.flatten(2) / kTemperature, 2);
    const at::Tensor divergence = (teacher.exp() * (teacher - student)).sum(2);
    const at::Tensor kept = (t.distillWeights > 0).to(t.distillWeights.scalar_type());
    loss = loss + (divergence * t.distillWeights).sum() / kept.sum().clamp_min(1);
  }
  return loss;
}

// Mean of squared differences of horizontal and vertical neighbours over pairs of valid pixels.
at::Tensor gradientLoss(const at::Tensor& prediction, const at::Tensor& target, const at::Tensor& valid) {
  at::Tensor total = at::zeros({}, prediction.options());
  for (int dim : {3, 2}) {
    const std::int64_t n = prediction.size(dim) - 1;
    const at::Tensor dp = prediction.narrow(dim, 1, n) - prediction.narrow(dim, 0, n);
    const at::Tensor dt = target.narrow(dim, 1, n) - target.narrow(dim, 0, n);
    const at::Tensor pairs = (valid.narrow(dim - 1, 1, n) & valid.narrow(dim - 1, 0, n)).unsqueeze(1);
    const at::Tensor count = pairs.sum().clamp_min(1) * prediction.size(1);
    total = total + ((dp - dt).pow(2) * pairs).sum() / count;
  }
  return total;
}

// Where the starting head is kept: the L1 distance to its maps at the pixels without a target (t.dense
// holds them there), divided by `unit` (per sample, broadcast), times the distillation weight.
at::Tensor startingHeadL1(const at::Tensor& prediction, const SampleTargets& t, const at::Tensor& unit = {}) {
  if (!t.distillWeights.defined()) return at::zeros({}, prediction.options());
  const at::Tensor untargeted = t.valid.logical_not().unsqueeze(1);
  const at::Tensor count = untargeted.sum().clamp_min(1) * prediction.size(1);
  at::Tensor difference = (prediction - t.dense).abs();
  if (unit.defined()) difference = difference / unit;
  return (difference * untargeted * t.distillWeights.view({-1, 1, 1, 1})).sum() / count;
}

at::Tensor normalLoss(const at::Tensor& prediction, const SampleTargets& t) {
  const at::Tensor valid = t.valid.unsqueeze(1);
  const at::Tensor count = t.valid.sum().clamp_min(1);
  const at::Tensor unit = prediction / prediction.norm(2, {1}, true).clamp_min(1e-6);
  const at::Tensor cosine = (unit * t.dense).sum(1, true);
  const at::Tensor angular = ((1 - cosine) * valid).sum() / count;
  const at::Tensor l1 = ((prediction - t.dense).abs() * valid).sum() / count;
  return 10.0 * angular + l1 + 10.0 * gradientLoss(prediction, t.dense, t.valid) +
         startingHeadL1(prediction, t);
}

at::Tensor albedoLoss(const at::Tensor& prediction, const SampleTargets& t) {
  const at::Tensor valid = t.valid.unsqueeze(1);
  const at::Tensor count = t.valid.sum().clamp_min(1);
  const at::Tensor l1 = ((prediction - t.dense).abs() * valid).sum() / count;
  const at::Tensor clamped = prediction.clamp(0, 1);
  const at::Tensor chromaPrediction = clamped / (clamped.sum(1, true) + 1e-6);
  const at::Tensor chromaTarget = t.dense / (t.dense.sum(1, true) + 1e-6);
  const at::Tensor chroma = ((chromaPrediction - chromaTarget).abs() * valid).sum() / count;
  return 2.0 * l1 + 2.0 * 0.5 * gradientLoss(prediction, t.dense, t.valid) + chroma +
         startingHeadL1(prediction, t);
}

// Matting: L1 on alpha (the head's last channel) where labelled, the official MattingL1Loss on alpha.
// Keeping the starting head: alpha where unlabelled and the foreground, which has no target, everywhere.
at::Tensor mattingLoss(const at::Tensor& prediction, const SampleTargets& t) {
  const std::int64_t channels = prediction.size(1);  // 4 (foreground, alpha) or 1 (alpha)
  SampleTargets own = t;
  own.dense = t.dense.narrow(1, 4 - channels, channels);
  const at::Tensor valid = t.valid.unsqueeze(1);
  const at::Tensor count = t.valid.sum().clamp_min(1);
  const at::Tensor alpha = prediction.narrow(1, channels - 1, 1);
  const at::Tensor l1 = ((alpha - own.dense.narrow(1, channels - 1, 1)).abs() * valid).sum() / count;
  at::Tensor keep = startingHeadL1(prediction, own);
  if (own.distillWeights.defined() && channels > 1) {
    const at::Tensor foreground =
        (prediction.narrow(1, 0, channels - 1) - own.dense.narrow(1, 0, channels - 1)).abs();
    keep =
        keep + (foreground * valid * own.distillWeights.view({-1, 1, 1, 1})).sum() / (count * (channels - 1));
  }
  return l1 + keep;
}

at::Tensor pointmapLoss(const at::Tensor& prediction, const at::Tensor& scale, const SampleTargets& t) {
  const at::Tensor valid = t.valid.unsqueeze(1);
  const at::Tensor count = t.valid.flatten(1).sum(1).clamp_min(1);  // per sample
  // mu: the mean target depth over the valid pixels of each sample.
  const at::Tensor depth = t.dense.select(1, 2);
  const at::Tensor mu = ((depth * t.valid).flatten(1).sum(1) / count).clamp_min(1e-6).view({-1, 1, 1, 1});
  const at::Tensor l1 =
      ((prediction / mu - t.dense / mu).abs().clamp_max(4.0) * valid).flatten(1).sum(1) / count;
  const at::Tensor d =
      (at::log(depth.clamp_min(1e-4)) - at::log(prediction.select(1, 2).clamp_min(1e-4))) * t.valid;
  const at::Tensor meanD = d.flatten(1).sum(1) / count;
  const at::Tensor meanD2 = d.pow(2).flatten(1).sum(1) / count;
  const at::Tensor silog = at::sqrt((meanD2 - 0.5 * meanD.pow(2)).clamp_min(1e-8));
  const at::Tensor scaleL1 = (scale.view({-1}) - t.scale.view({-1})).abs();
  return 2.0 * l1.mean() + silog.mean() + 4.0 * scaleL1.mean() + startingHeadL1(prediction, t, mu);
}

}  // namespace

at::Tensor taskLoss(Task task, const ModelOutputs& outputs, const SampleTargets& targets,
                    const at::Tensor& classWeights) {
  switch (task) {
    case Task::Seg:
      return segLoss(outputs.get("seg_logits"), targets, classWeights);
    case Task::Pose:
      return poseLoss(outputs.get("pose_heatmaps"), targets);
    case Task::Normal:
      return normalLoss(outputs.get("normal"), targets);
    case Task::Albedo:
      return albedoLoss(outputs.get("albedo"), targets);
    case Task::Pointmap:
      return pointmapLoss(outputs.get("pointmap"), outputs.get("scale"), targets);
    case Task::Matting:
      return mattingLoss(outputs.get("matting"), targets);
    case Task::Backbone:
      break;
  }
  throw std::invalid_argument(fmt::format("no training loss for a {} model", taskName(task)));
}

void MetricAccumulator::add(const ModelOutputs& outputs, const SampleTargets& t) {
  switch (task_) {
    case Task::Seg: {
      // Per-class counts of the labelled pixels: predicted, labelled, both.
      const at::Tensor labels = t.labels.cpu().to(at::kLong);
      const at::Tensor known = labels != kIgnoreLabel;
      const at::Tensor p = outputs.get("seg_logits").argmax(1).cpu().masked_select(known);
      const at::Tensor g = labels.masked_select(known);
      const auto counts = [this](const at::Tensor& indices) {
        return at::bincount(indices, {}, classes_).to(at::kDouble);
      };
      const at::Tensor intersection = counts(p.masked_select(p == g));
      const at::Tensor unionCount = counts(p) + counts(g) - intersection;
      const at::Tensor labelledCount = counts(g);
      intersection_ = intersection_.defined() ? intersection_ + intersection : intersection;
      union_ = union_.defined() ? union_ + unionCount : unionCount;
      labelled_ = labelled_.defined() ? labelled_ + labelledCount : labelledCount;
      return;
    }
    case Task::Pose: {
      const at::Tensor heatmaps = outputs.get("pose_heatmaps").cpu().to(at::kFloat);
      const std::int64_t width = heatmaps.size(3), height = heatmaps.size(2);
      const at::Tensor flat = heatmaps.flatten(2).argmax(2);
      const at::Tensor x = (flat % width).to(at::kDouble);
      const at::Tensor y = at::floor_divide(flat, width).to(at::kDouble);
      // Heatmap pixel -> input pixel with the UDP ratio (size - 1) / (heatmap size - 1).
      const double inputWidth = width * 4.0, inputHeight = height * 4.0;
      const at::Tensor u = x * ((inputWidth - 1) / (width - 1));
      const at::Tensor v = y * ((inputHeight - 1) / (height - 1));
      const at::Tensor target = t.keypoints.to(at::kDouble);
      const at::Tensor distance =
          at::sqrt((u - target.select(2, 0)).pow(2) + (v - target.select(2, 1)).pow(2));
      const double threshold = 0.05 * std::hypot(inputWidth, inputHeight);
      const at::Tensor labelled = t.weights > 0;
      sum_ += ((distance <= threshold).logical_and(labelled)).sum().item<double>();
      count_ += labelled.sum().item<double>();
      return;
    }
    case Task::Normal: {
      const at::Tensor n = outputs.get("normal").cpu().to(at::kDouble);
      const at::Tensor unit = n / n.norm(2, {1}, true).clamp_min(1e-8);
      const at::Tensor cosine = (unit * t.dense.to(at::kDouble)).sum(1).clamp(-1, 1);
      sum_ += (at::acos(cosine) * (180.0 / M_PI) * t.valid).sum().item<double>();
      count_ += t.valid.sum().item<double>();
      return;
    }
    case Task::Albedo: {
      const at::Tensor a = outputs.get("albedo").cpu().to(at::kDouble).clamp(0, 1);
      sum_ += ((a - t.dense.to(at::kDouble)).abs() * t.valid.unsqueeze(1)).sum().item<double>();
      count_ += 3 * t.valid.sum().item<double>();
      return;
    }
    case Task::Pointmap: {
      const at::Tensor z = outputs.get("pointmap").cpu().to(at::kDouble).select(1, 2);
      const at::Tensor gt = t.dense.to(at::kDouble).select(1, 2);
      sum_ += (((z - gt).abs() / gt.clamp_min(1e-6)) * t.valid).sum().item<double>();
      count_ += t.valid.sum().item<double>();
      return;
    }
    case Task::Matting: {  // mean absolute alpha error over the labelled pixels
      const at::Tensor m = outputs.get("matting").cpu().to(at::kDouble);
      const at::Tensor alpha = m.narrow(1, m.size(1) - 1, 1).clamp(0, 1);
      sum_ += ((alpha - t.dense.to(at::kDouble).narrow(1, 3, 1)).abs() * t.valid.unsqueeze(1))
                  .sum()
                  .item<double>();
      count_ += t.valid.sum().item<double>();
      return;
    }
    case Task::Backbone:
      return;
  }
}

namespace {

// Mean IoU over the classes `counted` marks.
double meanIou(const at::Tensor& intersection, const at::Tensor& unionCount, const at::Tensor& counted) {
  const double classes = counted.sum().item<double>();
  return classes == 0 ? 0
                      : ((intersection / unionCount.clamp_min(1)) * counted).sum().item<double>() / classes;
}

}  // namespace

double MetricAccumulator::value() const {
  if (task_ == Task::Seg) return union_.defined() ? meanIou(intersection_, union_, labelled_ > 0) : 0;
  return count_ == 0 ? 0 : sum_ / count_;
}

std::optional<double> MetricAccumulator::allClassValue() const {
  if (task_ != Task::Seg) return std::nullopt;
  return union_.defined() ? meanIou(intersection_, union_, union_ > 0) : 0;
}

}  // namespace sapiens::detail
