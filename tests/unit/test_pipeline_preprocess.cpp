// Pre-processing against the official pipeline's own intermediates (golden e2e fixtures): the resized,
// letterboxed or warped 8-bit picture, the padding, the pose crop geometry and the normalised input.

#include "pipeline/pose_crop.h"
#include "pipeline/preprocess.h"
#include "sapiens/media/image_io.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/model/safetensors_torch.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include "golden_tensors.h"

#include <QtTest>

#include <cstring>
#include <stdexcept>

namespace {

using sapiens::test::inputSizeOf;
using sapiens::test::maxAbsDifference;
using sapiens::test::tensorOf;

/// H x W x 3 uint8 as a CHW tensor, like the fixtures' pipeline_out.
at::Tensor chwOf(const cv::Mat& image) {
  const at::Tensor hwc = at::from_blob(image.data, {image.rows, image.cols, 3}, at::kByte);
  return hwc.permute({2, 0, 1}).contiguous();
}

cv::Mat matOfHwc(const at::Tensor& hwc) {
  const at::Tensor t = hwc.contiguous();
  cv::Mat image(static_cast<int>(t.size(0)), static_cast<int>(t.size(1)), CV_8UC3);
  std::memcpy(image.data, t.data_ptr<std::uint8_t>(), static_cast<std::size_t>(t.numel()));
  return image;
}

/// Largest per-channel difference of two uint8 CHW tensors.
int maxByteDifference(const at::Tensor& got, const at::Tensor& expected) {
  return (got.to(at::kInt) - expected.to(at::kInt)).abs().max().item<int>();
}

}  // namespace

class PipelinePreprocessTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void fixtureImagesDecodeToTheStoredPixels_data();
  void fixtureImagesDecodeToTheStoredPixels();
  void segStretchMatchesOfficialPipeline_data();
  void segStretchMatchesOfficialPipeline();
  void normalLetterboxMatchesOfficialPipeline_data();
  void normalLetterboxMatchesOfficialPipeline();
  void poseCropMatchesOfficialPipeline_data();
  void poseCropMatchesOfficialPipeline();
  void normalisationWritesIntoABatchSlot();
  void letterboxCentresOddPaddingLikeTheOfficialCode();
  void poseCropWidensToTheInputAspect();
  void inputToImageFollowsTheOfficialMapping();
  void wrongImagesAreRefusedWithContext();
  void inputSizeIsReadAsHeightByWidthInWholePatches_data();
  void inputSizeIsReadAsHeightByWidthInWholePatches();
};

void PipelinePreprocessTest::fixtureImagesDecodeToTheStoredPixels_data() {
  QTest::addColumn<QString>("task");
  QTest::addColumn<QString>("key");
  QTest::addColumn<QString>("png");
  QTest::newRow("seg img0") << "seg"
                            << "img0"
                            << "e2e_img0.png";
  QTest::newRow("seg img1") << "seg"
                            << "img1"
                            << "e2e_img1.png";
  QTest::newRow("pose case1") << "pose"
                              << "case1"
                              << "e2e_img1.png";
  QTest::newRow("pose case2") << "pose"
                              << "case2"
                              << "e2e_img0.png";
}

void PipelinePreprocessTest::fixtureImagesDecodeToTheStoredPixels() {
  QFETCH(QString, task);
  QFETCH(QString, key);
  QFETCH(QString, png);
  const std::string folder = "golden/" + task.toStdString() + "/";
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture(folder + "e2e.safetensors"));
  const cv::Mat image = sapiens::readImageBgr(sapiens::test::fixture(folder + png.toStdString()));
  const at::Tensor stored = tensorOf(file, key.toStdString() + ".image_bgr");
  QCOMPARE(image.rows, static_cast<int>(stored.size(0)));
  QCOMPARE(image.cols, static_cast<int>(stored.size(1)));
  QCOMPARE(maxByteDifference(chwOf(image), stored.permute({2, 0, 1})), 0);
}

void PipelinePreprocessTest::segStretchMatchesOfficialPipeline_data() {
  QTest::addColumn<QString>("key");
  QTest::newRow("img0 (shrinks, INTER_AREA)") << "img0";
  QTest::newRow("img1 (enlarges, INTER_CUBIC)") << "img1";
}

void PipelinePreprocessTest::segStretchMatchesOfficialPipeline() {
  QFETCH(QString, key);
  const std::string k = key.toStdString();
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/seg/e2e.safetensors"));
  const cv::Mat image = matOfHwc(tensorOf(file, k + ".image_bgr"));
  const at::Tensor expectedInput = tensorOf(file, k + ".input");
  const cv::Mat resized = sapiens::stretchToInput(image, inputSizeOf(expectedInput));
  const int byteError = maxByteDifference(chwOf(resized), tensorOf(file, k + ".pipeline_out"));
  const at::Tensor input = sapiens::normalizeImage(resized);
  const double inputError = maxAbsDifference(input, expectedInput);
  qInfo("seg %s: pipeline_out max |d| = %d, input max |d| = %.3g", k.c_str(), byteError, inputError);
  QCOMPARE(byteError, 0);
  QCOMPARE(input.sizes(), expectedInput.sizes());
  QVERIFY2(inputError <= 1e-6, qPrintable(QString::number(inputError)));
}

void PipelinePreprocessTest::normalLetterboxMatchesOfficialPipeline_data() {
  QTest::addColumn<QString>("key");
  QTest::newRow("img0 (shrinks)") << "img0";
  QTest::newRow("img1 (enlarges)") << "img1";
}

void PipelinePreprocessTest::normalLetterboxMatchesOfficialPipeline() {
  QFETCH(QString, key);
  const std::string k = key.toStdString();
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/normal/e2e.safetensors"));
  const cv::Mat image = matOfHwc(tensorOf(file, k + ".image_bgr"));
  const at::Tensor expectedInput = tensorOf(file, k + ".input");
  const sapiens::Letterbox letterbox = sapiens::letterboxToInput(image, inputSizeOf(expectedInput));
  const at::Tensor padding = tensorOf(file, k + ".padding_size");
  const sapiens::Padding expectedPadding{
      static_cast<int>(padding[0].item<std::int64_t>()), static_cast<int>(padding[1].item<std::int64_t>()),
      static_cast<int>(padding[2].item<std::int64_t>()), static_cast<int>(padding[3].item<std::int64_t>())};
  QVERIFY(letterbox.padding == expectedPadding);
  QCOMPARE(letterbox.contentWidth + letterbox.padding.left + letterbox.padding.right,
           static_cast<int>(expectedInput.size(3)));
  const int byteError = maxByteDifference(chwOf(letterbox.image), tensorOf(file, k + ".pipeline_out"));
  const double inputError = maxAbsDifference(sapiens::normalizeImage(letterbox.image), expectedInput);
  qInfo("normal %s: padding [%d %d %d %d], pipeline_out max |d| = %d, input max |d| = %.3g", k.c_str(),
        letterbox.padding.left, letterbox.padding.right, letterbox.padding.top, letterbox.padding.bottom,
        byteError, inputError);
  QCOMPARE(byteError, 0);
  QVERIFY2(inputError <= 1e-6, qPrintable(QString::number(inputError)));
}

void PipelinePreprocessTest::poseCropMatchesOfficialPipeline_data() {
  QTest::addColumn<QString>("key");
  QTest::newRow("case0 whole img0") << "case0";
  QTest::newRow("case1 whole img1 (enlarges)") << "case1";
  QTest::newRow("case2 box past the border") << "case2";
}

void PipelinePreprocessTest::poseCropMatchesOfficialPipeline() {
  QFETCH(QString, key);
  const std::string k = key.toStdString();
  const auto file = sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/pose/e2e.safetensors"));
  const cv::Mat image = matOfHwc(tensorOf(file, k + ".image_bgr"));
  const at::Tensor box = tensorOf(file, k + ".bbox_xyxy");
  const at::Tensor inputSize = tensorOf(file, k + ".input_size_wh");
  const sapiens::InputSize size{static_cast<int>(inputSize[0].item<std::int64_t>()),
                                static_cast<int>(inputSize[1].item<std::int64_t>())};
  const float* b = box.data_ptr<float>();
  const sapiens::PoseCrop crop = sapiens::poseCropFor(sapiens::BoundingBox{b[0], b[1], b[2], b[3]}, size);

  const at::Tensor center = tensorOf(file, k + ".bbox_center");
  const at::Tensor scale = tensorOf(file, k + ".bbox_scale");
  const at::Tensor warp = tensorOf(file, k + ".warp_mat");
  // Bit-exact: these decide the warp and the decoded keypoints.
  QCOMPARE(crop.center[0], center[0][0].item<float>());
  QCOMPARE(crop.center[1], center[0][1].item<float>());
  QCOMPARE(crop.scale[0], scale[0][0].item<float>());
  QCOMPARE(crop.scale[1], scale[0][1].item<float>());
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 3; ++c) {
      const float expected = warp[r][c].item<float>();
      QVERIFY2(std::memcmp(&crop.warp(r, c), &expected, sizeof(float)) == 0,
               qPrintable(QString("warp(%1,%2) = %3, expected %4")
                              .arg(r)
                              .arg(c)
                              .arg(crop.warp(r, c), 0, 'g', 9)
                              .arg(expected, 0, 'g', 9)));
    }
  }

  const cv::Mat warped = sapiens::warpPoseCrop(image, crop, size);
  const int byteError = maxByteDifference(chwOf(warped), tensorOf(file, k + ".pipeline_out"));
  const double inputError = maxAbsDifference(sapiens::normalizeImage(warped), tensorOf(file, k + ".input"));
  qInfo("pose %s: warp sx %.6g, pipeline_out max |d| = %d, input max |d| = %.3g", k.c_str(), crop.warp(0, 0),
        byteError, inputError);
  QCOMPARE(byteError, 0);
  QVERIFY2(inputError <= 1e-6, qPrintable(QString::number(inputError)));
}

void PipelinePreprocessTest::normalisationWritesIntoABatchSlot() {
  cv::Mat image(2, 3, CV_8UC3);
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 3; ++x) image.at<cv::Vec3b>(y, x) = cv::Vec3b(10 * x, 100 + y, 255 - x);  // B, G, R
  }
  at::Tensor batch = at::full({3, 3, 2, 3}, 7.0f);
  sapiens::normalizeImageInto(image, batch, 1);
  // Slots 0 and 2 untouched.
  QCOMPARE(batch[0].eq(7.0f).all().item<bool>(), true);
  QCOMPARE(batch[2].eq(7.0f).all().item<bool>(), true);
  // Red first, float32 (v - mean) / std.
  QCOMPARE(batch[1][0][1][2].item<float>(), (253.0f - 123.675f) / 58.395f);
  QCOMPARE(batch[1][1][1][0].item<float>(), (101.0f - 116.28f) / 57.12f);
  QCOMPARE(batch[1][2][0][1].item<float>(), (10.0f - 103.53f) / 57.375f);
  // A padded (black) pixel becomes -mean / std, not 0.
  const at::Tensor black = sapiens::normalizeImage(cv::Mat(1, 1, CV_8UC3, cv::Scalar::all(0)));
  QCOMPARE(black[0][0][0][0].item<float>(), -123.675f / 58.395f);

  // A region of a larger image (non-continuous rows) is read row by row.
  cv::Mat large(4, 5, CV_8UC3, cv::Scalar(1, 2, 3));
  image.copyTo(large(cv::Rect(1, 1, 3, 2)));
  QCOMPARE(sapiens::normalizeImage(large(cv::Rect(1, 1, 3, 2))).equal(batch.narrow(0, 1, 1)), true);

  QVERIFY_THROWS_EXCEPTION(std::out_of_range, sapiens::normalizeImageInto(image, batch, 3));
  at::Tensor wrongSize = at::zeros({1, 3, 3, 2});
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::normalizeImageInto(image, wrongSize, 0));
  at::Tensor wrongType = at::zeros({1, 3, 2, 3}, at::kDouble);
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::normalizeImageInto(image, wrongType, 0));
}

void PipelinePreprocessTest::letterboxCentresOddPaddingLikeTheOfficialCode() {
  // 100 x 50 into 48 x 64: s = min(0.48, 1.28) = 0.48 -> 48 x 24, pad_h 40 -> top 20, bottom 20.
  cv::Mat wide(50, 100, CV_8UC3, cv::Scalar(200, 150, 100));
  sapiens::Letterbox box = sapiens::letterboxToInput(wide, {48, 64});
  QCOMPARE(box.image.cols, 48);
  QCOMPARE(box.image.rows, 64);
  QCOMPARE(box.contentWidth, 48);
  QCOMPARE(box.contentHeight, 24);
  QVERIFY((box.padding == sapiens::Padding{0, 0, 20, 20}));
  // 30 x 41 into 48 x 64: s = min(1.6, 64 / 41) -> int(46.83) = 46 x int(64.0) = 64: pad_w 2 -> 1 / 1.
  cv::Mat tall(41, 30, CV_8UC3, cv::Scalar(1, 2, 3));
  box = sapiens::letterboxToInput(tall, {48, 64});
  QCOMPARE(box.contentWidth, 46);
  QCOMPARE(box.contentHeight, 64);
  QVERIFY((box.padding == sapiens::Padding{1, 1, 0, 0}));
  // Odd padding: the smaller half goes left/top. 20 x 10 into 9 x 9: s = 0.45 -> 9 x 4, pad_h 5 -> 2 / 3.
  cv::Mat small(10, 20, CV_8UC3, cv::Scalar(9, 9, 9));
  box = sapiens::letterboxToInput(small, {9, 9});
  QVERIFY((box.padding == sapiens::Padding{0, 0, 2, 3}));
  QCOMPARE(box.image.at<cv::Vec3b>(1, 4), cv::Vec3b(0, 0, 0));
  QCOMPARE(box.image.at<cv::Vec3b>(2, 4), cv::Vec3b(9, 9, 9));
  QCOMPARE(box.image.at<cv::Vec3b>(5, 4), cv::Vec3b(9, 9, 9));
  QCOMPARE(box.image.at<cv::Vec3b>(6, 4), cv::Vec3b(0, 0, 0));
}

void PipelinePreprocessTest::poseCropWidensToTheInputAspect() {
  // A tall box 10 x 80 with padding 1.25 -> 12.5 x 100, widened to 75 x 100 for a 3:4 input.
  const sapiens::PoseCrop tall = sapiens::poseCropFor({10, 20, 20, 100}, {768, 1024});
  QCOMPARE(tall.center[0], 15.0f);
  QCOMPARE(tall.center[1], 60.0f);
  QCOMPARE(tall.scale[0], 75.0f);
  QCOMPARE(tall.scale[1], 100.0f);
  // UDP: the box's left edge (cx - w/2) maps to input x 0 and its right edge to W - 1.
  const float leftEdge = 15.0f - 37.5f;
  QVERIFY(std::abs(tall.warp(0, 0) * leftEdge + tall.warp(0, 2)) < 1e-3f);
  QVERIFY(std::abs(tall.warp(0, 0) * (15.0f + 37.5f) + tall.warp(0, 2) - 767.0f) < 1e-3f);
  // A wide box keeps its width and grows in height.
  const sapiens::PoseCrop wide = sapiens::poseCropFor({0, 0, 300, 30}, {48, 64});
  QCOMPARE(wide.scale[0], 375.0f);
  QCOMPARE(wide.scale[1], 500.0f);
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::poseCropFor({5, 5, 5, 10}, {48, 64}));
}

void PipelinePreprocessTest::inputToImageFollowsTheOfficialMapping() {
  const sapiens::PoseCrop crop = sapiens::poseCropFor({0, 0, 59, 79}, {48, 64});
  // Input (0, 0) is the crop's top-left corner, input (W, H) its bottom-right (not W - 1: official).
  const auto topLeft = sapiens::inputToImage({0.0, 0.0}, crop, {48, 64});
  const auto bottomRight = sapiens::inputToImage({48.0, 64.0}, crop, {48, 64});
  QCOMPARE(topLeft[0], static_cast<double>(crop.center[0]) - 0.5 * crop.scale[0]);
  QCOMPARE(topLeft[1], static_cast<double>(crop.center[1]) - 0.5 * crop.scale[1]);
  QVERIFY(std::abs(bottomRight[0] - (crop.center[0] + 0.5 * crop.scale[0])) < 1e-9);
  QVERIFY(std::abs(bottomRight[1] - (crop.center[1] + 0.5 * crop.scale[1])) < 1e-9);
}

void PipelinePreprocessTest::wrongImagesAreRefusedWithContext() {
  const cv::Mat gray(10, 10, CV_8UC1, cv::Scalar(0));
  try {
    sapiens::stretchToInput(gray, {48, 64});
    QFAIL("a grayscale image was accepted");
  } catch (const std::invalid_argument& error) {
    QVERIFY2(QString(error.what()).contains("CV_8UC3"), error.what());
  }
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::letterboxToInput(cv::Mat(), {48, 64}));
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::normalizeImage(gray));
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                           sapiens::letterboxToInput(cv::Mat(4, 4, CV_8UC3, cv::Scalar::all(0)), {0, 64}));
}

// The one spelling the CLI's --input-size and the studio's training field share.
void PipelinePreprocessTest::inputSizeIsReadAsHeightByWidthInWholePatches_data() {
  QTest::addColumn<QString>("text");
  QTest::addColumn<int>("width");  // 0: refused
  QTest::addColumn<int>("height");
  QTest::newRow("official") << "1024x768" << 768 << 1024;
  QTest::newRow("capital X, spaces") << " 512 X 384 " << 384 << 512;
  QTest::newRow("one patch") << "16x16" << 16 << 16;
  QTest::newRow("not a multiple of 16") << "1000x768" << 0 << 0;
  QTest::newRow("zero") << "0x768" << 0 << 0;
  QTest::newRow("negative") << "-16x16" << 0 << 0;
  QTest::newRow("no separator") << "1024" << 0 << 0;
  QTest::newRow("trailing text") << "1024x768px" << 0 << 0;
  QTest::newRow("empty") << "" << 0 << 0;
}

void PipelinePreprocessTest::inputSizeIsReadAsHeightByWidthInWholePatches() {
  QFETCH(QString, text);
  QFETCH(int, width);
  QFETCH(int, height);
  const auto size = sapiens::parseInputSize(text.toStdString());
  if (width == 0) {
    QVERIFY2(!size, qPrintable(text));
    return;
  }
  QVERIFY2(size.has_value(), qPrintable(text));
  QCOMPARE(size->width, width);
  QCOMPARE(size->height, height);
}

QTEST_APPLESS_MAIN(PipelinePreprocessTest)
#include "test_pipeline_preprocess.moc"
