#include "optimal_assignment.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sapiens::detail {

namespace {

// Rows <= columns: potentials u (rows), v (columns), and for each column the row it holds.
std::vector<int> assignRowsToColumns(const std::vector<double>& cost, int rows, int columns,
                                     bool transposed) {
  const auto at = [&](int r, int c) {
    return transposed ? cost[static_cast<std::size_t>(c) * rows + r]
                      : cost[static_cast<std::size_t>(r) * columns + c];
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> u(rows + 1, 0), v(columns + 1, 0);
  std::vector<int> holder(columns + 1, 0), way(columns + 1, 0);  // 1-based rows, 0: none
  for (int r = 1; r <= rows; ++r) {
    holder[0] = r;
    int column = 0;
    std::vector<double> least(columns + 1, inf);
    std::vector<bool> used(columns + 1, false);
    // Each pass marks one more column used, so a row takes at most `columns` + 1 passes; with finite costs a
    // free column is always found; the bound keeps even a broken cost matrix from looping forever.
    bool found = false;
    for (int pass = 0; pass <= columns && !found; ++pass) {
      used[column] = true;
      const int row = holder[column];
      double delta = inf;
      int next = 0;
      for (int c = 1; c <= columns; ++c) {
        if (used[c]) continue;
        const double reduced = at(row - 1, c - 1) - u[row] - v[c];
        if (reduced < least[c]) least[c] = reduced, way[c] = column;
        if (least[c] < delta) delta = least[c], next = c;
      }
      for (int c = 0; c <= columns; ++c) {
        if (used[c]) {
          u[holder[c]] += delta;
          v[c] -= delta;
        } else {
          least[c] -= delta;
        }
      }
      if (next == 0) break;  // no reachable column: this row stays unassigned
      column = next;
      found = holder[column] == 0;
    }
    if (!found) continue;
    do {
      const int previous = way[column];
      holder[column] = holder[previous];
      column = previous;
    } while (column != 0);
  }
  std::vector<int> rowColumn(rows, -1);
  for (int c = 1; c <= columns; ++c) {
    if (holder[c] != 0) rowColumn[holder[c] - 1] = c - 1;
  }
  return rowColumn;
}

// Non-finite costs (a NaN keypoint, an overflowed box) as the worst finite choice, one above the largest
// finite cost: such a pair is taken only when nothing else is left, and the caller's similarity test
// rejects it then. Finite costs are kept as they are, but their range is bounded so that the potentials'
// sums cannot overflow.
std::vector<double> finiteCosts(const std::vector<double>& cost) {
  constexpr double kLimit = 1e150;
  double worst = 0;
  for (double c : cost)
    if (std::isfinite(c)) worst = std::max(worst, std::min(std::abs(c), kLimit));
  std::vector<double> out(cost.size());
  std::transform(cost.begin(), cost.end(), out.begin(),
                 [&](double c) { return std::isfinite(c) ? std::clamp(c, -kLimit, kLimit) : worst + 1; });
  return out;
}

}  // namespace

std::vector<int> optimalAssignment(const std::vector<double>& rawCost, int rows, int columns) {
  if (rows == 0 || columns == 0) return std::vector<int>(rows, -1);
  const std::vector<double> cost = finiteCosts(rawCost);
  if (rows <= columns) return assignRowsToColumns(cost, rows, columns, false);
  // More rows than columns: assign the columns to rows, then invert.
  const std::vector<int> columnRow = assignRowsToColumns(cost, columns, rows, true);
  std::vector<int> rowColumn(rows, -1);
  for (int c = 0; c < columns; ++c) {
    if (columnRow[c] >= 0) rowColumn[columnRow[c]] = c;
  }
  return rowColumn;
}

}  // namespace sapiens::detail
