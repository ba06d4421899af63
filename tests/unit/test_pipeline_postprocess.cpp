// Dense post-processing fed the official model outputs (golden e2e fixtures): upsampled seg logits and
// labels, unit normals and the normal image; plus albedo, pointmap and the implied intrinsics, checked
// against what a pinhole camera must give.

#include "pipeline/postprocess.h"
#include "sapiens/common/cpu_features.h"
#include "sapiens/export/map_png.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/model/safetensors_torch.h"
#include "sapiens/model/tensor_difference.h"
#include "sapiens/result/frame_result.h"
#include "test_support.h"

#include "cuda/kernels.h"

#include <ATen/ATen.h>
#include "golden_tensors.h"

#include <QtTest>
#include <opencv2/core.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

namespace {

using sapiens::test::maxAbsDifference;
using sapiens::test::tensorOf;
using sapiens::test::tensorOfMat;

sapiens::Padding paddingOf(const at::Tensor& p) {
  return {static_cast<int>(p[0].item<std::int64_t>()), static_cast<int>(p[1].item<std::int64_t>()),
          static_cast<int>(p[2].item<std::int64_t>()), static_cast<int>(p[3].item<std::int64_t>())};
}

/// Pixels where `labels` differs from argmax(1) of the upsampled logits (ATen), and how many of those are
/// not near-ties (the upsampled values of the two labels more than 1e-5 relative apart).
struct LabelComparison {
  std::int64_t differing = 0;
  std::int64_t beyondNearTies = 0;
};

LabelComparison compareWithUpsampledArgmax(const at::Tensor& logits,
                                           const at::Tensor& labels /* (H, W) long */) {
  const cv::Size size(static_cast<int>(labels.size(1)), static_cast<int>(labels.size(0)));
  const at::Tensor upsampled = sapiens::upsampleSegLogits(logits, size).squeeze(0);
  const at::Tensor expected = upsampled.argmax(0);
  const at::Tensor differ = labels.ne(expected);
  const at::Tensor mine = upsampled.gather(0, labels.unsqueeze(0)).squeeze(0);
  const at::Tensor theirs = upsampled.gather(0, expected.unsqueeze(0)).squeeze(0);
  const at::Tensor nearTie = (mine - theirs).abs() <= theirs.abs() * 1e-5;
  return {differ.sum().item<std::int64_t>(), (differ & nearTie.logical_not()).sum().item<std::int64_t>()};
}

at::Tensor labelTensor(const cv::Mat& labels) {
  return tensorOfMat(labels).squeeze(2).to(at::kLong);
}

}  // namespace

class PipelinePostprocessTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void segMatchesOfficialPostprocessing_data();
  void segMatchesOfficialPostprocessing();
  void segProbabilitiesAgreeWithTheLabels();
  void fusedSegLabelsEqualTheUpsampledArgmax_data();
  void fusedSegLabelsEqualTheUpsampledArgmax();
  void fusedSegLabelsTreatNanAsTheMaximum();
  void cudaKernelReferencesAgreeWithAten();
  void normalMatchesOfficialPostprocessing_data();
  void normalMatchesOfficialPostprocessing();
  void resampledNormalsAreUnitOrZero();
  void hugeFiniteNormalsKeepTheirDirection();
  void onePassNormalsEqualAtensOps();
  void albedoIsClampedCroppedAndResized();
  void gaussianBlurMatchesTorchvision();
  void metricPointmapDividesEachItemByItsScale();
  void intrinsicsAgreeWithThePostprocessedPointmap_data();
  void intrinsicsAgreeWithThePostprocessedPointmap();
  void badShapesAreRefusedWithContext();
  void frameResultReportsWhatRan();
};

void PipelinePostprocessTest::segMatchesOfficialPostprocessing_data() {
  QTest::addColumn<QString>("key");
  QTest::newRow("img0 90x80") << "img0";
  QTest::newRow("img1 36x30") << "img1";
}

void PipelinePostprocessTest::segMatchesOfficialPostprocessing() {
  QFETCH(QString, key);
  const std::string k = key.toStdString();
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/seg/e2e.safetensors"));
  const at::Tensor logits = tensorOf(file, k + ".seg_logits");
  const at::Tensor expectedMask = tensorOf(file, k + ".mask");
  const cv::Size imageSize(static_cast<int>(expectedMask.size(1)), static_cast<int>(expectedMask.size(0)));

  const at::Tensor upsampled = sapiens::upsampleSegLogits(logits, imageSize);
  const sapiens::TensorDifference d =
      sapiens::tensorDifference(upsampled, tensorOf(file, k + ".seg_logits_upsampled"));
  const sapiens::SegResult seg = sapiens::segLabels(logits, imageSize);
  QCOMPARE(seg.labels.type(), CV_8UC1);
  QCOMPARE(seg.labels.size(), imageSize);
  QVERIFY(!seg.probabilities.defined());
  const at::Tensor labels = tensorOfMat(seg.labels).squeeze(2).to(at::kLong);
  const auto wrong = labels.ne(expectedMask).sum().item<std::int64_t>();
  qInfo("seg %s: seg_logits_upsampled max rel %.3g, mask pixels differing %lld of %lld", k.c_str(),
        d.maxRelative, static_cast<long long>(wrong), static_cast<long long>(labels.numel()));
  QVERIFY(d.shapesMatch);
  QVERIFY2(d.maxRelative <= 1e-5, qPrintable(QString::number(d.maxRelative)));
  QCOMPARE(wrong, std::int64_t{0});
  // The fixture's labels are not all one class, so the comparison means something.
  QVERIFY(expectedMask.min().item<std::int64_t>() != expectedMask.max().item<std::int64_t>());
}

void PipelinePostprocessTest::segProbabilitiesAgreeWithTheLabels() {
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/seg/e2e.safetensors"));
  const at::Tensor logits = tensorOf(file, "img1.seg_logits");
  const sapiens::SegResult seg = sapiens::segLabels(logits, cv::Size(30, 36), true);
  QCOMPARE(seg.probabilities.sizes(), (at::IntArrayRef{29, 36, 30}));
  QVERIFY(seg.probabilities.device().is_cpu());
  QVERIFY(maxAbsDifference(seg.probabilities.sum(0), at::ones({36, 30})) < 1e-5);
  const at::Tensor argmax = seg.probabilities.argmax(0);
  QCOMPARE(argmax.equal(tensorOfMat(seg.labels).squeeze(2).to(at::kLong)), true);
}

void PipelinePostprocessTest::fusedSegLabelsEqualTheUpsampledArgmax_data() {
  QTest::addColumn<int>("classes");
  QTest::addColumn<int>("height");
  QTest::addColumn<int>("width");
  QTest::addColumn<int>("outHeight");
  QTest::addColumn<int>("outWidth");
  QTest::addColumn<bool>("bfloat16");
  QTest::addColumn<bool>("coarse");  // values on a 1/8 grid: many exact ties (the first class wins)
  QTest::newRow("29 classes 64x48 -> 540x960") << 29 << 64 << 48 << 540 << 960 << false << false;
  QTest::newRow("odd 37x23 -> 101x59") << 7 << 37 << 23 << 101 << 59 << false << false;
  QTest::newRow("down 100x80 -> 33x47") << 5 << 100 << 80 << 33 << 47 << false << false;
  QTest::newRow("up and down 13x40 -> 37x11") << 6 << 13 << 40 << 37 << 11 << false << false;
  QTest::newRow("same size 16x16") << 3 << 16 << 16 << 16 << 16 << false << false;
  QTest::newRow("one class") << 1 << 5 << 7 << 9 << 11 << false << false;
  QTest::newRow("256 classes") << 256 << 8 << 6 << 31 << 17 << false << false;
  QTest::newRow("1x1 map") << 4 << 1 << 1 << 5 << 7 << false << false;
  QTest::newRow("one row 1x9 -> 4x20") << 3 << 1 << 9 << 4 << 20 << false << false;
  QTest::newRow("bfloat16 32x24 -> 97x131") << 29 << 32 << 24 << 97 << 131 << true << false;
  QTest::newRow("ties 20x20 -> 77x53") << 8 << 20 << 20 << 77 << 53 << false << true;
}

// segLabels without probabilities runs the fused row-by-row upsampling + argmax on the CPU; the reference
// is argmax over the whole upsampled map (upsampleSegLogits), as segLabels did before.
void PipelinePostprocessTest::fusedSegLabelsEqualTheUpsampledArgmax() {
  QFETCH(int, classes);
  QFETCH(int, height);
  QFETCH(int, width);
  QFETCH(int, outHeight);
  QFETCH(int, outWidth);
  QFETCH(bool, bfloat16);
  QFETCH(bool, coarse);
  at::manual_seed(classes * 1000 + outWidth);
  at::Tensor logits = at::randn({1, classes, height, width}) * 3.0;
  if (coarse) logits = (logits * 8.0).round() / 8.0;
  if (bfloat16) logits = logits.to(at::kBFloat16);
  const cv::Size size(outWidth, outHeight);
  const sapiens::SegResult fused = sapiens::segLabels(logits, size);
  QCOMPARE(fused.labels.size(), size);
  const LabelComparison c = compareWithUpsampledArgmax(logits, labelTensor(fused.labels));
  qInfo("fused vs upsampled argmax: %lld of %d labels differ (%lld beyond near-ties)",
        static_cast<long long>(c.differing), outWidth * outHeight, static_cast<long long>(c.beyondNearTies));
  // Label for label: the fused path reproduces ATen's rounding, or segLabels keeps ATen's path.
  QCOMPARE(c.differing, std::int64_t{0});
  // The reference path (kept for probabilities) gives the same labels.
  const sapiens::SegResult reference = sapiens::segLabels(logits, size, true);
  QCOMPARE(cv::countNonZero(reference.labels != fused.labels), static_cast<int>(c.differing));
}

void PipelinePostprocessTest::fusedSegLabelsTreatNanAsTheMaximum() {
  at::manual_seed(11);
  at::Tensor logits = at::randn({1, 9, 24, 18});
  // Scattered NaN logits (each spreads to the output pixels interpolating it), and one class NaN in
  // a whole block: argmax counts NaN as the maximum, the first NaN class wins.
  logits.masked_fill_(at::rand({1, 9, 24, 18}) < 0.02, std::numeric_limits<float>::quiet_NaN());
  logits.narrow(1, 6, 1).narrow(2, 4, 6).narrow(3, 3, 5).fill_(std::numeric_limits<float>::quiet_NaN());
  logits.narrow(1, 2, 1).narrow(2, 8, 2).narrow(3, 5, 2).fill_(std::numeric_limits<float>::quiet_NaN());
  const cv::Size size(61, 83);
  const at::Tensor fused = labelTensor(sapiens::segLabels(logits, size).labels);
  const at::Tensor reference = labelTensor(sapiens::segLabels(logits, size, true).labels);
  const at::Tensor upsampledNan = sapiens::upsampleSegLogits(logits, size).squeeze(0).isnan();
  QVERIFY(upsampledNan.any(0).sum().item<std::int64_t>() > 100);  // the case is exercised
  QCOMPARE(fused.ne(reference).sum().item<std::int64_t>(), std::int64_t{0});
  // Where class 2 is NaN the label is 2 or an earlier NaN class, never a later one.
  const at::Tensor firstNan = upsampledNan.to(at::kByte).argmax(0);
  const at::Tensor anyNan = upsampledNan.any(0);
  QCOMPARE(fused.masked_select(anyNan).equal(firstNan.masked_select(anyNan)), true);
}

// The CPU references of the CUDA kernels (core/src/cuda/kernels.h; the kernels themselves are compared
// with them by tests/cuda on a GPU) against ATen on this machine.
void PipelinePostprocessTest::cudaKernelReferencesAgreeWithAten() {
  using sapiens::cuda::ElementType;
  at::manual_seed(5);
  // (a) upsample + argmax: float32 and bfloat16 logits, labels as ATen's except near-ties.
  for (const bool bf16 : {false, true}) {
    const at::Tensor logits =
        (at::randn({1, 29, 64, 48}) * 3.0).to(bf16 ? at::kBFloat16 : at::kFloat).contiguous();
    at::Tensor labels = at::empty({270, 480}, at::kByte);
    sapiens::cuda::upsampleArgmaxReference(logits.data_ptr(),
                                           bf16 ? ElementType::BFloat16 : ElementType::Float32, 1, 29, 64, 48,
                                           270, 480, labels.data_ptr<std::uint8_t>());
    const LabelComparison c = compareWithUpsampledArgmax(logits, labels.to(at::kLong));
    qInfo("kernel reference (%s) vs ATen: %lld of %d labels differ (%lld beyond near-ties)",
          bf16 ? "bf16" : "fp32", static_cast<long long>(c.differing), 270 * 480,
          static_cast<long long>(c.beyondNearTies));
    QCOMPARE(c.beyondNearTies, std::int64_t{0});
  }

  // (b) heatmap peaks: numpy's argmax / amax per channel, NaN included.
  at::Tensor heatmaps = at::randn({2, 5, 16, 12});
  heatmaps[0][1].fill_(0.5);    // all equal: index 0
  heatmaps[0][2][3][4] = 9.0f;  // the maximum twice: the first
  heatmaps[0][2][7][1] = 9.0f;
  heatmaps[1][0][2][2] = std::numeric_limits<float>::quiet_NaN();  // NaN twice: the first NaN
  heatmaps[1][0][9][0] = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::int32_t> indices(10);
  std::vector<float> values(10);
  sapiens::cuda::heatmapPeaksReference(heatmaps.data_ptr(), ElementType::Float32, 2, 5, 16, 12,
                                       indices.data(), values.data());
  const at::Tensor flat = heatmaps.reshape({10, -1});
  for (int m = 0; m < 10; ++m) {
    const at::Tensor row = flat[m];
    const bool hasNan = row.isnan().any().item<bool>();
    const std::int64_t expected =
        hasNan ? row.isnan().nonzero()[0][0].item<std::int64_t>() : row.argmax().item<std::int64_t>();
    QCOMPARE(static_cast<std::int64_t>(indices[static_cast<std::size_t>(m)]), expected);
    if (hasNan) {
      QVERIFY(std::isnan(values[static_cast<std::size_t>(m)]));
    } else {
      QCOMPARE(values[static_cast<std::size_t>(m)], row.max().item<float>());
    }
  }
  QCOMPARE(indices[1], 0);
  QCOMPARE(indices[2], 3 * 12 + 4);
  QCOMPARE(indices[5], 2 * 12 + 2);

  // (c) vertex buffer: the finite, unmasked points in pixel order.
  at::Tensor pointmap = at::randn({3, 30, 40});
  pointmap.masked_fill_(at::rand({3, 30, 40}) < 0.05, std::numeric_limits<float>::infinity());
  pointmap.masked_fill_(at::rand({3, 30, 40}) < 0.05, std::numeric_limits<float>::quiet_NaN());
  const at::Tensor mask = (at::rand({30, 40}) < 0.7).to(at::kByte);
  std::vector<float> vertices(3 * 30 * 40);
  const std::int64_t count = sapiens::cuda::pointmapVerticesReference(
      pointmap.data_ptr(), ElementType::Float32, mask.data_ptr<std::uint8_t>(), 30, 40, vertices.data());
  const at::Tensor keep = (pointmap.isfinite().all(0) & mask.to(at::kBool)).reshape({-1});
  const at::Tensor expected =
      pointmap.reshape({3, -1}).t().index_select(0, keep.nonzero().squeeze(1)).contiguous();
  QCOMPARE(count, expected.size(0));
  QVERIFY(count > 100);
  QCOMPARE(std::memcmp(vertices.data(), expected.data_ptr<float>(), static_cast<std::size_t>(count) * 12), 0);
}

void PipelinePostprocessTest::normalMatchesOfficialPostprocessing_data() {
  QTest::addColumn<QString>("key");
  QTest::newRow("img0 90x80") << "img0";
  QTest::newRow("img1 36x30") << "img1";
}

void PipelinePostprocessTest::normalMatchesOfficialPostprocessing() {
  QFETCH(QString, key);
  const std::string k = key.toStdString();
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/normal/e2e.safetensors"));
  const at::Tensor raw = tensorOf(file, k + ".normal_raw");
  const at::Tensor officialImage = tensorOf(file, k + ".normal_image");
  const at::Tensor expectedImage = sapiens::test::unitLengthNormalImage(officialImage);
  const cv::Size imageSize(static_cast<int>(officialImage.size(1)), static_cast<int>(officialImage.size(0)));

  const double unitError = maxAbsDifference(sapiens::unitNormals(raw), tensorOf(file, k + ".normal_unit"));
  const cv::Mat image = sapiens::normalImage(raw, paddingOf(tensorOf(file, k + ".padding_size")), imageSize);
  QCOMPARE(image.type(), CV_32FC3);
  QCOMPARE(image.size(), imageSize);
  const double imageError = maxAbsDifference(tensorOfMat(image), expectedImage);
  qInfo("normal %s: normal_unit max |d| %.3g, normal_image max |d| %.3g", k.c_str(), unitError, imageError);
  QVERIFY2(unitError <= 1e-5, qPrintable(QString::number(unitError)));
  QVERIFY2(imageError <= 1e-5, qPrintable(QString::number(imageError)));
  // The official image is shorter than 1 where neighbours disagree; ours is not.
  const at::Tensor officialLength = officialImage.to(at::kDouble).norm(2, {2});
  const at::Tensor length = tensorOfMat(image).to(at::kDouble).norm(2, {2});
  qInfo("normal %s: official lengths %.3f..%.3f, ours %.6f..%.6f", k.c_str(),
        officialLength.min().item<double>(), officialLength.max().item<double>(), length.min().item<double>(),
        length.max().item<double>());
  QVERIFY((length - 1).abs().max().item<double>() <= 1e-4);
}

// Outputs of 1e30 (finite, but their squares overflow float32) once normalised to zero vectors: "no
// direction" for every pixel of a model whose weights are merely large.
void PipelinePostprocessTest::hugeFiniteNormalsKeepTheirDirection() {
  at::Tensor raw = at::zeros({1, 3, 4, 4});
  raw.select(1, 0).fill_(3e30);
  raw.select(1, 1).fill_(-4e30);
  raw[0][2][0][0] = std::numeric_limits<float>::infinity();  // this pixel has none
  const at::Tensor unit = sapiens::unitNormals(raw);
  QVERIFY(std::abs(unit[0][0][1][1].item<double>() - 0.6) < 1e-6);
  QVERIFY(std::abs(unit[0][1][1][1].item<double>() + 0.8) < 1e-6);
  const cv::Mat image = sapiens::normalImage(raw, {}, cv::Size(4, 4));
  const cv::Vec3f n = image.at<cv::Vec3f>(3, 3);
  QVERIFY2(std::abs(n[0] - 0.6f) < 1e-5f && std::abs(n[1] + 0.8f) < 1e-5f,
           qPrintable(QString("%1 %2 %3").arg(n[0]).arg(n[1]).arg(n[2])));
}

void PipelinePostprocessTest::onePassNormalsEqualAtensOps() {
  // normalImage's one-pass CPU kernel against resampledUnitNormals (ATen's norm, where and division) on
  // the same resampled map: ordinary vectors, tiny and zero ones, NaN and infinite components, and
  // finite ones whose length overflows float. Bit for bit where ATen's vectorised kernels run (they sum
  // the squares with fused multiply-adds, as the kernel does); within an ulp of 1 elsewhere.
  at::manual_seed(5);
  at::Tensor raw = at::randn({1, 3, 24, 32});
  raw.narrow(2, 0, 3).narrow(3, 0, 5).mul_(1e-7);
  raw.narrow(2, 3, 2).narrow(3, 0, 4).zero_();
  raw[0][1][6][6] = std::numeric_limits<float>::quiet_NaN();
  raw[0][2][7][7] = std::numeric_limits<float>::infinity();
  raw.narrow(2, 10, 3).narrow(3, 10, 3).fill_(3e38);
  raw[0][0][20][20] = -2.5e38f;
  const cv::Size size(71, 53);
  const cv::Mat got = sapiens::normalImage(raw, {}, size);
  const at::Tensor resampled =
      sapiens::resizeBilinear(sapiens::cropPadding(sapiens::unitNormals(raw), {}), size);
  const cv::Mat expected = sapiens::toImageMat(sapiens::resampledUnitNormals(resampled));
  QCOMPARE(got.size(), expected.size());
  const auto same = [](const cv::Mat& a, const cv::Mat& b) {
    if (sapiens::cpu::hasAvx2Fma()) return std::memcmp(a.data, b.data, a.total() * a.elemSize()) == 0;
    cv::Mat nanA, nanB;
    cv::compare(a, a, nanA, cv::CMP_NE);
    cv::compare(b, b, nanB, cv::CMP_NE);
    cv::Mat diff;
    cv::absdiff(a, b, diff);
    cv::patchNaNs(diff, 0.0);
    return cv::countNonZero(nanA.reshape(1) != nanB.reshape(1)) == 0 &&
           cv::norm(diff, cv::NORM_INF) <= 1.2e-7;
  };
  QVERIFY(same(got, expected));
  // The same for a map that is not resampled at all (its non-finite vectors reach the kernel).
  const at::Tensor unit = sapiens::unitNormals(raw);
  const cv::Mat direct = sapiens::normalImage(unit, {}, cv::Size(32, 24));
  const cv::Mat directExpected = sapiens::toImageMat(
      sapiens::resampledUnitNormals(sapiens::resizeBilinear(sapiens::unitNormals(unit), cv::Size(32, 24))));
  QVERIFY(same(direct, directExpected));
}

void PipelinePostprocessTest::resampledNormalsAreUnitOrZero() {
  // Left half pointing +x, right half -x, a zero block: interpolating across the middle passes through
  // (0, 0, 0) and the block has no direction at all.
  at::Tensor raw = at::zeros({1, 3, 8, 8});
  raw.select(1, 0).narrow(2, 0, 4).fill_(2.0);
  raw.select(1, 0).narrow(2, 4, 4).fill_(-3.0);
  raw.select(1, 2).fill_(0.5);
  raw.narrow(2, 0, 2).narrow(3, 0, 2).zero_();
  const cv::Mat image = sapiens::normalImage(raw, {}, cv::Size(37, 29));
  int zero = 0, unit = 0;
  for (int y = 0; y < image.rows; ++y) {
    for (int x = 0; x < image.cols; ++x) {
      const cv::Vec3f n = image.at<cv::Vec3f>(y, x);
      const double length = cv::norm(n);
      if (n == cv::Vec3f(0, 0, 0)) {
        ++zero;
      } else {
        QVERIFY2(std::abs(length - 1.0) <= 1e-4,
                 qPrintable(QString("(%1, %2) has length %3").arg(x).arg(y).arg(length)));
        ++unit;
      }
    }
  }
  QVERIFY2(image.at<cv::Vec3f>(0, 0) == cv::Vec3f(0, 0, 0), "the zero block gained a direction");
  QVERIFY(zero > 0 && zero < 80);
  QCOMPARE(zero + unit, 37 * 29);
  // The invalid pixels are drawn as background and give the PLY no normal of their own.
  const cv::Mat picture = sapiens::normalMapImage(image);
  QCOMPARE(picture.at<cv::Vec3b>(0, 0), cv::Vec3b(0, 0, 0));
  QVERIFY(picture.at<cv::Vec3b>(28, 36) != cv::Vec3b(0, 0, 0));
}

void PipelinePostprocessTest::albedoIsClampedCroppedAndResized() {
  // 3 x 6 x 4 map with 1 px padding left and top; content 5 x 3 in [-1, 2].
  at::Tensor albedo = at::linspace(-1.0, 2.0, 3 * 6 * 4).reshape({1, 3, 6, 4});
  const sapiens::Padding padding{1, 0, 1, 0};
  const cv::Mat same = sapiens::albedoImage(albedo, padding, cv::Size(3, 5));
  const at::Tensor expected =
      albedo.clamp(0, 1).narrow(2, 1, 5).narrow(3, 1, 3).squeeze(0).permute({1, 2, 0});
  QCOMPARE(maxAbsDifference(tensorOfMat(same), expected), 0.0);
  const cv::Mat larger = sapiens::albedoImage(albedo, padding, cv::Size(9, 15));
  QCOMPARE(larger.size(), cv::Size(9, 15));
  double low = 0, high = 0;
  cv::minMaxLoc(larger.reshape(1), &low, &high);
  QVERIFY(low >= 0.0 && high <= 1.0);
  QVERIFY(high == 1.0 && low == 0.0);
}

void PipelinePostprocessTest::gaussianBlurMatchesTorchvision() {
  // torchvision's kernel for 3 x 3, sigma 0.8: exp(-0.5 (x / 0.8)^2) normalised over x = -1, 0, 1.
  const double side = std::exp(-0.5 / 0.64);
  const double w[3] = {side / (1 + 2 * side), 1 / (1 + 2 * side), side / (1 + 2 * side)};
  const at::Tensor map = at::arange(20, at::kFloat).pow(2).reshape({1, 1, 4, 5});
  const at::Tensor blurred = sapiens::gaussianBlur3x3(map);
  QCOMPARE(blurred.sizes(), map.sizes());
  auto reflect = [](int i, int n) { return i < 0 ? -i : (i >= n ? 2 * n - 2 - i : i); };
  double worst = 0;
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 5; ++x) {
      double expected = 0;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          expected +=
              w[dy + 1] * w[dx + 1] * map[0][0][reflect(y + dy, 4)][reflect(x + dx, 5)].item<double>();
        }
      }
      worst = std::max(worst, std::abs(expected - blurred[0][0][y][x].item<double>()));
    }
  }
  QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
}

void PipelinePostprocessTest::metricPointmapDividesEachItemByItsScale() {
  const at::Tensor canonical = at::ones({2, 3, 2, 2});
  const at::Tensor scale = at::tensor({0.5f, 4.0f}).reshape({2, 1});
  const at::Tensor metric = sapiens::metricPointmap(canonical, scale);
  QCOMPARE(metric[0].eq(2.0f).all().item<bool>(), true);
  QCOMPARE(metric[1].eq(0.25f).all().item<bool>(), true);
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::metricPointmap(canonical, at::ones({3, 1})));
}

void PipelinePostprocessTest::intrinsicsAgreeWithThePostprocessedPointmap_data() {
  QTest::addColumn<int>("imageWidth");
  QTest::addColumn<int>("imageHeight");
  QTest::newRow("larger, letterboxed top/bottom (blurred)") << 80 << 90;
  QTest::newRow("smaller, letterboxed left/right") << 30 << 36;
  QTest::newRow("wide") << 200 << 60;
}

void PipelinePostprocessTest::intrinsicsAgreeWithThePostprocessedPointmap() {
  // A scene seen by a pinhole camera in the input frame, as the training targets define it:
  // X = (u - c_x) Z / f, Y = (v - c_y) Z / f on the 48 x 64 input; the model output is canonical
  // (scaled by s = 768 / f) and the scale output is s. Post-processing the padded map back to the
  // picture must give points that the implied image intrinsics project onto their own pixels.
  QFETCH(int, imageWidth);
  QFETCH(int, imageHeight);
  const sapiens::InputSize input{48, 64};
  const cv::Mat picture(imageHeight, imageWidth, CV_8UC3, cv::Scalar::all(128));
  const sapiens::Padding padding = sapiens::letterboxToInput(picture, input).padding;
  const double focal = 60.0;
  const double scale = sapiens::kCanonicalFocalPx / focal;
  const double cx = (input.width - 1) / 2.0;
  const double cy = (input.height - 1) / 2.0;
  const at::Tensor u =
      at::arange(input.width, at::kDouble).reshape({1, input.width}).expand({input.height, input.width});
  const at::Tensor v =
      at::arange(input.height, at::kDouble).reshape({input.height, 1}).expand({input.height, input.width});
  const at::Tensor z = 2.0 + 0.002 * u;  // a slanted plane
  const at::Tensor canonical =
      at::stack({(u - cx) * z / focal, (v - cy) * z / focal, z}).unsqueeze(0) * scale;
  const at::Tensor scaleOut = at::full({1, 1}, scale, at::kDouble);

  const cv::Mat metric = sapiens::pointmapImage(
      sapiens::metricPointmap(canonical.to(at::kFloat), scaleOut.to(at::kFloat)), padding, picture.size());
  const sapiens::Intrinsics k = sapiens::intrinsicsFromScale(scale, padding, input, picture.size());
  // Away from the borders (where blurring and bilinear clamping bend the map), each pixel's point
  // projects onto that pixel.
  double worst = 0;
  const int margin = std::max(4, imageWidth / 8);
  for (int y = margin; y < imageHeight - margin; ++y) {
    for (int x = margin; x < imageWidth - margin; ++x) {
      const cv::Vec3f p = metric.at<cv::Vec3f>(y, x);
      worst = std::max(worst, std::abs(k.fx * p[0] / p[2] + k.cx - x));
      worst = std::max(worst, std::abs(k.fy * p[1] / p[2] + k.cy - y));
    }
  }
  qInfo("%dx%d: fx %.3f fy %.3f cx %.3f cy %.3f, worst reprojection %.3g px", imageWidth, imageHeight, k.fx,
        k.fy, k.cx, k.cy, worst);
  QVERIFY2(worst < 0.05, qPrintable(QString::number(worst)));
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                           sapiens::intrinsicsFromScale(0.0, padding, input, picture.size()));
}

void PipelinePostprocessTest::badShapesAreRefusedWithContext() {
  try {
    sapiens::normalImage(at::zeros({1, 2, 8, 8}), {}, cv::Size(4, 4));
    QFAIL("a two-channel normal map was accepted");
  } catch (const std::invalid_argument& error) {
    QVERIFY2(QString(error.what()).contains("(1, 2, 8, 8)"), error.what());
  }
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                           sapiens::cropPadding(at::zeros({1, 3, 8, 8}), {4, 4, 0, 0}));
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                           sapiens::segLabels(at::zeros({1, 300, 4, 4}), cv::Size(4, 4)));
  QVERIFY_THROWS_EXCEPTION(std::out_of_range, sapiens::batchItem(at::zeros({2, 3, 4, 4}), 2));
  QCOMPARE(sapiens::batchItem(at::arange(2 * 3 * 4 * 4).reshape({2, 3, 4, 4}), 1).sizes(),
           (at::IntArrayRef{1, 3, 4, 4}));
}

void PipelinePostprocessTest::frameResultReportsWhatRan() {
  sapiens::FrameResult frame;
  for (sapiens::Task task : sapiens::allTasks()) QVERIFY(!frame.has(task));
  frame.segLabels = cv::Mat(2, 2, CV_8UC1, cv::Scalar(0));
  frame.pointmap = cv::Mat(2, 2, CV_32FC3);
  frame.poses.emplace_back();
  QVERIFY(frame.has(sapiens::Task::Seg));
  QVERIFY(frame.has(sapiens::Task::Pointmap));
  QVERIFY(frame.has(sapiens::Task::Pose));
  QVERIFY(!frame.has(sapiens::Task::Normal));
  QVERIFY(!frame.has(sapiens::Task::Albedo));
  QVERIFY(!frame.has(sapiens::Task::Backbone));
}

QTEST_APPLESS_MAIN(PipelinePostprocessTest)
#include "test_pipeline_postprocess.moc"
