#include "onednn_matmul.h"

#include "forward_part_timer.h"
#include "kernel_switch.h"
#include "sapiens/common/cpu_features.h"
#include "sapiens/common/log.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#ifdef SAPIENS_HAVE_ONEDNN
#include "onednn_engine.h"
#endif

#include <fmt/format.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sapiens::detail {

at::Tensor linearWithEpilogue(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                              const MatmulEpilogue& epilogue) {
  at::Tensor y = at::linear(x, weight, bias);
  if (epilogue.silu) y = at::silu_(y);
  if (epilogue.scale.defined()) y = y.mul_(epilogue.scale);
  if (epilogue.multiply.defined()) y = y.mul_(epilogue.multiply);
  if (epilogue.add.defined()) y = y.add_(epilogue.add);
  return y;
}

at::Tensor linearBestPath(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                          const MatmulEpilogue& epilogue) {
  const ForwardPartTimer timer(ForwardPart::Products);
  if (oneDnnLinearApplies(x, weight)) {
    at::Tensor y = oneDnnLinear(x, weight, bias, epilogue);
    if (y.defined()) return y;
  }
  return linearWithEpilogue(x, weight, bias, epilogue);
}

#ifdef SAPIENS_HAVE_ONEDNN

namespace {

// Whether bf16 runs here is the dtype's business (`--dtype`, auto and SAPIENS_CPU_BF16); this only says
// how a bf16 model runs on this CPU.
bool switchedOn() {
  static const bool on = [] {
    const bool off = switchedOffByEnvironment("SAPIENS_ONEDNN_MATMUL");
    const bool used = !off && cpu::hasAvx512Bf16();
    logger().debug("bf16 linear layers on the CPU: {}", used ? "oneDNN matmul" : "ATen");
    return used;
  }();
  return on;
}

dnnl::memory::data_type dataType(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kBFloat16:
      return dnnl::memory::data_type::bf16;
    case at::kFloat:
      return dnnl::memory::data_type::f32;
    default:
      throw std::invalid_argument("oneDnnLinear: unsupported dtype");
  }
}

dnnl::memory::desc rowMajor(int64_t rows, int64_t columns, const at::Tensor& t) {
  return dnnl::memory::desc({rows, columns}, dataType(t), dnnl::memory::format_tag::ab);
}

std::string cacheKey(int64_t m, int64_t k, int64_t n, const at::Tensor& bias, const MatmulEpilogue& e) {
  const auto type = [](const at::Tensor& t) { return t.defined() ? static_cast<int>(t.scalar_type()) : -1; };
  return fmt::format("linear {}x{}x{} b{} silu{} s{} m{} a{} t{}", m, k, n, type(bias), e.silu, type(e.scale),
                     type(e.multiply), type(e.add), at::get_num_threads());
}

dnnl::matmul::primitive_desc describeLinear(int64_t m, int64_t k, int64_t n, const at::Tensor& x,
                                            const at::Tensor& bias, const MatmulEpilogue& e) {
  using dnnl::memory;
  const memory::desc src = rowMajor(m, k, x);
  const memory::desc weights({k, n}, memory::data_type::bf16, memory::format_tag::ba);  // (N, K) rows
  const memory::desc dst = rowMajor(m, n, x);
  dnnl::post_ops ops;
  if (e.silu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_swish, 1.0f, 0.0f);
  if (e.scale.defined()) ops.append_binary(dnnl::algorithm::binary_mul, rowMajor(1, n, e.scale));
  if (e.multiply.defined()) ops.append_binary(dnnl::algorithm::binary_mul, rowMajor(m, n, e.multiply));
  if (e.add.defined()) ops.append_binary(dnnl::algorithm::binary_add, rowMajor(m, n, e.add));
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const dnnl::matmul::desc desc = bias.defined() ? dnnl::matmul::desc(src, weights, rowMajor(1, n, bias), dst)
                                                 : dnnl::matmul::desc(src, weights, dst);
  return dnnl::matmul::primitive_desc(desc, attr, oneDnnEngine());
}

// Rows [first, first + rows) of a row-major tensor of `columns` columns.
dnnl::memory wrap(const at::Tensor& t, int64_t rows, int64_t columns, int64_t first = 0) {
  auto* data = static_cast<char*>(t.data_ptr()) + first * columns * static_cast<int64_t>(t.element_size());
  return dnnl::memory(rowMajor(rows, columns, t), oneDnnEngine(), data);
}

}  // namespace

const dnnl::engine& oneDnnEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

bool onlyReferenceKernel(const char* impl, const std::string& key) {
  if (std::string(impl).rfind("ref", 0) != 0) return false;
  logger().debug("oneDNN has only its reference kernel for {}: ATen instead", key);
  return true;
}

void logOneDnnCannotMake(const std::string& key, const dnnl::error& error) {
  logger().debug("oneDNN cannot make {} ({}): ATen instead", key, error.what());
}

const std::optional<dnnl::matmul>& cachedMatmul(
    const std::string& key, const std::function<dnnl::matmul::primitive_desc()>& describe) {
  return cachedOneDnn<dnnl::matmul>(key, [&]() -> std::optional<dnnl::matmul> {
    const dnnl::matmul::primitive_desc pd = describe();
    if (onlyReferenceKernel(pd.impl_info_str(), key)) return std::nullopt;
    return dnnl::matmul(pd);
  });
}

bool oneDnnBf16InUse() {
  return switchedOn();
}

bool oneDnnLinearApplies(const at::Tensor& x, const at::Tensor& weight) {
  if (!x.is_cpu() || x.scalar_type() != at::kBFloat16 || weight.scalar_type() != at::kBFloat16 ||
      !weight.is_cpu() || weight.dim() != 2 || x.dim() < 1 || x.size(-1) != weight.size(1) || x.numel() == 0)
    return false;
  if (c10::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad())) return false;
  return switchedOn();
}

namespace {

// oneDnnLinear's operands, laid out as the primitives' descriptors say.
struct LinearOperands {
  at::Tensor src, weights, bias, y;
  MatmulEpilogue e;
  int64_t k = 0, n = 0;
};

// The product of `rows` rows; empty where oneDNN has no optimised kernel.
const std::optional<dnnl::matmul>& primitiveForRows(const LinearOperands& o, int64_t rows) {
  return cachedMatmul(cacheKey(rows, o.k, o.n, o.bias, o.e),
                      [&] { return describeLinear(rows, o.k, o.n, o.src, o.bias, o.e); });
}

// Rows [first, first + rows) of y = epilogue(x W^T + b) by `primitive`, made for that many rows.
void executeRows(const dnnl::matmul& primitive, const LinearOperands& o, int64_t first, int64_t rows) {
  const MatmulEpilogue& e = o.e;
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, wrap(o.src, rows, o.k, first)},
      {DNNL_ARG_WEIGHTS,
       dnnl::memory({{o.k, o.n}, dnnl::memory::data_type::bf16, dnnl::memory::format_tag::ba}, oneDnnEngine(),
                    o.weights.data_ptr())},
      {DNNL_ARG_DST, wrap(o.y, rows, o.n, first)}};
  if (o.bias.defined()) args.emplace(DNNL_ARG_BIAS, wrap(o.bias, 1, o.n));
  int index = e.silu ? 1 : 0;
  if (e.scale.defined())
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(index++) | DNNL_ARG_SRC_1, wrap(e.scale, 1, o.n));
  if (e.multiply.defined())
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(index++) | DNNL_ARG_SRC_1,
                 wrap(e.multiply, rows, o.n, first));
  if (e.add.defined())
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(index++) | DNNL_ARG_SRC_1, wrap(e.add, rows, o.n, first));
  dnnl::stream stream(oneDnnEngine());
  primitive.execute(stream, args);
  stream.wait();
}

// oneDNN 2.6's AMX matmul runs a row count that is not a multiple of its tiles' rows slowly throughout,
// not only in the last rows: the 0.4b's 3081 tokens cost 22.9 us a token in the SwiGLU's three products
// where 3072 cost 21.4 (and 9 on their own 0.9 ms in all), the attention's projections alike. So the rows
// go as a multiple of kRowMultiple and the rest on their own.
constexpr int64_t kRowMultiple = 64;

}  // namespace

at::Tensor oneDnnLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                        const MatmulEpilogue& epilogue, const at::Tensor& out) {
  const ForwardPartTimer timer(ForwardPart::Products);
  LinearOperands o;
  o.k = weight.size(1), o.n = weight.size(0);
  const int64_t m = x.numel() / o.k;
  o.src = x.contiguous();
  o.weights = weight.contiguous();
  // Operands the post-ops read must be laid out as their descriptors say.
  o.e = epilogue;
  if (o.e.scale.defined()) o.e.scale = o.e.scale.contiguous();
  if (o.e.multiply.defined()) o.e.multiply = o.e.multiply.contiguous();
  if (o.e.add.defined()) o.e.add = o.e.add.contiguous();
  o.bias = bias.defined() ? bias.contiguous() : bias;
  for (const at::Tensor* t : {&o.e.multiply, &o.e.add})
    if (t->defined() && t->numel() != m * o.n) return {};

  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = o.n;
  TORCH_CHECK(!out.defined() || (out.sizes() == at::IntArrayRef(shape) && out.is_contiguous() &&
                                 out.scalar_type() == x.scalar_type()),
              "oneDnnLinear: the output buffer is ", out.sizes(), ", not a contiguous ",
              at::IntArrayRef(shape));
  o.y = out.defined() ? out : at::empty(shape, x.options().memory_format(at::MemoryFormat::Contiguous));
  const int64_t body = m > kRowMultiple ? m - m % kRowMultiple : m;
  const std::optional<dnnl::matmul>& bodyProduct = primitiveForRows(o, body);
  if (!bodyProduct) return {};
  if (body == m) {
    executeRows(*bodyProduct, o, 0, m);
    return o.y;
  }
  const std::optional<dnnl::matmul>& tailProduct = primitiveForRows(o, m - body);
  if (!tailProduct) return {};  // before either runs: the caller computes every row in ATen
  executeRows(*bodyProduct, o, 0, body);
  executeRows(*tailProduct, o, body, m - body);
  return o.y;
}

#else

bool oneDnnBf16InUse() {
  return false;
}

bool oneDnnLinearApplies(const at::Tensor&, const at::Tensor&) {
  return false;
}

at::Tensor oneDnnLinear(const at::Tensor&, const at::Tensor&, const at::Tensor&, const MatmulEpilogue&,
                        const at::Tensor&) {
  return {};
}

#endif

}  // namespace sapiens::detail
