#include "sapiens/pipeline/input_size.h"

#include <charconv>
#include <string_view>

namespace sapiens {

namespace {

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::optional<int> patchMultiple(std::string_view text) {
  text = trimmed(text);
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 16 || value % 16 != 0)
    return std::nullopt;
  return value;
}

}  // namespace

std::optional<InputSize> parseInputSize(std::string_view text) {
  const auto x = text.find_first_of("xX");
  if (x == std::string_view::npos) return std::nullopt;
  const auto height = patchMultiple(text.substr(0, x));
  const auto width = patchMultiple(text.substr(x + 1));
  if (!height || !width) return std::nullopt;
  return InputSize{*width, *height};
}

}  // namespace sapiens
