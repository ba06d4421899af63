#include "seg_loss.h"

#include "model/exp_rows.h"
#include "sapiens/finetune/frame_labels.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace sapiens::detail {

namespace {

constexpr double kDiceSmooth = 1e-3;
constexpr std::int64_t kBlock = 512;  // pixels per block: C x kBlock floats of exponentials stay in L2

// Asks for the block after the one at `row` (one class's plane, `left` elements from there on): the
// hardware prefetcher of the machines measured does not follow 29 planes at once, and the passes waited on
// memory (see prefetchAhead in model/vector_lanes.h).
void prefetchNextBlock(const float* row, std::int64_t left, bool forWrite) {
  const std::int64_t end = std::min(2 * kBlock, left);
  for (std::int64_t j = kBlock; j < end; j += 16) {
    if (forWrite)
      __builtin_prefetch(row + j, 1);
    else
      __builtin_prefetch(row + j, 0);
  }
}

// Sum of known[j] x[j]^2 over j < n, in 16 independent partial sums: one running float would make every
// term wait on the one before (the compiler may not reorder float additions).
float knownSquares(const float* x, const float* known, std::int64_t n) {
  float lanes[16] = {};
  std::int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int l = 0; l < 16; ++l) lanes[l] += known[j + l] * x[j + l] * x[j + l];
  for (; j < n; ++j) lanes[0] += known[j] * x[j] * x[j];
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

// One sample's pixels [begin, end) of (C, HW) logits as softmax probabilities, a block at a time.
struct PixelBlock {
  std::int64_t classes = 0, pixels = 0, begin = 0, count = 0;
  std::vector<float> probability;  // [c * kBlock + j]
  std::vector<float> shift, logSum, sum;

  explicit PixelBlock(std::int64_t c)
      : classes(c),
        probability(static_cast<std::size_t>(c * kBlock)),
        shift(kBlock),
        logSum(kBlock),
        sum(kBlock) {}

  // p = softmax over the classes of each pixel; shift + logSum = log-sum-exp.
  void load(const float* logits, std::int64_t hw, std::int64_t first, std::int64_t n) {
    begin = first, count = n, pixels = hw;
    std::fill_n(shift.begin(), n, -INFINITY);
    for (std::int64_t c = 0; c < classes; ++c) {
      const float* z = logits + c * hw + first;
      prefetchNextBlock(z, hw - first, /*forWrite=*/false);
      for (std::int64_t j = 0; j < n; ++j) shift[j] = std::max(shift[j], z[j]);
    }
    std::fill_n(sum.begin(), n, 0.0f);
    for (std::int64_t c = 0; c < classes; ++c) {
      const float* z = logits + c * hw + first;
      float* e = probability.data() + c * kBlock;
      for (std::int64_t j = 0; j < n; ++j) e[j] = z[j] - shift[j];
      expInPlace(e, n);
      for (std::int64_t j = 0; j < n; ++j) sum[j] += e[j];
    }
    for (std::int64_t j = 0; j < n; ++j) logSum[j] = std::log(sum[j]);
    for (std::int64_t j = 0; j < n; ++j) sum[j] = 1.0f / sum[j];
    for (std::int64_t c = 0; c < classes; ++c) {
      float* e = probability.data() + c * kBlock;
      for (std::int64_t j = 0; j < n; ++j) e[j] *= sum[j];
    }
  }
  float p(std::int64_t c, std::int64_t j) const { return probability[c * kBlock + j]; }
};

// The cross-entropy target of pixel i and its weight (class weight x 1 for a label, x the distillation
// weight for the starting head's label); weight 0 when the pixel has neither.
struct PixelTarget {
  std::int64_t target = 0;
  float weight = 0;
};

struct SampleView {
  const std::int64_t* labels;
  const std::uint8_t* teacher;  // null when not kept
  float distillWeight;
  const float* classWeights;

  PixelTarget at(std::int64_t i) const {
    const std::int64_t label = labels[i];
    if (label != kIgnoreLabel) return {label, classWeights[label]};
    if (!teacher || teacher[i] == kIgnoreLabel) return {};
    return {teacher[i], classWeights[teacher[i]] * distillWeight};
  }
};

struct Prepared {
  at::Tensor logits, labels, teacher, distill, classWeights;
  std::int64_t batch, classes, hw;
  SampleView sample(std::int64_t b) const {
    return {labels.data_ptr<std::int64_t>() + b * hw,
            teacher.numel() > 0 ? teacher.data_ptr<std::uint8_t>() + b * hw : nullptr,
            distill.numel() > 0 ? distill.data_ptr<float>()[b] : 0.0f, classWeights.data_ptr<float>()};
  }
  const float* sampleLogits(std::int64_t b) const { return logits.data_ptr<float>() + b * classes * hw; }
};

Prepared prepare(const at::Tensor& logits, const at::Tensor& labels, const at::Tensor& teacher,
                 const at::Tensor& distill, const at::Tensor& classWeights) {
  Prepared p;
  p.logits = logits.contiguous();
  p.labels = labels.to(at::kLong).contiguous();
  p.teacher = teacher.numel() > 0 ? teacher.to(at::kByte).contiguous() : teacher;
  p.distill = distill.numel() > 0 ? distill.to(at::kFloat).contiguous() : distill;
  p.classWeights = classWeights.to(at::kFloat).contiguous();
  p.batch = logits.size(0), p.classes = logits.size(1), p.hw = logits.size(2) * logits.size(3);
  return p;
}

// Blocks of every sample in order; `work(b, first, n, block)` for each, on ATen's threads.
template <typename Work>
void forEachBlock(const Prepared& p, Work&& work) {
  const std::int64_t blocksPerSample = (p.hw + kBlock - 1) / kBlock;
  at::parallel_for(0, p.batch * blocksPerSample, 1, [&](std::int64_t begin, std::int64_t end) {
    PixelBlock block(p.classes);
    for (std::int64_t index = begin; index < end; ++index) {
      const std::int64_t b = index / blocksPerSample;
      const std::int64_t first = (index % blocksPerSample) * kBlock;
      const std::int64_t n = std::min(kBlock, p.hw - first);
      block.load(p.sampleLogits(b), p.hw, first, n);
      work(index, b, block);
    }
  });
}

// Per block: [0] the weighted NLL sum, then per class the Dice sums: intersection, squares, count.
constexpr std::int64_t kSumsPerClass = 3;

at::Tensor blockSums(const Prepared& p) {
  const std::int64_t blocksPerSample = (p.hw + kBlock - 1) / kBlock;
  const std::int64_t width = 1 + kSumsPerClass * p.classes;
  at::Tensor sums = at::zeros({p.batch * blocksPerSample, width}, at::kDouble);
  double* out = sums.data_ptr<double>();
  forEachBlock(p, [&](std::int64_t index, std::int64_t b, const PixelBlock& block) {
    const SampleView view = p.sample(b);
    const std::int64_t* labels = view.labels + block.begin;
    double* s = out + index * width;
    const float* z = p.sampleLogits(b);
    double nll = 0;
    for (std::int64_t j = 0; j < block.count; ++j) {
      const PixelTarget t = view.at(block.begin + j);
      if (t.weight != 0)
        nll += t.weight * (block.shift[j] + block.logSum[j] - z[t.target * p.hw + block.begin + j]);
    }
    s[0] = nll;
    float known[kBlock];
    for (std::int64_t j = 0; j < block.count; ++j) known[j] = labels[j] != kIgnoreLabel ? 1.0f : 0.0f;
    for (std::int64_t c = 1; c < p.classes; ++c)
      s[1 + kSumsPerClass * c + 1] = knownSquares(block.probability.data() + c * kBlock, known, block.count);
    for (std::int64_t j = 0; j < block.count; ++j) {
      const std::int64_t label = labels[j];
      if (label == kIgnoreLabel || label == 0) continue;
      s[1 + kSumsPerClass * label] += block.p(label, j);
      s[1 + kSumsPerClass * label + 2] += 1;
    }
  });
  return sums.view({p.batch, blocksPerSample, width}).sum(1);  // (B, width)
}

// The loss and, per (sample, class), the Dice gradient's coefficients alpha, beta (see backward).
struct LossParts {
  double loss = 0;
  at::Tensor coefficients;  // (B, C, 2) double
};

LossParts lossFromSums(const Prepared& p, const at::Tensor& sums) {
  const double pixels = static_cast<double>(p.batch * p.hw);
  const auto* s = sums.data_ptr<double>();
  const std::int64_t width = sums.size(1);
  LossParts parts;
  parts.coefficients = at::zeros({p.batch, p.classes, 2}, at::kDouble);
  double* coefficient = parts.coefficients.data_ptr<double>();
  double nll = 0;
  std::vector<double> perSample(static_cast<std::size_t>(p.batch), 0.0);
  std::vector<int> presentCount(static_cast<std::size_t>(p.batch), 0);
  int samplesWithForeground = 0;
  for (std::int64_t b = 0; b < p.batch; ++b) {
    nll += s[b * width];
    double diceSum = 0;
    for (std::int64_t c = 1; c < p.classes; ++c) {
      const double* d = s + b * width + 1 + kSumsPerClass * c;
      if (d[2] <= 0) continue;
      ++presentCount[b];
      diceSum += (2 * d[0] + kDiceSmooth) / (d[1] + d[2] + kDiceSmooth);
    }
    if (presentCount[b] > 0) {
      ++samplesWithForeground;
      perSample[b] = 1 - diceSum / presentCount[b];
    }
  }
  double dice = 0;
  for (std::int64_t b = 0; b < p.batch; ++b) dice += perSample[b];
  dice /= std::max(samplesWithForeground, 1);
  parts.loss = nll / pixels + dice;
  // dLoss/dDice_bc = a = -1 / (samples with foreground x classes present in b); with S = squares +
  // count + smooth and I the intersection, dDice_bc/dp_c = (2 g_c S - 2 p_c (2 I + smooth)) / S^2, so
  // dLoss/dp_c = alpha g_c - beta p_c with alpha = 2a / S, beta = 2a (2I + smooth) / S^2.
  for (std::int64_t b = 0; b < p.batch; ++b) {
    if (presentCount[b] == 0) continue;
    const double a = -1.0 / (std::max(samplesWithForeground, 1) * presentCount[b]);
    for (std::int64_t c = 1; c < p.classes; ++c) {
      const double* d = s + b * width + 1 + kSumsPerClass * c;
      if (d[2] <= 0) continue;
      const double sum = d[1] + d[2] + kDiceSmooth;
      coefficient[(b * p.classes + c) * 2] = 2 * a / sum;
      coefficient[(b * p.classes + c) * 2 + 1] = 2 * a * (2 * d[0] + kDiceSmooth) / (sum * sum);
    }
  }
  return parts;
}

// dLoss/dz_j = p_j (q_j - sum_c p_c q_c) for the Dice part, q_c = known (alpha_c [label = c] - beta_c p_c)
// over the foreground classes, plus w / N (p_j - [j = target]) for the cross-entropy.
at::Tensor gradient(const Prepared& p, const at::Tensor& coefficients, double upstream) {
  at::Tensor grad = at::empty_like(p.logits);
  float* out = grad.data_ptr<float>();
  const double* coefficient = coefficients.data_ptr<double>();
  const float scale = static_cast<float>(upstream);
  const float perPixel = static_cast<float>(upstream / static_cast<double>(p.batch * p.hw));
  forEachBlock(p, [&](std::int64_t, std::int64_t b, const PixelBlock& block) {
    const SampleView view = p.sample(b);
    const std::int64_t* labels = view.labels + block.begin;
    float beta[kIgnoreLabel] = {};
    for (std::int64_t c = 1; c < p.classes; ++c)
      beta[c] = static_cast<float>(coefficient[(b * p.classes + c) * 2 + 1]);
    // Per pixel: whether it is labelled, its cross-entropy target and weight, and alpha_label p_label.
    float known[kBlock], ceWeight[kBlock], alphaP[kBlock], r[kBlock];
    std::int64_t target[kBlock];
    for (std::int64_t j = 0; j < block.count; ++j) {
      const std::int64_t label = labels[j];
      const PixelTarget t = view.at(block.begin + j);
      known[j] = label != kIgnoreLabel ? 1.0f : 0.0f;
      target[j] = t.target;
      ceWeight[j] = t.weight * perPixel;
      alphaP[j] = label != kIgnoreLabel && label != 0
                      ? static_cast<float>(coefficient[(b * p.classes + label) * 2]) * block.p(label, j)
                      : 0.0f;
      r[j] = 0;
    }
    // r = sum_c p_c q_c
    for (std::int64_t c = 1; c < p.classes; ++c) {
      const float* pc = block.probability.data() + c * kBlock;
      for (std::int64_t j = 0; j < block.count; ++j) r[j] -= beta[c] * pc[j] * pc[j];
    }
    for (std::int64_t j = 0; j < block.count; ++j) r[j] = known[j] * (r[j] + alphaP[j]);
    for (std::int64_t c = 0; c < p.classes; ++c) {
      const float* pc = block.probability.data() + c * kBlock;
      float* g = out + (b * p.classes + c) * p.hw + block.begin;
      prefetchNextBlock(g, p.hw - block.begin, /*forWrite=*/true);
      const float bc = beta[c];
      for (std::int64_t j = 0; j < block.count; ++j) {
        const float q = -known[j] * bc * pc[j];
        g[j] = ceWeight[j] * pc[j] + scale * pc[j] * (q - r[j]);
      }
    }
    // The one-hot parts: -w / N at the cross-entropy target, alpha p at the label.
    for (std::int64_t j = 0; j < block.count; ++j) {
      const std::int64_t pixel = block.begin + j;
      out[(b * p.classes + target[j]) * p.hw + pixel] -= ceWeight[j];
      if (alphaP[j] != 0) out[(b * p.classes + labels[j]) * p.hw + pixel] += scale * alphaP[j];
    }
  });
  return grad;
}

struct FusedSegLossFunction : torch::autograd::Function<FusedSegLossFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& logits,
                            const at::Tensor& labels, const at::Tensor& teacher, const at::Tensor& distill,
                            const at::Tensor& classWeights) {
    const Prepared p = prepare(logits, labels, teacher, distill, classWeights);
    const LossParts parts = lossFromSums(p, blockSums(p));
    context->save_for_backward({logits, labels, teacher, distill, classWeights, parts.coefficients});
    return at::scalar_tensor(parts.loss, logits.options());
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list outputGradients) {
    const auto saved = context->get_saved_variables();
    const Prepared p = prepare(saved[0], saved[1], saved[2], saved[3], saved[4]);
    const double upstream = outputGradients[0].item<double>();
    return {gradient(p, saved[5], upstream), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool fusedSegLossApplies(const at::Tensor& logits) {
  return logits.is_cpu() && logits.scalar_type() == at::kFloat && logits.dim() == 4 && logits.size(1) > 1 &&
         logits.size(1) <= kIgnoreLabel;
}

at::Tensor fusedSegLoss(const at::Tensor& logits, const SegLossTargets& t) {
  const at::Tensor none = at::empty({0}, at::kFloat);
  const bool kept = t.teacherLabels.defined() && t.distillWeights.defined();
  return FusedSegLossFunction::apply(logits, t.labels.cpu(),
                                     kept ? t.teacherLabels.cpu() : none.to(at::kByte),
                                     kept ? t.distillWeights.cpu().flatten() : none, t.classWeights.cpu());
}

at::Tensor compositeSegLoss(const at::Tensor& logits, const SegLossTargets& t) {
  const at::Tensor& labels = t.labels;
  const std::int64_t classes = logits.size(1);
  const at::Tensor known = labels != kIgnoreLabel;
  const at::Tensor target = at::where(known, labels, at::zeros_like(labels));
  const at::Tensor logProbabilities = at::log_softmax(logits, 1);
  // Per pixel w[y] * CE, ignored pixels 0, then the plain mean over all pixels (not over the weights).
  // Where the starting head is kept, an unlabelled pixel's target is the starting head's label, weighted
  // by the distillation weight on top of its class weight.
  at::Tensor pixelTarget = target, pixelWeight = known.to(logits.scalar_type());
  if (t.teacherLabels.defined()) {
    const at::Tensor teacher = t.teacherLabels.to(labels.scalar_type());
    const at::Tensor taught = teacher != kIgnoreLabel;
    pixelTarget = at::where(known, labels, at::where(taught, teacher, at::zeros_like(teacher)));
    const at::Tensor distill =
        t.distillWeights.view({-1, 1, 1}).to(logits.scalar_type()).expand_as(pixelWeight) * taught;
    pixelWeight = at::where(known, pixelWeight, distill);
  }
  const at::Tensor nll = -logProbabilities.gather(1, pixelTarget.unsqueeze(1)).squeeze(1);
  const at::Tensor ce =
      (nll * t.classWeights.index_select(0, pixelTarget.flatten()).view_as(nll) * pixelWeight).mean();

  // Dice over the foreground classes present in each sample's labels; samples without any are left out.
  // The one-hot truth is scattered straight into the logits' layout and dtype (it is 0/1, so g^2 = g).
  const at::Tensor knownMask = known.unsqueeze(1).to(logits.scalar_type());
  const at::Tensor probabilities = logProbabilities.exp() * knownMask;
  const at::Tensor truth = at::zeros_like(logits).scatter_(1, target.unsqueeze(1), knownMask);
  const at::Tensor p = probabilities.narrow(1, 1, classes - 1).flatten(2);
  const at::Tensor g = truth.narrow(1, 1, classes - 1).flatten(2);
  const at::Tensor truthCount = g.sum(2);
  const at::Tensor dice = (2 * (p * g).sum(2) + kDiceSmooth) / (p.pow(2).sum(2) + truthCount + kDiceSmooth);
  const at::Tensor present = (truthCount > 0).to(dice.scalar_type());
  const at::Tensor presentCount = present.sum(1);
  const at::Tensor sampleHasForeground = presentCount > 0;
  const at::Tensor perSample = 1 - (dice * present).sum(1) / presentCount.clamp_min(1);
  const at::Tensor diceLoss =
      (perSample * sampleHasForeground).sum() / sampleHasForeground.sum().clamp_min(1);
  return ce + diceLoss;
}

}  // namespace sapiens::detail
