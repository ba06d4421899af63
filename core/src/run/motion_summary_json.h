#pragma once
// A motion export's summary as results.json writes it (sapiens-cli motion, run VIDEO --motion).

#include "sapiens/run/motion_export.h"

#include <nlohmann/json.hpp>

namespace sapiens::detail {

/// {"input", "options", "tracks": [...], "tracks_with_files"}: results.json's "motion".
nlohmann::json motionSummaryJson(const std::string& input, const MotionExportOptions& options,
                                 const MotionExportSummary& summary);

}  // namespace sapiens::detail
