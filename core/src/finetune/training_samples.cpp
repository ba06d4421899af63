#include "training_samples.h"

#include "pipeline/pose_crop.h"
#include "sapiens/common/paths.h"
#include "sapiens/io/file_read.h"
#include "sapiens/model/model.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <random>

namespace sapiens::detail {

namespace {

constexpr double kCanonicalFocal = 768.0;  // PointmapEstimator.canonical_focal_length
// Where the starting seg head is kept, its labels are left out this far around painted pixels (a share
// of the longer side of the input: 1 px at 256, 5 px at 1024).
constexpr double kTeacherBand = 0.005;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

const nlohmann::json& seg29Json() {
  static const nlohmann::json document = [] {
    const std::string path = paths::resourceDir() + "/data/seg29.json";
    return nlohmann::json::parse(readWholeFile(path, kMaxJsonFileBytes, "the class table (JSON)"), nullptr,
                                 /*allow_exceptions=*/false);
  }();
  return document;
}

// Seg29's swap pairs as the training configs list them.
std::vector<std::array<int, 2>> seg29SwapPairs() {
  std::vector<std::array<int, 2>> pairs;
  const nlohmann::json& document = seg29Json();
  if (document.is_object() && document.contains("horizontal_flip_swap_pairs")) {
    for (const auto& pair : document["horizontal_flip_swap_pairs"])
      pairs.push_back({pair[0].get<int>(), pair[1].get<int>()});
  }
  return pairs;
}

// The photometric distortion of colour variant `colour` (> 0) of a sample: brightness +-32 and contrast
// x[0.5, 1.5], drawn from a generator seeded by the sample, so that the same input is rebuilt later.
void distortColours(cv::Mat& input, const TrainingSettings& settings, const SampleInfo& info, int colour) {
  std::seed_seq seed{static_cast<std::uint64_t>(settings.seed), static_cast<std::uint64_t>(info.frame),
                     static_cast<std::uint64_t>(info.person), static_cast<std::uint64_t>(colour)};
  std::mt19937_64 generator(seed);
  const double contrast = std::uniform_real_distribution<double>(0.5, 1.5)(generator);
  const double brightness = std::uniform_real_distribution<double>(-32.0, 32.0)(generator);
  input.convertTo(input, -1, contrast, brightness);
}

at::Tensor heatmapsFor(const std::vector<std::array<double, 2>>& points, const std::vector<bool>& labelled,
                       InputSize size, at::Tensor& weights) {
  const int width = size.width / 4;
  const int height = size.height / 4;
  const double sigma = heatmapSigma(width);
  const double radius = 3.0 * sigma;
  const auto count = static_cast<std::int64_t>(points.size());
  at::Tensor heatmaps = at::zeros({count, height, width}, at::kFloat);
  weights = at::zeros({count}, at::kFloat);
  auto* w = weights.data_ptr<float>();
  for (std::int64_t k = 0; k < count; ++k) {
    if (!labelled[k]) continue;
    // UDP: input pixel -> heatmap pixel with the (size - 1) ratios.
    const double x = points[k][0] * (width - 1.0) / (size.width - 1.0);
    const double y = points[k][1] * (height - 1.0) / (size.height - 1.0);
    const double cx = std::floor(x + 0.5), cy = std::floor(y + 0.5);
    if (cx + radius < 0 || cy + radius < 0 || cx - radius > width - 1 || cy - radius > height - 1) continue;
    w[k] = 1.0f;
    float* map = heatmaps[k].data_ptr<float>();
    const int x0 = std::max(0, static_cast<int>(std::ceil(cx - radius)));
    const int x1 = std::min(width - 1, static_cast<int>(std::floor(cx + radius)));
    const int y0 = std::max(0, static_cast<int>(std::ceil(cy - radius)));
    const int y1 = std::min(height - 1, static_cast<int>(std::floor(cy + radius)));
    for (int v = y0; v <= y1; ++v) {
      for (int u = x0; u <= x1; ++u)
        map[v * width + u] =
            static_cast<float>(std::exp(-((u - x) * (u - x) + (v - y) * (v - y)) / (2 * sigma * sigma)));
    }
  }
  return heatmaps;
}

BoundingBox personBox(const PersonLabel& person, const cv::Mat& image) {
  if (person.bbox) return *person.bbox;
  double x1 = std::numeric_limits<double>::max(), y1 = x1, x2 = -x1, y2 = -x1;
  for (const KeypointLabel& k : person.keypoints) {
    if (k.visibility == 0) continue;
    x1 = std::min(x1, k.x), y1 = std::min(y1, k.y), x2 = std::max(x2, k.x), y2 = std::max(y2, k.y);
  }
  const double maxX = image.cols - 1.0, maxY = image.rows - 1.0;
  x1 = std::clamp(x1, 0.0, maxX), x2 = std::clamp(x2, 0.0, maxX);
  y1 = std::clamp(y1, 0.0, maxY), y2 = std::clamp(y2, 0.0, maxY);
  if (x2 - x1 < 1 || y2 - y1 < 1) return {0, 0, static_cast<float>(maxX), static_cast<float>(maxY)};
  return {static_cast<float>(x1), static_cast<float>(y1), static_cast<float>(x2), static_cast<float>(y2)};
}

// Least-squares pinhole fit u = f * X / Z + c over the valid pixels of a metric pointmap: its focal
// lengths (image pixels), which the canonical target and the scale target need.
std::array<double, 2> fitFocalLengths(const cv::Mat& target, const std::string& path) {
  double sums[2][5] = {};  // n, sum t, sum t^2, sum p, sum t p for p = u and p = v
  for (int v = 0; v < target.rows; ++v) {
    const auto* row = target.ptr<cv::Vec3f>(v);
    for (int u = 0; u < target.cols; ++u) {
      const cv::Vec3f& p = row[u];
      if (!(std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2])) || p[2] <= 0) continue;
      const double t[2] = {p[0] / p[2], p[1] / p[2]};
      const double coordinate[2] = {static_cast<double>(u), static_cast<double>(v)};
      for (int a = 0; a < 2; ++a) {
        sums[a][0] += 1, sums[a][1] += t[a], sums[a][2] += t[a] * t[a], sums[a][3] += coordinate[a];
        sums[a][4] += t[a] * coordinate[a];
      }
    }
  }
  std::array<double, 2> focal{};
  for (int a = 0; a < 2; ++a) {
    const double n = sums[a][0];
    const double variance = n * sums[a][2] - sums[a][1] * sums[a][1];
    if (n < 16 || variance <= 0) {
      throw LabelSetError(path,
                          "a pointmap target needs at least 16 valid pixels (finite, Z > 0) spread over the "
                          "picture to recover its focal length");
    }
    focal[a] = (n * sums[a][4] - sums[a][1] * sums[a][3]) / variance;
  }
  return focal;
}

}  // namespace

double heatmapSigma(int heatmapWidth) {
  return std::max(1.0, 6.0 * heatmapWidth / 192.0);
}

std::vector<double> seg29ClassWeights() {
  const nlohmann::json& document = seg29Json();
  if (!document.is_object() || !document.contains("ce_class_weight"))
    throw LabelSetError(paths::resourceDir() + "/data/seg29.json", "unreadable or without ce_class_weight");
  return document["ce_class_weight"].get<std::vector<double>>();
}

bool isSeg29(const std::vector<LabelClass>& classes) {
  if (classes.empty()) return true;
  if (classes.size() != seg29().size()) return false;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].name != seg29().names[i]) return false;
  }
  return true;
}

FlipTables flipTablesFor(Task task, const std::vector<LabelClass>& classes, std::size_t count) {
  FlipTables tables;
  tables.swap.resize(count);
  for (std::size_t i = 0; i < count; ++i) tables.swap[i] = static_cast<int>(i);
  if (task == Task::Seg) {
    if (isSeg29(classes)) {
      for (const auto& pair : seg29SwapPairs()) {
        tables.swap[pair[0]] = pair[1];
        tables.swap[pair[1]] = pair[0];
      }
      return tables;
    }
    for (std::size_t i = 0; i < classes.size(); ++i) {
      const std::string name = lower(classes[i].name);
      if (name.rfind("left", 0) != 0) continue;
      for (std::size_t j = 0; j < classes.size(); ++j) {
        if (lower(classes[j].name) == "right" + name.substr(4)) {
          tables.swap[i] = static_cast<int>(j);
          tables.swap[j] = static_cast<int>(i);
        }
      }
    }
  } else if (task == Task::Pose && count == keypoints308().size()) {
    tables.swap = keypoints308().flipIndices;
  }
  return tables;
}

namespace {

// The samples of one frame: each network input made from it, in every augmentation variant, with targets.
struct SampleBuilder {
  const LabelSet& labels;
  std::size_t frameIndex;
  const FrameLabels& frame;
  const TrainingSettings& settings;
  const FlipTables& flip;
  bool validation;
  InputSize size;
  std::vector<int> variants;
  std::vector<BuiltSample> samples;

  SampleBuilder(const LabelSet& l, std::size_t index, const FrameLabels& f, const TrainingSettings& s,
                const FlipTables& t, bool v)
      : labels(l), frameIndex(index), frame(f), settings(s), flip(t), validation(v), size(s.inputSize) {
    for (int colour = 0; colour <= (validation ? 0 : settings.colorVariants); ++colour) {
      variants.push_back(2 * colour);
      if (settings.horizontalFlip && !validation) variants.push_back(2 * colour + 1);
    }
  }

  // `makeTargets(flipped)` gives the targets of the input as is or mirrored.
  template <class MakeTargets>
  void addVariants(std::size_t person, const cv::Mat& input, MakeTargets&& makeTargets) {
    for (int variant : variants) {
      BuiltSample sample;
      sample.info = SampleInfo{frameIndex, person, variant, validation};
      sample.input = input.clone();
      if (variant >= 2) distortColours(sample.input, settings, sample.info, variant / 2);
      const bool flipped = variant % 2 == 1;
      if (flipped) cv::flip(sample.input, sample.input, 1);
      sample.targets = makeTargets(flipped);
      samples.push_back(std::move(sample));
    }
  }

  void addSeg() {
    cv::Mat mask;
    cv::resize(frame.mask, mask, cv::Size(size.width, size.height), 0, 0, cv::INTER_NEAREST);
    std::vector<std::uint8_t> lut(256);
    for (int i = 0; i < 256; ++i)
      lut[i] = static_cast<std::uint8_t>(i < static_cast<int>(flip.swap.size()) ? flip.swap[i] : i);
    addVariants(0, stretchToInput(frame.image, size), [&](bool flipped) {
      cv::Mat m = mask.clone();
      if (flipped) {
        cv::flip(mask, m, 1);
        cv::LUT(m, lut, m);
      }
      SampleTargets t;
      t.labels = at::from_blob(m.data, {size.height, size.width}, at::kByte).to(at::kLong);
      return t;
    });
  }

  void addPerson(std::size_t p) {
    const PersonLabel& person = frame.people[p];
    if (std::none_of(person.keypoints.begin(), person.keypoints.end(),
                     [](const KeypointLabel& k) { return k.visibility > 0; }))
      return;
    const PoseCrop crop = poseCropFor(personBox(person, frame.image), size);
    std::vector<std::array<double, 2>> points;
    std::vector<bool> labelled;
    for (const KeypointLabel& k : person.keypoints) {
      points.push_back({crop.warp(0, 0) * k.x + crop.warp(0, 1) * k.y + crop.warp(0, 2),
                        crop.warp(1, 0) * k.x + crop.warp(1, 1) * k.y + crop.warp(1, 2)});
      labelled.push_back(k.visibility > 0);
    }
    addVariants(p, warpPoseCrop(frame.image, crop, size), [&](bool flipped) {
      std::vector<std::array<double, 2>> where = points;
      std::vector<bool> known = labelled;
      if (flipped) {
        for (std::size_t k = 0; k < points.size(); ++k) {
          const auto source = static_cast<std::size_t>(flip.swap[k]);
          where[k] = {size.width - 1.0 - points[source][0], points[source][1]};
          known[k] = labelled[source];
        }
      }
      SampleTargets t;
      t.heatmaps = heatmapsFor(where, known, size, t.weights);
      t.keypoints = at::empty({static_cast<std::int64_t>(where.size()), 2}, at::kFloat);
      for (std::size_t k = 0; k < where.size(); ++k) {
        t.keypoints[static_cast<std::int64_t>(k)][0] = where[k][0];
        t.keypoints[static_cast<std::int64_t>(k)][1] = where[k][1];
      }
      return t;
    });
  }

  // The (3, H, W) target as the model sees it, 0 where invalid.
  SampleTargets denseTargets(const cv::Mat& placed, double scale, bool flipped) const {
    cv::Mat m = placed.clone();
    if (flipped) cv::flip(placed, m, 1);
    at::Tensor hwc = at::from_blob(m.data, {size.height, size.width, 3}, at::kFloat).clone();
    at::Tensor valid = at::isfinite(hwc).all(-1);
    if (labels.task == Task::Pointmap) valid = valid.logical_and(hwc.select(-1, 2) > 0);
    hwc = at::where(valid.unsqueeze(-1), hwc, at::zeros_like(hwc));
    if (labels.task == Task::Normal) hwc = hwc / hwc.norm(2, {-1}, true).clamp_min(1e-6);
    if (labels.task == Task::Pointmap) hwc = hwc * scale;
    if (flipped && labels.task != Task::Albedo) hwc.select(-1, 0).neg_();
    SampleTargets t;
    t.dense = hwc.permute({2, 0, 1}).contiguous();
    t.valid = valid;
    if (labels.task == Task::Pointmap) t.scale = at::full({1}, scale, at::kFloat);
    return t;
  }

  void addDense() {
    const Letterbox box = letterboxToInput(frame.image, size);
    cv::Mat content;
    cv::resize(frame.target, content, cv::Size(box.contentWidth, box.contentHeight), 0, 0, cv::INTER_NEAREST);
    cv::Mat placed(size.height, size.width, CV_32FC3,
                   cv::Scalar::all(std::numeric_limits<float>::quiet_NaN()));
    content.copyTo(placed(cv::Rect(box.padding.left, box.padding.top, box.contentWidth, box.contentHeight)));
    double scale = 1.0;
    if (labels.task == Task::Pointmap) {
      const std::string path = labels.resolve(labels.frames[frameIndex].target);
      const double resize = static_cast<double>(box.contentWidth) / frame.image.cols;
      scale = kCanonicalFocal / (fitFocalLengths(frame.target, path)[0] * resize);
    }
    addVariants(0, box.image, [&](bool flipped) { return denseTargets(placed, scale, flipped); });
  }

  // Matting: the picture stretched as the official MattingResize does, the alpha resized bilinearly with it
  // (a NaN, no label, spreads to its neighbours: they have no target either). The target is (4, H, W):
  // no foreground target (0), alpha last, as the head's output.
  void addMatte() {
    const cv::Mat input = stretchToInput(frame.image, size, StretchEnlarge::Linear);
    cv::Mat alpha;
    cv::resize(frame.target, alpha, cv::Size(size.width, size.height), 0, 0, cv::INTER_LINEAR);
    addVariants(0, input, [&](bool flipped) {
      cv::Mat m = alpha.clone();
      if (flipped) cv::flip(alpha, m, 1);
      const at::Tensor hw = at::from_blob(m.data, {size.height, size.width}, at::kFloat).clone();
      SampleTargets t;
      t.valid = at::isfinite(hw);
      t.dense = at::zeros({4, size.height, size.width}, at::kFloat);
      t.dense[3] = at::where(t.valid, hw, at::zeros_like(hw));
      return t;
    });
  }
};

}  // namespace

std::vector<BuiltSample> buildSamples(const LabelSet& labels, std::size_t frameIndex,
                                      const FrameLabels& frame, const TrainingSettings& settings,
                                      const FlipTables& flip, bool validation) {
  SampleBuilder builder(labels, frameIndex, frame, settings, flip, validation);
  switch (labels.task) {
    case Task::Seg:
      builder.addSeg();
      break;
    case Task::Pose:
      for (std::size_t p = 0; p < frame.people.size(); ++p) builder.addPerson(p);
      break;
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
      builder.addDense();
      break;
    case Task::Matting:
      builder.addMatte();
      break;
    case Task::Backbone:
      break;
  }
  return std::move(builder.samples);
}

SampleTargets stackTargets(const std::vector<const SampleTargets*>& targets) {
  auto stack = [&](at::Tensor SampleTargets::*field) {
    if (!(targets.front()->*field).defined()) return at::Tensor();
    std::vector<at::Tensor> parts;
    for (const SampleTargets* t : targets) parts.push_back(t->*field);
    return at::stack(parts);
  };
  SampleTargets stacked;
  for (auto field : kSampleTargetFields) stacked.*field = stack(field);
  return stacked;
}

void addStartingHeadTargets(Task task, const ModelOutputs& outputs, double weight, SampleTargets& t) {
  const auto scalarWeight = [weight] { return at::full({1}, weight, at::kFloat); };
  switch (task) {
    case Task::Seg: {
      // Not within a band around what was painted: where a painted part ends is the user's call (and a
      // nearest-neighbour resize's), and the starting head's labels there would fight the paint.
      const at::Tensor painted = (t.labels != kIgnoreLabel).to(at::kFloat).unsqueeze(0).unsqueeze(0);
      const std::int64_t band =
          std::max<std::int64_t>(1, std::lround(kTeacherBand * std::max(t.labels.size(0), t.labels.size(1))));
      const at::Tensor nearPaint =
          at::max_pool2d(painted, {2 * band + 1, 2 * band + 1}, {1, 1}, {band, band})[0][0] > 0;
      const at::Tensor teacher = outputs.get("seg_logits")[0].argmax(0).to(at::kByte).cpu();
      t.teacherLabels = at::where(nearPaint, at::full_like(teacher, kIgnoreLabel), teacher);
      t.distillWeights = scalarWeight();
      return;
    }
    case Task::Pose: {
      const at::Tensor teacher = outputs.get("pose_heatmaps")[0].to(at::kFloat).cpu();
      const at::Tensor unlabelled = t.weights == 0;
      t.heatmaps = at::where(unlabelled.view({-1, 1, 1}), teacher, t.heatmaps);
      t.distillWeights = unlabelled.to(at::kFloat) * weight;
      return;
    }
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap: {
      // A dense head's output is named after its task.
      const at::Tensor teacher = outputs.get(std::string(taskName(task)))[0].to(at::kFloat).cpu();
      t.dense = at::where(t.valid.unsqueeze(0), t.dense, teacher);
      t.distillWeights = scalarWeight();
      return;
    }
    case Task::Matting: {
      // The foreground has no target anywhere: the starting head's everywhere; alpha where unlabelled.
      const at::Tensor teacher = outputs.get("matting")[0].to(at::kFloat).cpu();
      t.dense.narrow(0, 0, 3).copy_(teacher.narrow(0, 0, 3));
      t.dense[3] = at::where(t.valid, t.dense[3], teacher[3]);
      t.distillWeights = scalarWeight();
      return;
    }
    case Task::Backbone:
      return;
  }
}

}  // namespace sapiens::detail
