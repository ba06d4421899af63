// The CPU attention paths against softmax(q k^T / sqrt(d)) v computed in double precision: the tiled
// AVX-512 kernel (online softmax over key blocks) and the two-GEMM path that other CPUs take.

#include "model/attention.h"
#include "model/attention_amx.h"
#include "model/attention_onednn.h"
#include "model/attention_tiled.h"
#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <torch/version.h>
#include <QtTest>

#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include "model/softmax_rows_bf16.h"
#endif

using namespace sapiens;

namespace {

struct Shape {
  int64_t batch, heads, kvHeads, queries, keys, depth;
};

at::Tensor reference(at::Tensor q, at::Tensor k, at::Tensor v) {
  q = q.to(at::kDouble);
  k = k.to(at::kDouble).repeat_interleave(q.size(1) / k.size(1), 1);
  v = v.to(at::kDouble).repeat_interleave(q.size(1) / v.size(1), 1);
  const at::Tensor scores = at::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(q.size(-1)));
  return at::matmul(at::softmax(scores, -1), v);
}

double maxError(const at::Tensor& got, const at::Tensor& expected) {
  return (got.to(at::kDouble) - expected).abs().max().item<double>();
}

struct Inputs {
  at::Tensor q, k, v;
};

// Scores with a standard deviation of `spread` (q and k of variance `spread`, d terms, / sqrt(d)): 3
// gives peaked rows like a trained model's.
Inputs randomInputs(const Shape& s, double spread, uint64_t seed) {
  at::manual_seed(seed);
  const double scale = std::sqrt(spread);
  return {at::randn({s.batch, s.heads, s.queries, s.depth}) * scale,
          at::randn({s.batch, s.kvHeads, s.keys, s.depth}) * scale,
          at::randn({s.batch, s.kvHeads, s.keys, s.depth})};
}

// The head widths of the model zoo (64: 0.1b-1b, 80: 0.8b, 76: 5b) and others, tails of every kind
// (keys not a multiple of the 64-key panels or the 256-key blocks, queries not a multiple of the row
// tiles or the 96-query blocks), one query or key, and grouped kv heads.
const Shape kShapes[] = {{1, 2, 2, 7, 5, 64},      {2, 3, 3, 77, 300, 64}, {1, 4, 2, 130, 70, 80},
                         {1, 2, 1, 100, 257, 76},  {1, 1, 1, 1, 1, 16},    {1, 2, 2, 97, 513, 128},
                         {1, 16, 8, 200, 200, 64}, {3, 1, 1, 1, 40, 48},   {1, 2, 2, 193, 1, 32}};

// Float32 rounding of 64-300 products and sums, observed 0.7e-5 to 1.9e-5 here for either path; a wrong
// tile, mask or rescaling errs by 1e-2 or more.
constexpr double kTolerance = 5e-5;

}  // namespace

class AttentionKernelsTest : public QObject {
  Q_OBJECT

  using Applies = bool (*)(const at::Tensor&, const at::Tensor&, const at::Tensor&);
  using Kernel = at::Tensor (*)(const at::Tensor&, const at::Tensor&, const at::Tensor&);

  // A bf16 kernel over every shape: float32 sums, float32 softmax and bf16 probabilities keep it within
  // a few bf16 roundings of the exact attention of the same bf16 inputs, and closer to it than
  // LibTorch's own bf16 path, whose scores are rounded to bf16 before the exponential.
  static void checkBf16Kernel(Applies applies, Kernel kernel, const char* whyNotHere) {
    for (const Shape& s : kShapes) {
      const Inputs in = randomInputs(s, 3.0, 4);
      const at::Tensor q = in.q.to(at::kBFloat16), k = in.k.to(at::kBFloat16), v = in.v.to(at::kBFloat16);
      if (!applies(q, k, v)) QSKIP(whyNotHere);
      const at::Tensor got = kernel(q, k, v);
      QVERIFY2(got.defined(), "no optimised kernel offered");
      QCOMPARE(got.sizes().vec(), q.sizes().vec());
      QCOMPARE(got.scalar_type(), at::kBFloat16);
      const at::Tensor expected = reference(q, k, v);
      const double error = maxError(got, expected);
      const int64_t repeats = s.heads / s.kvHeads;
      const double aten = maxError(sapiens::detail::attentionByMatrixProducts(
                                       q, k.repeat_interleave(repeats, 1), v.repeat_interleave(repeats, 1)),
                                   expected);
      // The output's own rounding is 2^-9 of values up to ~3; the probabilities' adds about as much.
      QVERIFY2(error < 2e-2 && error <= aten,
               qPrintable(QString("d %1, %2 queries, %3 keys: max error %4, LibTorch's bf16 path %5")
                              .arg(s.depth)
                              .arg(s.queries)
                              .arg(s.keys)
                              .arg(error)
                              .arg(aten)));
    }
  }

 private Q_SLOTS:
  void tiledMatchesDoublePrecision() {
    if (!cpu::hasAvx512()) QSKIP("this CPU has no AVX-512: the tiled kernel is not used here");
    for (const Shape& s : kShapes) {
      const Inputs in = randomInputs(s, 3.0, 1);
      QVERIFY(sapiens::detail::tiledAttentionApplies(in.q, in.k, in.v));
      const at::Tensor got = sapiens::detail::tiledAttention(in.q, in.k, in.v);
      QCOMPARE(got.sizes().vec(), in.q.sizes().vec());
      const double error = maxError(got, reference(in.q, in.k, in.v));
      QVERIFY2(error < kTolerance, qPrintable(QString("d %1, %2 queries, %3 keys: max error %4")
                                                  .arg(s.depth)
                                                  .arg(s.queries)
                                                  .arg(s.keys)
                                                  .arg(error)));
    }
  }

  // bf16 q, k, v through oneDNN's products.
  void oneDnnBf16MatchesDoublePrecision() {
    checkBf16Kernel(sapiens::detail::oneDnnAttentionApplies, sapiens::detail::oneDnnAttention,
                    "oneDNN's bf16 products are not used here (not built in, no native bf16, or turned off)");
  }

  // The same on AMX tiles, and from the backbone's permuted (B, T, H, d) views.
  void amxBf16MatchesDoublePrecision() {
    checkBf16Kernel(sapiens::detail::amxAttentionApplies, sapiens::detail::amxAttention,
                    "no AMX-BF16 tiles here (or SAPIENS_AMX_ATTENTION=0)");
    at::manual_seed(6);
    const at::Tensor q = at::randn({2, 70, 4, 64}).to(at::kBFloat16).permute({0, 2, 1, 3});
    const at::Tensor k = at::randn({2, 70, 2, 64}).to(at::kBFloat16).permute({0, 2, 1, 3});
    const at::Tensor v = at::randn({2, 70, 2, 64}).to(at::kBFloat16).permute({0, 2, 1, 3});
    QVERIFY(sapiens::detail::amxAttentionApplies(q, k, v));
    const at::Tensor got = sapiens::detail::amxAttention(q, k, v);
    QVERIFY(maxError(got, reference(q, k, v)) < 2e-2);
    QVERIFY(got.transpose(1, 2).is_contiguous());
  }

  // The bf16 kernels' softmax: rows of scores in the hundreds (the exponentials only fit once shifted by
  // the row's maximum), and a NaN in a key, which must reach every output of its head and no other: a
  // model that diverged must not look fine.
  void bf16KernelsShiftByTheMaximumAndLetNanThrough() {
    const std::pair<Applies, Kernel> kernels[] = {
        {sapiens::detail::oneDnnAttentionApplies, sapiens::detail::oneDnnAttention},
        {sapiens::detail::amxAttentionApplies, sapiens::detail::amxAttention}};
    const Shape s{1, 4, 2, 50, 600, 64};
    Inputs in = randomInputs(s, 300.0, 3);
    in.k.select(2, 590).mul_(4.0);
    const at::Tensor q = in.q.to(at::kBFloat16), k = in.k.to(at::kBFloat16), v = in.v.to(at::kBFloat16);
    bool anyRan = false;
    for (const auto& [applies, kernel] : kernels) {
      if (!applies(q, k, v)) continue;
      anyRan = true;
      const double error = maxError(kernel(q, k, v), reference(q, k, v));
      QVERIFY2(error < 2e-2, qPrintable(QString("max error %1").arg(error)));
      at::Tensor poisoned = k.clone();
      poisoned[0][1][123][7] = std::nan("");
      const at::Tensor out = kernel(q, poisoned, v);
      // kv head 1 feeds query heads 2 and 3.
      QVERIFY(at::isnan(out.narrow(1, 2, 2)).all().item<bool>());
      QVERIFY(at::isfinite(out.narrow(1, 0, 2)).all().item<bool>());
    }
    if (!anyRan) QSKIP("no bf16 attention kernel is used on this CPU");
  }

  // The bf16 kernels' row pass over whole vector pairs, a whole vector and a partial one: the float32 sum
  // of the exponentials within 5e-6 of double precision (a shorter fit than the kernel's degree 4 fails
  // this), every probability within a bf16 rounding of its exponential from 1 down to e^-40, a score of
  // -inf weighing 0 and a NaN score coming out NaN.
  void bf16SoftmaxRowMatchesTheExponential() {
#if defined(__x86_64__)
    if (!cpu::hasAvx512Bf16()) QSKIP("this CPU has no AVX512_BF16: the bf16 kernels are not used here");
    const int64_t n = 93;  // two pairs of whole vectors, one whole vector, 13 in a partial one
    const float scale = 0.7f, maximum = 3.0f;
    std::vector<float> scores(n);
    for (int64_t i = 0; i < n; ++i) scores[i] = maximum - 57.0f * static_cast<float>(i) / (n - 1);
    scores[40] = -std::numeric_limits<float>::infinity();
    std::vector<std::uint16_t> p(n);
    const float sum = sapiens::detail::expShiftedRowToBf16(scores.data(), p.data(), n, scale, maximum);
    const auto probability = [&](int64_t i) {
      return static_cast<double>(c10::BFloat16(p[i], c10::BFloat16::from_bits()));
    };
    double exact = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (i == 40) continue;
      const double e = std::exp(static_cast<double>(scale) * (scores[i] - maximum));
      exact += e;
      QVERIFY2(std::abs(probability(i) - e) <= e / 256, qPrintable(QString("score %1").arg(scores[i])));
    }
    QCOMPARE(probability(40), 0.0);
    QVERIFY2(std::abs(sum - exact) <= 5e-6 * exact, qPrintable(QString("%1 vs %2").arg(sum).arg(exact)));
    for (const int64_t at : {20, 70, 90}) {  // in a pair of vectors, the lone whole one, the partial one
      std::vector<float> poisoned = scores;
      poisoned[at] = std::nanf("");
      QVERIFY(std::isnan(sapiens::detail::expShiftedRowToBf16(poisoned.data(), p.data(), n, scale, maximum)));
      QVERIFY(std::isnan(probability(at)));
    }
#else
    QSKIP("the bf16 kernels are x86-64 only");
#endif
  }

  void matrixProductPathMatchesDoublePrecision() {
    for (const Shape& s : kShapes) {
      const Inputs in = randomInputs(s, 3.0, 2);
      const int64_t repeats = s.heads / s.kvHeads;
      const at::Tensor got = sapiens::detail::attentionByMatrixProducts(
          in.q, in.k.repeat_interleave(repeats, 1), in.v.repeat_interleave(repeats, 1));
      const double error = maxError(got, reference(in.q, in.k, in.v));
      QVERIFY2(error < kTolerance, qPrintable(QString("d %1: max error %2").arg(s.depth).arg(error)));
    }
  }

  void scoresFarBeyondExpRangeStayExact() {
    // Scores of several hundred: exp overflows unless every block is shifted by its running maximum,
    // and the first blocks' sums must be rescaled when a later block holds the maximum. At this size a
    // score's float32 rounding alone (ulp 3e-5 to 1e-4) moves the weights by that much, in either path.
    const Shape s{1, 2, 2, 50, 600, 64};
    Inputs in = randomInputs(s, 300.0, 3);
    in.k.select(2, 590).mul_(4.0);  // the maximum of many rows in the last block
    const at::Tensor expected = reference(in.q, in.k, in.v);
    const at::Tensor got = sapiens::detail::attention(in.q, in.k, in.v);
    const at::Tensor byProducts = sapiens::detail::attentionByMatrixProducts(in.q, in.k, in.v);
    QVERIFY(at::isfinite(got).all().item<bool>());
    const double error = maxError(got, expected), productsError = maxError(byProducts, expected);
    QVERIFY2(error < 1e-3 && productsError < 1e-3,
             qPrintable(QString("%1 (matrix products: %2)").arg(error).arg(productsError)));
  }

  void readsTheBackbonesPermutedViewsAndReturnsTokenMajorMemory() {
    // The backbone passes (B, T, H, d) projections permuted to (B, H, T, d) and transposes the result
    // back to (B, T, H * d): that must cost no copy.
    at::manual_seed(4);
    const at::Tensor q = at::randn({2, 70, 4, 64}).permute({0, 2, 1, 3});
    const at::Tensor k = at::randn({2, 70, 2, 64}).permute({0, 2, 1, 3});
    const at::Tensor v = at::randn({2, 70, 2, 64}).permute({0, 2, 1, 3});
    const at::Tensor got = sapiens::detail::attention(q, k, v);
    QVERIFY(maxError(got, reference(q, k, v)) < kTolerance);
#if TORCH_VERSION_MAJOR < 2  // LibTorch 2.x runs scaled_dot_product_attention instead
    if (cpu::hasAvx512()) QVERIFY(got.transpose(1, 2).is_contiguous());
#endif
  }

  void otherTensorsTakeTheMatrixProductPath() {
    const Shape s{1, 2, 2, 33, 45, 64};
    const Inputs in = randomInputs(s, 3.0, 5);
    const at::Tensor q64 = in.q.to(at::kDouble), k64 = in.k.to(at::kDouble), v64 = in.v.to(at::kDouble);
    QVERIFY(!sapiens::detail::tiledAttentionApplies(q64, k64, v64));
    QVERIFY(maxError(sapiens::detail::attention(q64, k64, v64), reference(in.q, in.k, in.v)) < 1e-10);
    const at::Tensor strided = in.q.transpose(2, 3).contiguous().transpose(2, 3);  // unit stride along T
    QVERIFY(!sapiens::detail::tiledAttentionApplies(strided, in.k, in.v));
    QVERIFY(maxError(sapiens::detail::attention(strided, in.k, in.v), reference(in.q, in.k, in.v)) <
            kTolerance);
    const at::Tensor wantsGradient = in.q.clone().requires_grad_(true);
    QVERIFY(!sapiens::detail::tiledAttentionApplies(wantsGradient, in.k, in.v));
    {
      at::NoGradGuard noGradient;
      QCOMPARE(sapiens::detail::tiledAttentionApplies(wantsGradient, in.k, in.v), cpu::hasAvx512());
    }
  }
};

QTEST_APPLESS_MAIN(AttentionKernelsTest)
#include "test_attention_kernels.moc"
