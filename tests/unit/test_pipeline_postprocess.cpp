// Dense post-processing fed the official model outputs (golden e2e fixtures): upsampled seg logits and
// labels, unit normals and the normal image; plus albedo, pointmap and the implied intrinsics, checked
// against what a pinhole camera must give.

#include "sapiens/model/safetensors.h"
#include "sapiens/model/safetensors_torch.h"
#include "sapiens/model/tensor_difference.h"
#include "sapiens/pipeline/frame_result.h"
#include "sapiens/pipeline/postprocess.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include "golden_tensors.h"

#include <QtTest>
#include <opencv2/core.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace {

using sapiens::test::maxAbsDifference;
using sapiens::test::tensorOf;
using sapiens::test::tensorOfMat;

sapiens::Padding paddingOf(const at::Tensor& p) {
  return {static_cast<int>(p[0].item<std::int64_t>()), static_cast<int>(p[1].item<std::int64_t>()),
          static_cast<int>(p[2].item<std::int64_t>()), static_cast<int>(p[3].item<std::int64_t>())};
}

}  // namespace

class PipelinePostprocessTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void segMatchesOfficialPostprocessing_data();
  void segMatchesOfficialPostprocessing();
  void segProbabilitiesAgreeWithTheLabels();
  void normalMatchesOfficialPostprocessing_data();
  void normalMatchesOfficialPostprocessing();
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
  const at::Tensor expectedImage = tensorOf(file, k + ".normal_image");
  const cv::Size imageSize(static_cast<int>(expectedImage.size(1)), static_cast<int>(expectedImage.size(0)));

  const double unitError = maxAbsDifference(sapiens::unitNormals(raw), tensorOf(file, k + ".normal_unit"));
  const cv::Mat image = sapiens::normalImage(raw, paddingOf(tensorOf(file, k + ".padding_size")), imageSize);
  QCOMPARE(image.type(), CV_32FC3);
  QCOMPARE(image.size(), imageSize);
  const double imageError = maxAbsDifference(tensorOfMat(image), expectedImage);
  qInfo("normal %s: normal_unit max |d| %.3g, normal_image max |d| %.3g", k.c_str(), unitError, imageError);
  QVERIFY2(unitError <= 1e-5, qPrintable(QString::number(unitError)));
  QVERIFY2(imageError <= 1e-5, qPrintable(QString::number(imageError)));
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
