#pragma once
// The message of the MediaError an action throws, or an empty string when it throws none.

#include "sapiens/media/media_error.h"

#include <QString>

#include <functional>

namespace sapiens::test {

inline QString mediaError(const std::function<void()>& action) {
  try {
    action();
  } catch (const MediaError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace sapiens::test
