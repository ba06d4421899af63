#include "sapiens/motion/mot_file.h"

#include "number_text.h"
#include "sapiens/io/atomic_file.h"
#include "table_checks.h"

#include <filesystem>

namespace sapiens::motion {

void writeMot(const std::string& path, const AngleTable& angles,
              const std::map<std::string, std::string>& openSimNames) {
  requireWritableTable(path, angles);
  requireCompleteValues(path, angles, "MOT");
  std::vector<std::string> labels;
  for (const auto& name : angles.names) {
    const auto renamed = openSimNames.find(name);
    labels.push_back(renamed == openSimNames.end() ? name : renamed->second);
  }
  requireWritableNames(path, labels);

  std::string text = std::filesystem::path(path).filename().string() +
                     "\nversion=1\nnRows=" + std::to_string(angles.rows.size()) +
                     "\nnColumns=" + std::to_string(labels.size() + 1) + "\ninDegrees=yes\nendheader\ntime";
  for (const auto& label : labels) text += '\t' + label;
  text += '\n';
  for (std::size_t r = 0; r < angles.rows.size(); ++r) {
    appendNumber(text, angles.times.seconds[r]);
    for (const double value : angles.rows[r]) {
      text += '\t';
      appendNumber(text, value);
    }
    text += '\n';
  }
  writeFileAtomically(path, text);
}

}  // namespace sapiens::motion
