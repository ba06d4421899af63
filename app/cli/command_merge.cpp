// sapiens-cli merge: join the manifests of `run --shard K/N` jobs into one results.json.

#include "cli_command.h"

#include "sapiens/run/shard_merge.h"

#include <iostream>

namespace sapiens::cli {
namespace {

CliCommand mergeCommand("merge", [](CLI::App& app) -> CommandAction {
  auto folder = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("merge",
                                 "Join the results.shard-K-of-N.json of a sharded run into results.json (for "
                                 "one video: also its annotated video and keypoints)");
  sub->add_option("output", *folder, "The output folder the shards wrote into")->required();
  return [folder] {
    const MergedManifest merged = mergeShardManifests(*folder);
    if (merged.frames >= 0) {
      std::cout << "merge: " << merged.shards << " shards, " << merged.frames << " frame(s)";
      if (!merged.annotatedVideo.empty()) std::cout << "; video " << merged.annotatedVideo;
      if (!merged.keypointsJson.empty()) std::cout << "; keypoints " << merged.keypointsJson;
      std::cout << "; manifest " << merged.path << "\n";
      return kOk;
    }
    std::cout << "merge: " << merged.shards << " shards, " << merged.inputs << " picture(s), "
              << merged.failed << " failed; manifest " << merged.path << "\n";
    return kOk;
  };
});

}  // namespace
}  // namespace sapiens::cli
