// The fused bf16 RMSNorm and RMSNorm + rotary embedding against the op-by-op composite the model ran
// before (layers.h rmsNorm, rope.h applyRope): the same roundings, so the same bf16 values but for the
// rare element where the float32 sum of squares, added in another order, tips a rounding (one bf16 step).

#include "model/layers.h"
#include "model/norm_rope_bf16.h"
#include "model/rope.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <QtTest>

using namespace sapiens::detail;

namespace {

// The composite rmsNorm (upcast, normalise, round, times the weight), whatever path layers.h takes now.
at::Tensor compositeNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor upcast = x.to(at::kFloat);
  const at::Tensor inverseRms = at::rsqrt(upcast.pow(2).mean({-1}, true).add(eps));
  return upcast.mul(inverseRms).to(x.scalar_type()).mul(weight);
}

// Elements that differ, and whether each is within one bf16 step of the expected value.
QString compare(const at::Tensor& got, const at::Tensor& expected) {
  const at::Tensor g = got.to(at::kFloat), e = expected.to(at::kFloat);
  const int64_t differing = (g != e).sum().item<int64_t>();
  const double share = static_cast<double>(differing) / static_cast<double>(e.numel());
  const double worst = ((g - e).abs() / e.abs().clamp_min(1e-30)).max().item<double>();
  if (share > 1e-3 || worst > 1.0 / 64)
    return QString("%1 of %2 elements differ, worst relative %3").arg(differing).arg(e.numel()).arg(worst);
  return {};
}

RopeTables tables(int64_t gridH, int64_t gridW, int64_t d) {
  const at::Tensor periods =
      at::pow(100.0, at::arange(d / 4, at::kDouble).mul(2.0 / (d / 2))).to(at::kBFloat16);
  return ropeTables(periods, gridH, gridW, sapiens::RopePrecision::BFloat16);
}

}  // namespace

class TestNormRopeBf16 : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void normMatchesTheComposite() {
    c10::InferenceMode inference;
    for (int64_t c : {1024, 1536, 77, 16, 5}) {
      at::manual_seed(c);
      const at::Tensor x = at::randn({2, 37, c}).mul(3).to(at::kBFloat16);
      const at::Tensor w = at::rand({c}).add(0.5).to(at::kBFloat16);
      if (!fusedNormApplies(x, w)) QSKIP("no AVX512_BF16 here: the composite runs");
      const QString failure = compare(rmsNormBf16(x, w, 1e-6), compositeNorm(x, w, 1e-6));
      QVERIFY2(failure.isEmpty(), qPrintable(QString("C %1: ").arg(c) + failure));
    }
  }

  void normThenRopeMatchesTheComposite() {
    c10::InferenceMode inference;
    // Head widths of the zoo (64, 80, 76) and others; 5 prefix tokens (cls + 4 storage) before the grid.
    for (int64_t d : {64, 80, 76, 32, 128}) {
      at::manual_seed(d);
      const int64_t gridH = 6, gridW = 5, prefix = 5, heads = 3, tokens = prefix + gridH * gridW;
      const at::Tensor x = at::randn({2, tokens, heads, d}).mul(2).to(at::kBFloat16);
      const at::Tensor w = at::rand({d}).add(0.5).to(at::kBFloat16);
      if (!fusedNormApplies(x, w)) QSKIP("no AVX512_BF16 here: the composite runs");
      const RopeTables rope = tables(gridH, gridW, d);
      const at::Tensor expected = applyRope(compositeNorm(x, w, 1e-6).permute({0, 2, 1, 3}), rope);
      const at::Tensor got = rmsNormRopeBf16(x, w, 1e-6, &rope);
      QVERIFY(got.is_contiguous());  // head-major
      const QString failure = compare(got, expected);
      QVERIFY2(failure.isEmpty(), qPrintable(QString("d %1: ").arg(d) + failure));
    }
  }

  void layersTakeTheFusedPassForBf16() {
    c10::InferenceMode inference;
    at::manual_seed(3);
    const at::Tensor x = at::randn({1, 50, 256}).to(at::kBFloat16);
    const at::Tensor w = at::rand({256}).add(0.5).to(at::kBFloat16);
    if (!fusedNormApplies(x, w)) QSKIP("no AVX512_BF16 here: the composite runs");
    QVERIFY(at::equal(rmsNorm(x, w), rmsNormBf16(x, w, kRmsNormEps)));
    // float32 keeps the composite, bit for bit (the golden parity tests' path).
    const at::Tensor x32 = x.to(at::kFloat), w32 = w.to(at::kFloat);
    QVERIFY(at::equal(rmsNorm(x32, w32), compositeNorm(x32, w32, kRmsNormEps)));
  }
};

QTEST_APPLESS_MAIN(TestNormRopeBf16)
#include "test_norm_rope_bf16.moc"
