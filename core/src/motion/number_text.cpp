#include "number_text.h"

#include <charconv>

namespace sapiens::motion {

void appendNumber(std::string& text, double value) {
  char digits[32];
  const auto result = std::to_chars(digits, digits + sizeof digits, value);
  text.append(digits, result.ptr);
}

}  // namespace sapiens::motion
