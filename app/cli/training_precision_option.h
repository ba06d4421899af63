#pragma once
// The --precision value of the fine-tuning commands: core's parseTrainingPrecision, checked as the
// command line is read.

#include "sapiens/finetune/training_settings.h"

#include <CLI/CLI.hpp>

#include <string>

namespace sapiens::cli {

inline CLI::Validator trainingPrecisionOption() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        return parseTrainingPrecision(value) ? std::string() : "'" + value + "' is not auto, fp32 or bf16";
      },
      "auto|fp32|bf16");
}

}  // namespace sapiens::cli
