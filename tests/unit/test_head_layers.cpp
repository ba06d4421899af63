// The heads' transposed convolution: on the CPU it runs through oneDNN's deconvolution, or (without
// oneDNN) a 4x4 one as a sub-pixel 3x3 convolution (see deconv2d), which must compute what ConvTranspose2d
// does, values and gradients, in float32 and in bf16 mixed precision, or training and inference would
// quietly differ from the official heads.

#include "model/cpu_autocast.h"
#include "model/layers.h"
#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <QtTest>

namespace {

double largestDifference(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

}  // namespace

class TestHeadLayers : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void deconvolutionMatchesConvTranspose2d_data() {
    QTest::addColumn<int>("kernel");
    QTest::addColumn<int>("in");
    QTest::addColumn<int>("out");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("width");
    QTest::newRow("4x4, 8 -> 5 channels, odd size") << 4 << 8 << 5 << 7 << 5;
    QTest::newRow("4x4, 32 -> 16 channels") << 4 << 32 << 16 << 16 << 12;
    QTest::newRow("4x4, one pixel") << 4 << 3 << 2 << 1 << 1;
    QTest::newRow("3x3 (native)") << 3 << 6 << 4 << 5 << 6;
    QTest::newRow("2x2 (native)") << 2 << 6 << 4 << 5 << 6;
  }

  void deconvolutionMatchesConvTranspose2d() {
    QFETCH(int, kernel);
    QFETCH(int, in);
    QFETCH(int, out);
    QFETCH(int, height);
    QFETCH(int, width);
    at::manual_seed(11);
    const at::Tensor x = at::randn({2, in, height, width}).requires_grad_(true);
    const at::Tensor weight = (at::randn({in, out, kernel, kernel}) * 0.2).requires_grad_(true);
    const std::int64_t padding = kernel == 2 ? 0 : 1, outputPadding = kernel == 3 ? 1 : 0;
    const at::Tensor reference =
        at::conv_transpose2d(x, weight, {}, {2, 2}, {padding, padding}, {outputPadding, outputPadding});
    const at::Tensor ours = sapiens::detail::deconv2d(x, weight);
    QCOMPARE(ours.sizes().vec(), reference.sizes().vec());
    QVERIFY2(at::allclose(ours, reference, 1e-5, 1e-5),
             qPrintable(QString::number(largestDifference(ours, reference))));

    const at::Tensor upstream = at::randn_like(reference);
    const auto expected = torch::autograd::grad({reference}, {x, weight}, {upstream});
    const auto got = torch::autograd::grad({ours}, {x, weight}, {upstream});
    for (std::size_t i = 0; i < 2; ++i) {
      const double scale = expected[i].abs().max().item<double>();
      QVERIFY2(largestDifference(got[i], expected[i]) <= 1e-5 * std::max(1.0, scale),
               qPrintable(QString("gradient %1: difference %2 of %3")
                              .arg(i)
                              .arg(largestDifference(got[i], expected[i]))
                              .arg(scale)));
    }
  }

  void deconvolutionInBf16ComputesInFloat() {
    at::manual_seed(5);
    const at::Tensor x = at::randn({1, 16, 6, 4});
    const at::Tensor weight = at::randn({16, 8, 4, 4}) * 0.2;
    const at::Tensor reference = at::conv_transpose2d(x, weight, {}, {2, 2}, {1, 1});
    const at::Tensor ours = sapiens::detail::deconv2d(x.to(at::kBFloat16), weight.to(at::kBFloat16));
    QCOMPARE(ours.scalar_type(), at::kBFloat16);
    // The operands' and the result's bf16 rounding only (sums in float32): within 3 % of the largest output.
    QVERIFY(largestDifference(ours.to(at::kFloat), reference) <= 0.03 * reference.abs().max().item<double>());
  }

  // Fine-tuning's bf16 steps (autocast): float32 weights, float32 gradients for them, sums in float32.
  void deconvolutionUnderBf16AutocastKeepsFloatGradients() {
    at::manual_seed(7);
    const at::Tensor x = at::randn({2, 32, 12, 10}).requires_grad_(true);
    const at::Tensor weight = (at::randn({32, 16, 4, 4}) * 0.1).requires_grad_(true);
    const at::Tensor reference = at::conv_transpose2d(x, weight, {}, {2, 2}, {1, 1});
    const at::Tensor upstream = at::randn_like(reference);
    const auto expected = torch::autograd::grad({reference}, {x, weight}, {upstream});

    sapiens::detail::setCpuAutocast(true, at::kBFloat16);
    const at::Tensor ours = sapiens::detail::deconv2d(x, weight);
    sapiens::detail::setCpuAutocast(false, at::kBFloat16);
    if (sapiens::cpu::hasAvx512Bf16()) QCOMPARE(ours.scalar_type(), at::kBFloat16);
    QVERIFY(largestDifference(ours.to(at::kFloat), reference) <= 0.03 * reference.abs().max().item<double>());
    const auto got = torch::autograd::grad({ours}, {x, weight}, {upstream.to(ours.scalar_type())});
    QCOMPARE(got[0].scalar_type(), at::kFloat);
    QCOMPARE(got[1].scalar_type(), at::kFloat);
    for (std::size_t i = 0; i < 2; ++i) {
      const double scale = expected[i].abs().max().item<double>();
      QVERIFY2(largestDifference(got[i], expected[i]) <= 0.03 * scale,
               qPrintable(QString("gradient %1: difference %2 of %3")
                              .arg(i)
                              .arg(largestDifference(got[i], expected[i]))
                              .arg(scale)));
    }
  }

  // A layer reading frozen features: only the weights' gradient is asked for.
  void deconvolutionWithFrozenInputGivesWeightGradientOnly() {
    at::manual_seed(9);
    const at::Tensor x = at::randn({1, 8, 6, 6});
    const at::Tensor weight = (at::randn({8, 4, 4, 4}) * 0.2).requires_grad_(true);
    const at::Tensor upstream = at::randn({1, 4, 12, 12});
    const auto expected =
        torch::autograd::grad({at::conv_transpose2d(x, weight, {}, {2, 2}, {1, 1})}, {weight}, {upstream});
    const auto got = torch::autograd::grad({sapiens::detail::deconv2d(x, weight)}, {weight}, {upstream});
    QVERIFY(at::allclose(got[0], expected[0], 1e-5, 1e-4));
  }
};

QTEST_APPLESS_MAIN(TestHeadLayers)
#include "test_head_layers.moc"
