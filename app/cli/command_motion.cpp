// sapiens-cli motion: joint angles and motion files per tracked person from a video run's STEM.pose.json.

#include "cli_command.h"
#include "motion_options.h"

#include "sapiens/export/keypoints_json.h"

#include <filesystem>
#include <iostream>

namespace sapiens::cli {
namespace {

namespace fs = std::filesystem;

// "clip.pose.json" -> "clip"; the shard suffix of a shard's file stays.
std::string stemOf(const std::string& poseJson) {
  std::string name = fs::path(poseJson).filename().string();
  const std::string suffix = ".pose.json";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return name.substr(0, name.size() - suffix.size());
  return fs::path(name).stem().string();
}

CliCommand motionCommand("motion", [](CLI::App& app) -> CommandAction {
  auto input = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto m = std::make_shared<MotionArgs>();
  auto* sub = app.add_subcommand(
      "motion",
      "Joint angles, TRC, MOT, BVH, CSV and a plot per tracked person from a video run's STEM.pose.json "
      "(run with --task pose,pointmap)");
  sub->add_option("pose_json", *input, "The STEM.pose.json of a video run")->required();
  sub->add_option("-o,--output", *output, "Output folder (its results.json gets a \"motion\" member)")
      ->required();
  addMotionOptions(sub, m);
  return [input, output, m] {
    const MotionExportOptions options = motionOptions(*m);
    const KeypointPredictions predictions = readKeypointsJson(*input);
    fs::create_directories(*output);
    const std::string stem = (fs::path(*output) / stemOf(*input)).string();
    const MotionExportSummary summary = exportMotion(predictions, stem, options);
    const std::string manifest = (fs::path(*output) / "results.json").string();
    recordMotionInManifest(manifest, *input, options, summary);
    printMotionSummary(summary);
    std::cout << "motion: " << summary.tracksWithFiles() << " of " << summary.tracks.size()
              << " track(s) written; manifest " << manifest << "\n";
    return summary.tracksWithFiles() == summary.tracks.size() ? kOk : kPartial;
  };
});

}  // namespace
}  // namespace sapiens::cli
