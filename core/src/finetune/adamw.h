#pragma once
// AdamW (decoupled weight decay, bias-corrected moments) on plain tensors, as torch.optim.AdamW computes
// it, with the rate given per step by the schedule.

#include <ATen/core/Tensor.h>

#include <vector>

namespace sapiens::detail {

class AdamW {
 public:
  struct Options {
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weightDecay = 0.1;
  };
  /// `decay[i]`: whether parameters[i] gets weight decay (the official recipe exempts biases and 1-D
  /// tensors). The parameters must require grad.
  AdamW(std::vector<at::Tensor> parameters, std::vector<bool> decay, Options options);

  void zeroGrad();
  /// Scales all gradients so that their joint L2 norm is at most maxNorm; returns the norm before.
  double clipGradientNorm(double maxNorm);
  /// One update. Returns false, changing nothing, when it would make some parameter NaN or infinite.
  bool step(double learningRate);

 private:
  std::vector<at::Tensor> parameters_;
  std::vector<bool> decay_;
  std::vector<at::Tensor> firstMoments_, secondMoments_;
  Options options_;
  long steps_ = 0;
};

}  // namespace sapiens::detail
