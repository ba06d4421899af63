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

void AdamW::step(double learningRate) {
  at::NoGradGuard noGrad;
  ++steps_;
  const double correction1 = 1.0 - std::pow(options_.beta1, static_cast<double>(steps_));
  const double correction2 = 1.0 - std::pow(options_.beta2, static_cast<double>(steps_));
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    at::Tensor& p = parameters_[i];
    if (!p.grad().defined()) continue;
    const at::Tensor& g = p.grad();
    if (decay_[i]) p.mul_(1.0 - learningRate * options_.weightDecay);
    firstMoments_[i].mul_(options_.beta1).add_(g, 1.0 - options_.beta1);
    secondMoments_[i].mul_(options_.beta2).addcmul_(g, g, 1.0 - options_.beta2);
    const at::Tensor denominator = (secondMoments_[i].sqrt() / std::sqrt(correction2)).add_(options_.eps);
    p.addcdiv_(firstMoments_[i], denominator, -learningRate / correction1);
  }
}

}  // namespace sapiens::detail
