#pragma once
// Numbers in the motion files: the shortest text that reads back as the same double.

#include <string>

namespace sapiens::motion {

/// Appends `value` in the shortest form that round-trips (std::to_chars); "nan"/"inf" never reach a file
/// because writers check for them first.
void appendNumber(std::string& text, double value);

}  // namespace sapiens::motion
