#pragma once
// The motion data tables' JSON reading: through readWholeFile (FileReadError names the file), a parse
// error as MotionError naming the file.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace sapiens::motion {

/// The JSON object in `path`; `expected` completes the messages ("a joint angle table").
nlohmann::json parseJsonTable(const std::string& path, std::string_view expected);

}  // namespace sapiens::motion
