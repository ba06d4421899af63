#include "rope.h"

#include <ATen/ATen.h>

namespace sapiens::detail {

RopeTables ropeTables(const at::Tensor& periods, std::int64_t gridH, std::int64_t gridW,
                      RopePrecision precision) {
  const at::ScalarType dtype = precision == RopePrecision::BFloat16 ? at::kBFloat16 : at::kFloat;
  const at::Tensor p = periods.to(dtype);
  const auto options = p.options();
  // Each line is one op on `dtype` tensors, in the official order; bf16 rounding after every op is the point.
  const at::Tensor coordsH = at::arange(0.5, static_cast<double>(gridH), 1.0, options).div(gridH);
  const at::Tensor coordsW = at::arange(0.5, static_cast<double>(gridW), 1.0, options).div(gridW);
  const std::vector<at::Tensor> grid = at::meshgrid({coordsH, coordsW}, "ij");
  at::Tensor coords = at::stack({grid[0], grid[1]}, -1).flatten(0, 1);  // (HW, 2): [y, x]
  coords = coords.mul(2.0).sub(1.0);
  const double twoPi = 6.283185307179586;  // Python's 2 * math.pi, applied as one scalar
  at::Tensor angles = coords.unsqueeze(-1).mul(twoPi).div(p.view({1, 1, -1}));  // (HW, 2, d/4)
  angles = at::tile(angles.flatten(1, 2), {2});                                 // (HW, d)
  return {at::sin(angles), at::cos(angles)};
}

at::Tensor applyRope(const at::Tensor& x, const RopeTables& tables) {
  const at::ScalarType original = x.scalar_type();
  const at::Tensor xr = x.to(tables.sin.scalar_type());
  const int64_t tokens = xr.size(-2);
  const int64_t rotatedTokens = tables.sin.size(0);
  const int64_t prefix = tokens - rotatedTokens;
  const at::Tensor head = xr.narrow(-2, 0, prefix);
  const at::Tensor body = xr.narrow(-2, prefix, rotatedTokens);
  const std::vector<at::Tensor> halves = body.chunk(2, -1);
  const at::Tensor rotatedHalf = at::cat({halves[1].neg(), halves[0]}, -1);
  const at::Tensor rotated = body.mul(tables.cos).add(rotatedHalf.mul(tables.sin));
  return at::cat({head, rotated}, -2).to(original);
}

}  // namespace sapiens::detail
