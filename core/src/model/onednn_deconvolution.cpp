#include "onednn_deconvolution.h"

#include "cpu_autocast.h"
#include "deconvolution_weight_gradient.h"
#include "kernel_switch.h"

#include "sapiens/common/cpu_features.h"
#include "sapiens/common/log.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/custom_function.h>

#ifdef SAPIENS_HAVE_ONEDNN
#include "onednn_engine.h"
#endif

#include <fmt/format.h>

#include <optional>
#include <string>
#include <unordered_map>

namespace sapiens::detail {

#ifdef SAPIENS_HAVE_ONEDNN

namespace {

using dnnl::memory;

bool switchedOn() {
  static const bool on = [] {
    const bool off = switchedOffByEnvironment("SAPIENS_ONEDNN_DECONV");
    logger().debug("transposed convolutions on the CPU: {}", off ? "ATen" : "oneDNN deconvolution");
    return !off;
  }();
  return on;
}

enum class Pass { Inference, Training, BackwardData, BackwardWeights };

/// One transposed convolution's shapes in oneDNN's terms: weights (out, in, k, k), stride 2.
struct DeconvGeometry {
  memory::dims src, weights, dst, paddingLeft, paddingRight;
  memory::data_type type;

  std::string key(Pass pass) const {
    return fmt::format("deconv {} {} {} {} {} {} {} {}", static_cast<int>(pass), fmt::join(src, "x"),
                       fmt::join(weights, "x"), fmt::join(dst, "x"), paddingLeft[0], paddingRight[0],
                       static_cast<int>(type), at::get_num_threads());
  }
};

DeconvGeometry geometryOf(const at::Tensor& x, const at::Tensor& weight, int64_t padding,
                          int64_t outputPadding, bool inBf16) {
  const int64_t k = weight.size(2);
  const int64_t height = (x.size(2) - 1) * 2 - 2 * padding + k + outputPadding;
  const int64_t width = (x.size(3) - 1) * 2 - 2 * padding + k + outputPadding;
  return {{x.size(0), x.size(1), x.size(2), x.size(3)},
          {weight.size(1), weight.size(0), k, k},
          {x.size(0), weight.size(1), height, width},
          {padding, padding},
          {padding - outputPadding, padding - outputPadding},
          inBf16 ? memory::data_type::bf16 : memory::data_type::f32};
}

/// A pass's primitive and the layouts it wants: `input` is the source (or its gradient), `output` the
/// destination (or its gradient), `weights` the weights (or their float32 gradient).
struct DeconvKernel {
  dnnl::primitive primitive;
  memory::desc input, weights, output;
};

memory::desc anyLayout(const memory::dims& dims, memory::data_type type) {
  return memory::desc(dims, type, memory::format_tag::any);
}

// Activations stay channels-last (NHWC), in and out: oneDNN's bf16 kernels pick that layout themselves,
// its float32 ones are about as fast in it as in their blocked layout, and the heads' other layers read
// it (instance_norm_silu_channels_last.h, 1x1 convolutions as matrix products), so no full-size tensor is
// reordered between layers.
memory::desc channelsLast(const memory::dims& dims, memory::data_type type) {
  return memory::desc(dims, type, memory::format_tag::nhwc);
}

dnnl::deconvolution_forward::primitive_desc describeForward(const DeconvGeometry& g, dnnl::prop_kind prop) {
  const dnnl::deconvolution_forward::desc desc(
      prop, dnnl::algorithm::deconvolution_direct, channelsLast(g.src, g.type), anyLayout(g.weights, g.type),
      channelsLast(g.dst, g.type), {2, 2}, g.paddingLeft, g.paddingRight);
  return {desc, oneDnnEngine()};
}

template <typename PrimitiveDesc>
std::optional<PrimitiveDesc> unlessReference(PrimitiveDesc pd, const std::string& key) {
  if (onlyReferenceKernel(pd.impl_info_str(), key)) return std::nullopt;
  return pd;
}

std::optional<DeconvKernel> makeKernel(Pass pass, const DeconvGeometry& g, const std::string& key) {
  using namespace dnnl;
  const algorithm direct = algorithm::deconvolution_direct;
  if (pass == Pass::Inference || pass == Pass::Training) {
    const auto pd = unlessReference(describeForward(g, pass == Pass::Inference ? prop_kind::forward_inference
                                                                               : prop_kind::forward_training),
                                    key);
    if (!pd) return std::nullopt;
    return DeconvKernel{deconvolution_forward(*pd), pd->src_desc(), pd->weights_desc(), pd->dst_desc()};
  }
  const auto hint = describeForward(g, prop_kind::forward_training);
  if (pass == Pass::BackwardData) {
    const deconvolution_backward_data::desc desc(direct, channelsLast(g.src, g.type),
                                                 anyLayout(g.weights, g.type), channelsLast(g.dst, g.type),
                                                 {2, 2}, g.paddingLeft, g.paddingRight);
    const auto pd =
        unlessReference(deconvolution_backward_data::primitive_desc(desc, oneDnnEngine(), hint), key);
    if (!pd) return std::nullopt;
    return DeconvKernel{deconvolution_backward_data(*pd), pd->diff_src_desc(), pd->weights_desc(),
                        pd->diff_dst_desc()};
  }
  // The weights' gradient summed and kept in float32 (mixed precision's master weights).
  const deconvolution_backward_weights::desc desc(
      direct, channelsLast(g.src, g.type), anyLayout(g.weights, memory::data_type::f32),
      channelsLast(g.dst, g.type), {2, 2}, g.paddingLeft, g.paddingRight);
  const auto pd =
      unlessReference(deconvolution_backward_weights::primitive_desc(desc, oneDnnEngine(), hint), key);
  if (!pd) return std::nullopt;
  return DeconvKernel{deconvolution_backward_weights(*pd), pd->src_desc(), pd->diff_weights_desc(),
                      pd->diff_dst_desc()};
}

const std::optional<DeconvKernel>& cachedKernel(Pass pass, const DeconvGeometry& g) {
  const std::string key = g.key(pass);
  return cachedOneDnn<DeconvKernel>(key, [&] { return makeKernel(pass, g, key); });
}

bool kernelsExist(const DeconvGeometry& g, bool training) {
  if (!training) return cachedKernel(Pass::Inference, g).has_value();
  return cachedKernel(Pass::Training, g) && cachedKernel(Pass::BackwardData, g) &&
         cachedKernel(Pass::BackwardWeights, g);
}

/// A contiguous tensor as oneDNN memory in `layout`: its own data where its plain layout `plain` is that
/// layout, else a copy reordered into a buffer from LibTorch's allocator (`keep` holds it).
memory inLayout(const at::Tensor& t, const memory::desc& plain, const memory::desc& layout,
                dnnl::stream& stream, at::Tensor& keep) {
  memory source(plain, oneDnnEngine(), t.data_ptr());
  if (plain == layout) return source;
  keep = at::empty({static_cast<int64_t>(layout.get_size())}, t.options().dtype(at::kByte));
  memory reordered(layout, oneDnnEngine(), keep.data_ptr());
  dnnl::reorder(source, reordered).execute(stream, source, reordered);
  return reordered;
}

/// Runs `kernel` with the two operands given and writes its result into `result` (plain layout `plain`),
/// reordering from the kernel's layout where they differ.
void execute(const DeconvKernel& kernel, std::unordered_map<int, memory> operands, int resultArgument,
             const memory::desc& resultLayout, const at::Tensor& result, const memory::desc& plain,
             dnnl::stream& stream) {
  memory target(plain, oneDnnEngine(), result.data_ptr());
  at::Tensor buffer;
  if (!(plain == resultLayout)) {
    buffer = at::empty({static_cast<int64_t>(resultLayout.get_size())}, result.options().dtype(at::kByte));
    target = memory(resultLayout, oneDnnEngine(), buffer.data_ptr());
  }
  operands.emplace(resultArgument, target);
  kernel.primitive.execute(stream, operands);
  if (buffer.defined()) {
    memory plainResult(plain, oneDnnEngine(), result.data_ptr());
    dnnl::reorder(target, plainResult).execute(stream, target, plainResult);
  }
  stream.wait();
}

memory::desc plainWeights(const DeconvGeometry& g, memory::data_type type) {
  return memory::desc(g.weights, type, memory::format_tag::iohw);  // LibTorch's (in, out, k, k)
}

at::Tensor runForward(Pass pass, const DeconvGeometry& g, const at::Tensor& x, const at::Tensor& weight) {
  const DeconvKernel& kernel = *cachedKernel(pass, g);
  dnnl::stream stream(oneDnnEngine());
  at::Tensor keepX, keepWeight;
  const memory src = inLayout(x, channelsLast(g.src, g.type), kernel.input, stream, keepX);
  const memory weights = inLayout(weight, plainWeights(g, g.type), kernel.weights, stream, keepWeight);
  at::Tensor y = at::empty(g.dst, x.options().memory_format(at::MemoryFormat::ChannelsLast));
  execute(kernel, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}}, DNNL_ARG_DST, kernel.output, y,
          channelsLast(g.dst, g.type), stream);
  return y;
}

at::Tensor runBackwardData(const DeconvGeometry& g, const at::Tensor& gradOutput, const at::Tensor& weight) {
  const DeconvKernel& kernel = *cachedKernel(Pass::BackwardData, g);
  dnnl::stream stream(oneDnnEngine());
  at::Tensor keepGrad, keepWeight;
  const memory diffDst = inLayout(gradOutput, channelsLast(g.dst, g.type), kernel.output, stream, keepGrad);
  const memory weights = inLayout(weight, plainWeights(g, g.type), kernel.weights, stream, keepWeight);
  at::Tensor gradInput = at::empty(g.src, gradOutput.options().memory_format(at::MemoryFormat::ChannelsLast));
  execute(kernel, {{DNNL_ARG_DIFF_DST, diffDst}, {DNNL_ARG_WEIGHTS, weights}}, DNNL_ARG_DIFF_SRC,
          kernel.input, gradInput, channelsLast(g.src, g.type), stream);
  return gradInput;
}

at::Tensor runBackwardWeights(const DeconvGeometry& g, const at::Tensor& x, const at::Tensor& gradOutput) {
  const DeconvKernel& kernel = *cachedKernel(Pass::BackwardWeights, g);
  dnnl::stream stream(oneDnnEngine());
  at::Tensor keepX, keepGrad;
  const memory src = inLayout(x, channelsLast(g.src, g.type), kernel.input, stream, keepX);
  const memory diffDst = inLayout(gradOutput, channelsLast(g.dst, g.type), kernel.output, stream, keepGrad);
  at::Tensor gradWeight =
      at::empty({g.weights[1], g.weights[0], g.weights[2], g.weights[3]}, x.options().dtype(at::kFloat));
  execute(kernel, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diffDst}}, DNNL_ARG_DIFF_WEIGHTS, kernel.weights,
          gradWeight, plainWeights(g, memory::data_type::f32), stream);
  return gradWeight;
}

c10::ScalarType computeType(bool inBf16) {
  return inBf16 ? at::kBFloat16 : at::kFloat;
}

// An activation as the kernels take it: in the computation's dtype, channels-last.
at::Tensor inKernelLayout(const at::Tensor& t, bool inBf16) {
  return t.to(computeType(inBf16)).contiguous(at::MemoryFormat::ChannelsLast);
}

struct DeconvolutionFunction : torch::autograd::Function<DeconvolutionFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& x,
                            const at::Tensor& weight, int64_t padding, int64_t outputPadding, bool inBf16) {
    const at::Tensor input = inKernelLayout(x, inBf16);
    const at::Tensor kernelWeight = weight.to(computeType(inBf16)).contiguous();
    context->save_for_backward({input, kernelWeight});
    context->saved_data["padding"] = padding;
    context->saved_data["outputPadding"] = outputPadding;
    context->saved_data["inBf16"] = inBf16;
    context->saved_data["xType"] = static_cast<int64_t>(x.scalar_type());
    context->saved_data["weightType"] = static_cast<int64_t>(weight.scalar_type());
    const at::Tensor y = runForward(
        Pass::Training, geometryOf(input, kernelWeight, padding, outputPadding, inBf16), input, kernelWeight);
    return inBf16 ? y : y.to(x.scalar_type());
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const at::Tensor& input = saved[0];
    const at::Tensor& kernelWeight = saved[1];
    const bool inBf16 = context->saved_data["inBf16"].toBool();
    const DeconvGeometry g = geometryOf(input, kernelWeight, context->saved_data["padding"].toInt(),
                                        context->saved_data["outputPadding"].toInt(), inBf16);
    const at::Tensor gradOutput = inKernelLayout(gradients[0], inBf16);
    at::Tensor gradX, gradWeight;
    if (context->needs_input_grad(0))
      gradX = runBackwardData(g, gradOutput, kernelWeight)
                  .to(static_cast<c10::ScalarType>(context->saved_data["xType"].toInt()));
    if (context->needs_input_grad(1)) {
      const bool byOwnKernel = deconvolutionWeightGradientApplies(
          input, gradOutput, kernelWeight.size(2), context->saved_data["padding"].toInt(),
          context->saved_data["outputPadding"].toInt());
      gradWeight = (byOwnKernel ? deconvolutionWeightGradient(input, gradOutput)
                               : runBackwardWeights(g, input, gradOutput))
                       .to(static_cast<c10::ScalarType>(context->saved_data["weightType"].toInt()));
    }
    return {gradX, gradWeight, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool oneDnnDeconvolutionApplies(const at::Tensor& x, const at::Tensor& weight) {
  const auto supported = [](const at::Tensor& t) {
    return t.is_cpu() && (t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16);
  };
  return supported(x) && supported(weight) && x.dim() == 4 && weight.dim() == 4 &&
         x.size(1) == weight.size(0) && weight.size(2) == weight.size(3) && x.numel() > 0 && switchedOn();
}

at::Tensor oneDnnDeconvolution(const at::Tensor& x, const at::Tensor& weight, int64_t padding,
                               int64_t outputPadding) {
  if (outputPadding > padding) return {};
  const bool reducedInput = x.scalar_type() == at::kBFloat16 || weight.scalar_type() == at::kBFloat16;
  const bool inBf16 = (reducedInput || cpuAutocastToBf16()) && cpu::hasAvx512Bf16();
  const bool training = c10::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad());
  const DeconvGeometry g = geometryOf(x, weight, padding, outputPadding, inBf16);
  if (!kernelsExist(g, training)) return {};
  if (training) return DeconvolutionFunction::apply(x, weight, padding, outputPadding, inBf16);
  const at::Tensor y =
      runForward(Pass::Inference, g, inKernelLayout(x, inBf16), weight.to(computeType(inBf16)).contiguous());
  return inBf16 ? y : y.to(x.scalar_type());
}

#else

bool oneDnnDeconvolutionApplies(const at::Tensor&, const at::Tensor&) {
  return false;
}

at::Tensor oneDnnDeconvolution(const at::Tensor&, const at::Tensor&, int64_t, int64_t) {
  return {};
}

#endif

}  // namespace sapiens::detail
