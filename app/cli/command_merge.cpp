// sapiens-cli merge: join the manifests of `run --shard K/N` jobs into one results.json.

#include "cli_command.h"

#include "sapiens/pipeline/shard_merge.h"

#include <iostream>

namespace sapiens::cli {
namespace {

CliCommand mergeCommand("merge", [](CLI::App& app) -> CommandAction {
  auto folder = std::make_shared<std::string>();
  auto* sub =
      app.add_subcommand("merge", "Join the results.shard-K-of-N.json of a sharded run into results.json");
  sub->add_option("output", *folder, "The output folder the shards wrote into")->required();
  return [folder] {
    const MergedManifest merged = mergeShardManifests(*folder);
    std::cout << "merge: " << merged.shards << " shards, " << merged.inputs << " picture(s), "
              << merged.failed << " failed; manifest " << merged.path << "\n";
    return kOk;
  };
});

}  // namespace
}  // namespace sapiens::cli
