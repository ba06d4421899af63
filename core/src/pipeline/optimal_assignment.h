#pragma once
// Minimum-cost assignment of rows to columns (the Hungarian method, O(n^2 m)): OpenCV has one only inside
// its shape module, not exported.

#include <vector>

namespace sapiens::detail {

/// `cost` is rows x columns, row-major. Returns, per row, its column or -1; every row gets one when
/// rows <= columns, otherwise `columns` of them do.
std::vector<int> optimalAssignment(const std::vector<double>& cost, int rows, int columns);

}  // namespace sapiens::detail
