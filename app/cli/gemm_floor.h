#pragma once
// The benchmarks' floor: the rate of one matrix product of the model's dominant shape on the same
// device and dtype, through the kernels the model's linear layers use (linear_product.h), sampled between the
// timed runs of the same process so that both see the same load (their ratio is what the benchmarks report,
// not absolute times on a shared machine).

#include "sapiens/model/flop_count.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <functional>
#include <vector>

namespace sapiens::cli {

/// Waits for the device's queued work (a no-op on the CPU).
void synchronizeDevice(const c10::Device& device);

/// The median wall time of `repeats` runs of `fn`, the device synchronised around each.
double medianSeconds(int repeats, const c10::Device& device, const std::function<void()>& fn);

double median(std::vector<double> values);

class GemmFloor {
 public:
  /// Makes the product's operands and result (random (m, k) and (n, k), an (m, n) result), kept for
  /// every sample, so that samples between the model's runs take no memory of their own (a 50 MB result
  /// taken per sample grew the heap beside the model's freed tensors, by up to 67 MB of a bf16 0.4b run's
  /// peak). `bench` measures the model's memory before the floor exists.
  GemmFloor(GemmShape shape, const c10::Device& device, c10::ScalarType dtype);
  /// Times the product (median of three) and keeps the sample.
  void sample();
  /// GFLOP/s at the median of the samples so far.
  double gflops() const;
  const GemmShape& shape() const { return shape_; }

 private:
  GemmShape shape_;
  c10::Device device_;
  at::Tensor a_, w_, out_;
  std::vector<double> seconds_;
};

}  // namespace sapiens::cli
