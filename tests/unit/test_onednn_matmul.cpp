// The bf16 linear layers through oneDNN's matmul with their epilogue fused (bias, SiLU, layer scale, the
// SwiGLU gate, the residual): against the same arithmetic in float32 on the same bf16 operands, and at
// least as close to it as LibTorch's own bf16 path with an op (and a rounding) per step.

#include "model/onednn_matmul.h"
#include "sapiens/model/linear_product.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <QtTest>

using namespace sapiens::detail;

namespace {

struct Case {
  at::Tensor x, weight, bias;
  MatmulEpilogue epilogue;
};

// x (2, tokens, K), weight (N, K), bias (N) and the epilogue's operands, all bf16.
Case makeCase(int64_t tokens, int64_t k, int64_t n, bool bias, bool silu, bool scale, bool multiply,
              bool add) {
  at::manual_seed(tokens * 131 + k * 7 + n);
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  Case c;
  c.x = at::randn({2, tokens, k}).to(bf16);
  c.weight = at::randn({n, k}).mul(1.0 / std::sqrt(static_cast<double>(k))).to(bf16);
  if (bias) c.bias = at::randn({n}).to(bf16);
  c.epilogue.silu = silu;
  if (scale) c.epilogue.scale = at::rand({n}).add(0.5).to(bf16);
  if (multiply) c.epilogue.multiply = at::randn({2, tokens, n}).to(bf16);
  if (add) c.epilogue.add = at::randn({2, tokens, n}).mul(4).to(bf16);
  return c;
}

// The epilogue in float32 on the bf16 operands: what an exact bf16-in, float-sum kernel rounds once.
at::Tensor reference(const Case& c) {
  const auto f = [](const at::Tensor& t) { return t.defined() ? t.to(at::kFloat) : t; };
  at::Tensor y = at::linear(f(c.x), f(c.weight), f(c.bias));
  if (c.epilogue.silu) y = at::silu(y);
  if (c.epilogue.scale.defined()) y = y * f(c.epilogue.scale);
  if (c.epilogue.multiply.defined()) y = y * f(c.epilogue.multiply);
  if (c.epilogue.add.defined()) y = y + f(c.epilogue.add);
  return y;
}

double maxError(const at::Tensor& got, const at::Tensor& want) {
  return (got.to(at::kFloat) - want).abs().max().item<double>();
}

}  // namespace

class TestOneDnnMatmul : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void fusedEpiloguesMatchFloatArithmetic_data() {
    QTest::addColumn<int>("tokens");
    QTest::addColumn<bool>("bias");
    QTest::addColumn<bool>("silu");
    QTest::addColumn<bool>("scale");
    QTest::addColumn<bool>("multiply");
    QTest::addColumn<bool>("add");
    QTest::newRow("plain") << 77 << false << false << false << false << false;
    QTest::newRow("bias") << 77 << true << false << false << false << false;
    QTest::newRow("gate: bias + silu") << 130 << true << true << false << false << false;
    QTest::newRow("value: bias * gate") << 130 << true << false << false << true << false;
    QTest::newRow("projection: scale + residual") << 61 << true << false << true << false << true;
    QTest::newRow("w3: residual") << 1 << false << false << false << false << true;
  }

  void fusedEpiloguesMatchFloatArithmetic() {
    c10::InferenceMode inference;
    QFETCH(int, tokens);
    QFETCH(bool, bias);
    QFETCH(bool, silu);
    QFETCH(bool, scale);
    QFETCH(bool, multiply);
    QFETCH(bool, add);
    const Case c = makeCase(tokens, 320, 192, bias, silu, scale, multiply, add);
    if (!oneDnnLinearApplies(c.x, c.weight))
      QSKIP("oneDNN's bf16 matmul is not used here (not built in, no native bf16, or turned off)");
    const at::Tensor got = oneDnnLinear(c.x, c.weight, c.bias, c.epilogue);
    QVERIFY2(got.defined(), "oneDNN offered no optimised kernel for these shapes");
    QCOMPARE(got.scalar_type(), at::kBFloat16);
    QCOMPARE(got.sizes().vec(), (std::vector<int64_t>{2, tokens, 192}));
    const at::Tensor want = reference(c);
    const double fused = maxError(got, want);
    const double aten = maxError(linearWithEpilogue(c.x, c.weight, c.bias, c.epilogue), want);
    // One bf16 rounding of the result: half a unit in the 8th bit of the largest value.
    const double oneRounding = want.abs().max().item<double>() / 256.0;
    QVERIFY2(fused <= oneRounding,
             qPrintable(QString("fused error %1, one rounding %2").arg(fused).arg(oneRounding)));
    // ATen rounds after each step of the epilogue; with none, both round once.
    const bool epilogue = silu || scale || multiply || add;
    QVERIFY2(!epilogue || fused <= aten * 1.01 + 1e-6,
             qPrintable(QString("fused error %1 above ATen's bf16 path's %2").arg(fused).arg(aten)));
  }

  void tokensThatAreNotContiguousAreTaken() {
    c10::InferenceMode inference;
    const Case c = makeCase(40, 128, 64, true, false, false, false, false);
    if (!oneDnnLinearApplies(c.x, c.weight)) QSKIP("oneDNN's bf16 matmul is not used here");
    const at::Tensor strided = c.x.transpose(0, 1);  // (tokens, 2, K), not contiguous
    const at::Tensor got = oneDnnLinear(strided, c.weight, c.bias);
    QVERIFY(got.defined());
    QVERIFY(maxError(got, reference(c).transpose(0, 1)) <= reference(c).abs().max().item<double>() / 256.0);
  }

  // The SwiGLU's row passes write each part of the output into a buffer the caller holds: the result is
  // that buffer, with what the allocating call gives, and a buffer of another shape is refused by name.
  void writesIntoTheCallersBuffer() {
    c10::InferenceMode inference;
    const Case c = makeCase(50, 128, 64, true, false, false, false, true);
    if (!oneDnnLinearApplies(c.x, c.weight)) QSKIP("oneDNN's bf16 matmul is not used here");
    const at::Tensor buffer = at::full({2, 50, 64}, 7.0, c.x.options());
    const at::Tensor got = oneDnnLinear(c.x, c.weight, c.bias, c.epilogue, buffer);
    QCOMPARE(got.data_ptr(), buffer.data_ptr());
    QVERIFY(at::equal(buffer, oneDnnLinear(c.x, c.weight, c.bias, c.epilogue)));
    bool refused = false;
    try {
      oneDnnLinear(c.x, c.weight, c.bias, c.epilogue, at::empty({2, 50, 65}, c.x.options()));
    } catch (const c10::Error& e) {
      refused = QString(e.what()).contains("output buffer");
    }
    QVERIFY(refused);
  }

  // The benchmarks' floor times the product into a tensor it keeps: float32 (ATen) and bf16 alike, the
  // result is in that tensor and equal to the allocating product's.
  void floorProductWritesIntoItsTensor() {
    c10::InferenceMode inference;
    for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
      const Case c = makeCase(33, 96, 40, false, false, false, false, false);
      const at::Tensor x = c.x.to(dtype).reshape({-1, 96}), w = c.weight.to(dtype);
      const at::Tensor out = at::zeros({x.size(0), 40}, x.options());
      const void* data = out.data_ptr();
      sapiens::linearProductInto(x, w, out);
      QCOMPARE(out.data_ptr(), data);
      QVERIFY(at::equal(out, sapiens::linearProduct(x, w)));
    }
  }
};

QTEST_APPLESS_MAIN(TestOneDnnMatmul)
#include "test_onednn_matmul.moc"
