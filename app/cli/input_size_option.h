#pragma once
// The --input-size value shared by the commands that run task models: core's parseInputSize, with the
// command line's error.

#include "sapiens/pipeline/input_size.h"

#include <CLI/CLI.hpp>

#include <string>

namespace sapiens::cli {

/// "1024x768" -> {width 768, height 1024}. Throws CLI::ValidationError (exit code 2) otherwise.
inline InputSize inputSizeOption(const std::string& text) {
  if (const auto size = parseInputSize(text)) return *size;
  throw CLI::ValidationError("--input-size", "'" + text + "' is not " + std::string(kInputSizeSyntax));
}

}  // namespace sapiens::cli
