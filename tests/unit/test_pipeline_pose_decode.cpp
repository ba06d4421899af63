// Pose heatmap decoding against the official decoder (golden e2e fixtures): the flip-test average, the
// unguarded UDP/DARK decode bit for bit, and the guarded decode: identical where the official step is
// well-conditioned, never NaN and never far outside the crop elsewhere.

#include "pipeline/pose_crop.h"
#include "pipeline/pose_decode.h"
#include "pipeline/pose_flip.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/model/safetensors_torch.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <QTemporaryDir>
#include "golden_tensors.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace {

using sapiens::test::tensorOf;

std::vector<std::int64_t> flipIndicesOf(const sapiens::SafetensorsFile& file) {
  const at::Tensor t = tensorOf(file, "flip_indices").contiguous();
  return std::vector<std::int64_t>(t.data_ptr<std::int64_t>(), t.data_ptr<std::int64_t>() + t.numel());
}

struct PoseCase {
  sapiens::PoseCrop crop;
  sapiens::InputSize inputSize;
  at::Tensor heatmapsAvg;     // (K, h, w)
  at::Tensor scores;          // (K) float32
  at::Tensor keypointsInput;  // (K, 2) float64
  at::Tensor keypoints;       // (K, 2) float64
  at::Tensor stable;          // (K) bool
};

PoseCase loadCase(const sapiens::SafetensorsFile& file, const std::string& key) {
  PoseCase c;
  const at::Tensor box = tensorOf(file, key + ".bbox_xyxy");
  const at::Tensor size = tensorOf(file, key + ".input_size_wh");
  c.inputSize = {static_cast<int>(size[0].item<std::int64_t>()),
                 static_cast<int>(size[1].item<std::int64_t>())};
  const float* b = box.data_ptr<float>();
  c.crop = sapiens::poseCropFor({b[0], b[1], b[2], b[3]}, c.inputSize);
  c.heatmapsAvg = tensorOf(file, key + ".heatmaps_avg")[0];
  c.scores = tensorOf(file, key + ".keypoint_scores");
  c.keypointsInput = tensorOf(file, key + ".keypoints_input")[0];
  c.keypoints = tensorOf(file, key + ".keypoints");
  c.stable = tensorOf(file, key + ".keypoint_stable").to(at::kBool);
  return c;
}

bool sameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

/// A (1, h, w) heatmap with a Gaussian peak of `sigma` cells at (x, y).
at::Tensor gaussianHeatmap(int width, int height, double x, double y, double sigma) {
  const at::Tensor xs = at::arange(width, at::kDouble).reshape({1, width});
  const at::Tensor ys = at::arange(height, at::kDouble).reshape({height, 1});
  return at::exp(-((xs - x).pow(2) + (ys - y).pow(2)) / (2 * sigma * sigma)).to(at::kFloat).unsqueeze(0);
}

}  // namespace

class PipelinePoseDecodeTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void flipIndicesMatchTheOfficialPermutation();
  void flipTestAverageMatchesOfficial_data();
  void flipTestAverageMatchesOfficial();
  void officialDecodeIsBitExact_data();
  void officialDecodeIsBitExact();
  void guardedDecodeKeepsStableKeypointsAndStaysInTheCrop_data();
  void guardedDecodeKeepsStableKeypointsAndStaysInTheCrop();
  void sharpPeaksAreRefinedToSubpixelAccuracy();
  void guardedStepsAreOfficialPartialOrArgmax_data();
  void guardedStepsAreOfficialPartialOrArgmax();
  void nonPositiveHeatmapsGiveTheInvalidMarker();
  void officialInvalidKeypointsReadTheNeighbouringChannel();
  void badInputsAreRefusedWithContext();
};

void PipelinePoseDecodeTest::flipIndicesMatchTheOfficialPermutation() {
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/pose/e2e.safetensors"));
  const std::vector<std::int64_t> expected = flipIndicesOf(file);
  QCOMPARE(expected.size(), std::size_t{308});
  QVERIFY(sapiens::readFlipIndices(sapiens::test::resource("data/keypoints308.json")) == expected);
  QVERIFY(sapiens::defaultFlipIndices() == expected);

  QTemporaryDir dir;
  const std::string broken = dir.filePath("broken.json").toStdString();
  std::ofstream(broken) << R"({"flip_indices": [0, 0, 1]})";
  try {
    sapiens::readFlipIndices(broken);
    QFAIL("a list that is not a permutation was accepted");
  } catch (const std::runtime_error& error) {
    QVERIFY2(QString(error.what()).contains("broken.json"), error.what());
  }
  QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                           sapiens::readFlipIndices(dir.filePath("missing.json").toStdString()));
}

void PipelinePoseDecodeTest::flipTestAverageMatchesOfficial_data() {
  QTest::addColumn<QString>("key");
  QTest::newRow("case0") << "case0";
  QTest::newRow("case1") << "case1";
  QTest::newRow("case2") << "case2";
}

void PipelinePoseDecodeTest::flipTestAverageMatchesOfficial() {
  QFETCH(QString, key);
  const std::string k = key.toStdString();
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/pose/e2e.safetensors"));
  const at::Tensor average = sapiens::averageFlipTest(
      tensorOf(file, k + ".heatmaps"), tensorOf(file, k + ".heatmaps_flip_raw"), flipIndicesOf(file));
  QCOMPARE(average.equal(tensorOf(file, k + ".heatmaps_avg")), true);
}

void PipelinePoseDecodeTest::officialDecodeIsBitExact_data() {
  QTest::addColumn<QString>("key");
  QTest::newRow("case0") << "case0";
  QTest::newRow("case1") << "case1";
  QTest::newRow("case2") << "case2";
}

void PipelinePoseDecodeTest::officialDecodeIsBitExact() {
  QFETCH(QString, key);
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/pose/e2e.safetensors"));
  const PoseCase c = loadCase(file, key.toStdString());
  const sapiens::DecodedKeypoints decoded =
      sapiens::decodeUdpHeatmaps(c.heatmapsAvg, c.inputSize, sapiens::DarkRefinement::Official);
  const auto count = c.scores.size(0);
  QCOMPARE(static_cast<std::int64_t>(decoded.scores.size()), count);
  int scoreMismatches = 0, inputMismatches = 0, imageMismatches = 0;
  double worstInput = 0, worstImage = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    if (decoded.scores[i] != c.scores[i].item<float>()) ++scoreMismatches;
    const auto image = sapiens::inputToImage(decoded.inputPixels[i], c.crop, c.inputSize);
    for (int axis = 0; axis < 2; ++axis) {
      const double expectedInput = c.keypointsInput[i][axis].item<double>();
      const double expectedImage = c.keypoints[i][axis].item<double>();
      if (!sameBits(decoded.inputPixels[i][axis], expectedInput)) ++inputMismatches;
      if (!sameBits(image[axis], expectedImage)) ++imageMismatches;
      worstInput = std::max(worstInput, std::abs(decoded.inputPixels[i][axis] - expectedInput));
      worstImage = std::max(worstImage, std::abs(image[axis] - expectedImage));
    }
  }
  qInfo(
      "%s official decode: score mismatches %d, keypoints_input bit mismatches %d (max |d| %.3g px), "
      "keypoints "
      "bit mismatches %d (max |d| %.3g px)",
      qPrintable(key), scoreMismatches, inputMismatches, worstInput, imageMismatches, worstImage);
  QCOMPARE(scoreMismatches, 0);
  QCOMPARE(inputMismatches, 0);
  QCOMPARE(imageMismatches, 0);
}

void PipelinePoseDecodeTest::guardedDecodeKeepsStableKeypointsAndStaysInTheCrop_data() {
  officialDecodeIsBitExact_data();
}

void PipelinePoseDecodeTest::guardedDecodeKeepsStableKeypointsAndStaysInTheCrop() {
  QFETCH(QString, key);
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/pose/e2e.safetensors"));
  const PoseCase c = loadCase(file, key.toStdString());
  const sapiens::DecodedKeypoints decoded =
      sapiens::decodeUdpHeatmaps(c.heatmapsAvg, c.inputSize, sapiens::DarkRefinement::Guarded);
  const auto count = c.scores.size(0);
  const double cellX = static_cast<double>(c.inputSize.width) / (c.heatmapsAvg.size(2) - 1);
  const double cellY = static_cast<double>(c.inputSize.height) / (c.heatmapsAvg.size(1) - 1);
  int stable = 0, refined = 0, outside = 0;
  double worstStable = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto& p = decoded.inputPixels[i];
    QVERIFY2(std::isfinite(p[0]) && std::isfinite(p[1]),
             qPrintable(QString("keypoint %1 not finite").arg(i)));
    QCOMPARE(decoded.scores[i], c.scores[i].item<float>());
    // Within the crop, give or take the documented margin (the invalid marker sits one cell before it).
    const double marginX = sapiens::kDarkMaxOutsideCells * cellX;
    const double marginY = sapiens::kDarkMaxOutsideCells * cellY;
    if (p[0] < -marginX || p[0] > c.inputSize.width + marginX || p[1] < -marginY ||
        p[1] > c.inputSize.height + marginY) {
      ++outside;
    }
    if (decoded.refinement[i] != sapiens::KeypointRefinement::None) ++refined;
    if (c.stable[i].item<bool>()) {
      ++stable;
      const auto image = sapiens::inputToImage(p, c.crop, c.inputSize);
      for (int axis = 0; axis < 2; ++axis) {
        worstStable = std::max(worstStable, std::abs(p[axis] - c.keypointsInput[i][axis].item<double>()));
        worstStable = std::max(worstStable, std::abs(image[axis] - c.keypoints[i][axis].item<double>()));
      }
    }
  }
  qInfo(
      "%s guarded decode: %d stable keypoints within %.3g px of official, %d of %lld refined, %d outside the "
      "crop",
      qPrintable(key), stable, worstStable, refined, static_cast<long long>(count), outside);
  QVERIFY(stable > 100);
  QVERIFY2(worstStable <= 1e-4, qPrintable(QString::number(worstStable)));
  QCOMPARE(outside, 0);
}

void PipelinePoseDecodeTest::sharpPeaksAreRefinedToSubpixelAccuracy() {
  // Gaussian peaks (sigma 2 cells) at sub-cell positions away from the border: both modes recover
  // them far better than the argmax's half-cell quantisation. (At the border the official edge
  // padding pins the step to half a cell, whatever the truth.)
  const sapiens::InputSize input{96, 128};
  const double truth[][2] = {{5.3, 7.8}, {10.7, 20.2}, {12.0, 16.0}, {17.45, 9.55}};
  for (const auto& t : truth) {
    const at::Tensor heatmap = gaussianHeatmap(24, 32, t[0], t[1], 2.0);
    for (auto mode : {sapiens::DarkRefinement::Official, sapiens::DarkRefinement::Guarded}) {
      const auto decoded = sapiens::decodeUdpHeatmaps(heatmap, input, mode);
      QVERIFY(decoded.refinement[0] == sapiens::KeypointRefinement::Newton);
      const double x = decoded.inputPixels[0][0] * 23 / 96;
      const double y = decoded.inputPixels[0][1] * 31 / 128;
      QVERIFY2(std::abs(x - t[0]) < 0.02 && std::abs(y - t[1]) < 0.02,
               qPrintable(QString("peak (%1, %2) decoded at (%3, %4)").arg(t[0]).arg(t[1]).arg(x).arg(y)));
    }
  }
  // A border peak: the official step ends half a cell outside, and the guard keeps it.
  const auto border = sapiens::decodeUdpHeatmaps(gaussianHeatmap(24, 32, 0.4, 12.6, 2.0), input);
  QVERIFY(border.refinement[0] == sapiens::KeypointRefinement::Newton);
  QVERIFY(std::abs(border.inputPixels[0][0] * 23 / 96 + 0.5) < 1e-5);
}

void PipelinePoseDecodeTest::guardedStepsAreOfficialPartialOrArgmax_data() {
  officialDecodeIsBitExact_data();
}

void PipelinePoseDecodeTest::guardedStepsAreOfficialPartialOrArgmax() {
  // Every guarded keypoint is the official one, the argmax cell, or the argmax moved along a single
  // direction by at most the step limit; the guard does overrule the official steps that fly off (the
  // fixtures' random heatmaps have plenty).
  QFETCH(QString, key);
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/pose/e2e.safetensors"));
  const PoseCase c = loadCase(file, key.toStdString());
  const auto official =
      sapiens::decodeUdpHeatmaps(c.heatmapsAvg, c.inputSize, sapiens::DarkRefinement::Official);
  const auto guarded =
      sapiens::decodeUdpHeatmaps(c.heatmapsAvg, c.inputSize, sapiens::DarkRefinement::Guarded);
  const std::int64_t width = c.heatmapsAvg.size(2);
  const double cellX = static_cast<double>(c.inputSize.width) / (width - 1);
  const double cellY = static_cast<double>(c.inputSize.height) / (c.heatmapsAvg.size(1) - 1);
  int overruled = 0, partial = 0;
  for (std::size_t i = 0; i < guarded.scores.size(); ++i) {
    const auto kind = guarded.refinement[i];
    if (kind == sapiens::KeypointRefinement::Newton) {
      QCOMPARE(guarded.inputPixels[i], official.inputPixels[i]);
      continue;
    }
    const auto peak = c.heatmapsAvg[static_cast<std::int64_t>(i)].flatten().argmax().item<std::int64_t>();
    const bool valid = guarded.scores[i] > 0;
    const double argmax[2] = {valid ? static_cast<double>(peak % width) * cellX : -cellX,
                              valid ? static_cast<double>(peak / width) * cellY : -cellY};
    const double moved = std::hypot((guarded.inputPixels[i][0] - argmax[0]) / cellX,
                                    (guarded.inputPixels[i][1] - argmax[1]) / cellY);
    if (kind == sapiens::KeypointRefinement::None) {
      QVERIFY2(moved < 1e-9,
               qPrintable(QString("keypoint %1 left its argmax by %2 cells").arg(i).arg(moved)));
    } else {
      ++partial;
      QVERIFY(moved <= sapiens::kDarkMaxStepCells + 1e-6);
    }
    if (std::hypot((official.inputPixels[i][0] - guarded.inputPixels[i][0]) / cellX,
                   (official.inputPixels[i][1] - guarded.inputPixels[i][1]) / cellY) > 1.0) {
      ++overruled;
    }
  }
  qInfo("%s: %d official steps overruled by more than a cell, %d partial steps", qPrintable(key), overruled,
        partial);
  QVERIFY(overruled > 0);
}

void PipelinePoseDecodeTest::nonPositiveHeatmapsGiveTheInvalidMarker() {
  const at::Tensor heatmaps = at::cat({gaussianHeatmap(12, 16, 5, 5, 2), -gaussianHeatmap(12, 16, 5, 5, 2)});
  const auto decoded = sapiens::decodeUdpHeatmaps(heatmaps, {48, 64}, sapiens::DarkRefinement::Guarded);
  QCOMPARE(decoded.scores[1], heatmaps[1].max().item<float>());
  QVERIFY(decoded.scores[1] <= 0);
  QVERIFY(decoded.refinement[1] == sapiens::KeypointRefinement::None);
  QCOMPARE(decoded.inputPixels[1][0], -48.0 / 11);
  QCOMPARE(decoded.inputPixels[1][1], -64.0 / 15);
}

void PipelinePoseDecodeTest::officialInvalidKeypointsReadTheNeighbouringChannel() {
  // The official decoder starts a keypoint whose heatmap is <= 0 at (-1, -1) and still takes its
  // Newton step, reading the flat array across the channel boundary: for channel 0, Python's negative
  // indexing reaches the last channel's bottom corners. The official mode reproduces that; the guarded
  // mode keeps the marker.
  at::Tensor heatmaps = at::cat({-gaussianHeatmap(12, 16, 5, 5, 2), gaussianHeatmap(12, 16, 6, 8, 2)});
  const auto before = sapiens::decodeUdpHeatmaps(heatmaps, {48, 64}, sapiens::DarkRefinement::Official);
  heatmaps[1][15][11] = 0.9f;  // the last channel's bottom-right corner
  heatmaps[1][14][11] = 0.3f;
  const auto after = sapiens::decodeUdpHeatmaps(heatmaps, {48, 64}, sapiens::DarkRefinement::Official);
  QVERIFY(before.inputPixels[0] != after.inputPixels[0]);
  QVERIFY(std::isfinite(after.inputPixels[0][0]) && std::isfinite(after.inputPixels[0][1]));
  const auto guarded = sapiens::decodeUdpHeatmaps(heatmaps, {48, 64}, sapiens::DarkRefinement::Guarded);
  QCOMPARE(guarded.inputPixels[0][0], -48.0 / 11);
  QCOMPARE(guarded.inputPixels[0][1], -64.0 / 15);
}

void PipelinePoseDecodeTest::badInputsAreRefusedWithContext() {
  try {
    sapiens::decodeUdpHeatmaps(at::zeros({2, 3}), {48, 64});
    QFAIL("a 2-D tensor was decoded");
  } catch (const std::invalid_argument& error) {
    QVERIFY2(QString(error.what()).contains("(2, 3)"), error.what());
  }
  QVERIFY_THROWS_EXCEPTION(
      std::invalid_argument,
      sapiens::decodeUdpHeatmaps(at::zeros({1, 4, 4}), {48, 64}, sapiens::DarkRefinement::Guarded, 4));
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::averageFlipTest(at::zeros({1, 3, 4, 4}),
                                                                           at::zeros({1, 3, 4, 4}), {0, 1}));
  QVERIFY_THROWS_EXCEPTION(
      std::invalid_argument,
      sapiens::averageFlipTest(at::zeros({1, 3, 4, 4}), at::zeros({1, 3, 4, 4}), {0, 1, 3}));
}

QTEST_APPLESS_MAIN(PipelinePoseDecodeTest)
#include "test_pipeline_pose_decode.moc"
