#include "adamw.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>

namespace sapiens::detail {

AdamW::AdamW(std::vector<at::Tensor> parameters, std::vector<bool> decay, Options options)
    : parameters_(std::move(parameters)), decay_(std::move(decay)), options_(options) {
  for (const at::Tensor& p : parameters_) {
    firstMoments_.push_back(at::zeros_like(p));
    secondMoments_.push_back(at::zeros_like(p));
  }
}

void AdamW::zeroGrad() {
  for (at::Tensor& p : parameters_) {
    if (p.grad().defined()) p.mutable_grad() = at::Tensor();
  }
}

double AdamW::clipGradientNorm(double maxNorm) {
  at::NoGradGuard noGrad;
  at::Tensor total;
  for (const at::Tensor& p : parameters_) {
    if (!p.grad().defined()) continue;
    const at::Tensor squared = p.grad().to(at::kFloat).pow(2).sum();
    total = total.defined() ? total + squared : squared;
  }
  if (!total.defined()) return 0;
  const double norm = std::sqrt(total.item<double>());
  if (maxNorm > 0 && norm > maxNorm) {
    const double factor = maxNorm / (norm + 1e-6);
    for (at::Tensor& p : parameters_) {
      if (p.grad().defined()) p.grad().mul_(factor);
    }
  }
  return norm;
}

bool AdamW::step(double learningRate) {
  at::NoGradGuard noGrad;
  const long steps = steps_ + 1;
  const double correction1 = 1.0 - std::pow(options_.beta1, static_cast<double>(steps));
  const double correction2 = 1.0 - std::pow(options_.beta2, static_cast<double>(steps));
  // Worked out beside the parameters and committed only when every new value is finite, so that a step
  // that would break the head leaves it, and the moments, as they were.
  const std::size_t count = parameters_.size();
  std::vector<at::Tensor> values(count), first(count), second(count);
  for (std::size_t i = 0; i < count; ++i) {
    const at::Tensor& p = parameters_[i];
    if (!p.grad().defined()) continue;
    const at::Tensor& g = p.grad();
    values[i] = decay_[i] ? p.mul(1.0 - learningRate * options_.weightDecay) : p.clone();
    first[i] = firstMoments_[i].mul(options_.beta1).add_(g, 1.0 - options_.beta1);
    second[i] = secondMoments_[i].mul(options_.beta2).addcmul_(g, g, 1.0 - options_.beta2);
    const at::Tensor denominator = (second[i].sqrt() / std::sqrt(correction2)).add_(options_.eps);
    values[i].addcdiv_(first[i], denominator, -learningRate / correction1);
    if (!at::isfinite(values[i]).all().item<bool>()) return false;
  }
  steps_ = steps;
  for (std::size_t i = 0; i < count; ++i) {
    if (!values[i].defined()) continue;
    parameters_[i].copy_(values[i]);
    firstMoments_[i] = std::move(first[i]);
    secondMoments_[i] = std::move(second[i]);
  }
  return true;
}

}  // namespace sapiens::detail
