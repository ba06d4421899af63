#include "optimal_assignment.h"

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
    do {
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
      column = next;
    } while (holder[column] != 0);
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

}  // namespace

std::vector<int> optimalAssignment(const std::vector<double>& cost, int rows, int columns) {
  if (rows == 0 || columns == 0) return std::vector<int>(rows, -1);
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
