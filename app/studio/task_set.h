#pragma once
// A set of task models to run on one picture, as a bit mask (bit = int(Task)), in the order they must
// run: segmentation first, because pose takes its person boxes from it.

#include "sapiens/model/task.h"

#include <QString>

namespace sapiens::studio {

using TaskSet = unsigned int;

constexpr TaskSet taskBit(Task task) {
  return 1u << static_cast<unsigned>(task);
}

constexpr bool contains(TaskSet set, Task task) {
  return (set & taskBit(task)) != 0;
}

inline QString taskLabel(Task task) {
  const std::string_view name = taskName(task);
  return QString::fromLatin1(name.data(), int(name.size()));
}

}  // namespace sapiens::studio
