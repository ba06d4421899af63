#pragma once
// The --input-size value shared by the commands that run task models: HxW, multiples of 16.

#include "sapiens/pipeline/preprocess.h"

#include <CLI/CLI.hpp>

#include <sstream>
#include <string>

namespace sapiens::cli {

/// "1024x768" -> {width 768, height 1024}. Throws CLI::ValidationError (exit code 2) otherwise.
inline InputSize parseInputSize(const std::string& text) {
  int h = 0, w = 0;
  char x = 0;
  std::istringstream in(text);
  if (!(in >> h >> x >> w) || (x != 'x' && x != 'X') || h <= 0 || w <= 0 || h % 16 || w % 16)
    throw CLI::ValidationError("--input-size",
                               "'" + text + "' is not HxW with multiples of 16, e.g. 1024x768");
  return {w, h};
}

}  // namespace sapiens::cli
