// sapiens-cli models list|download|verify: the catalogue of official checkpoints, what is present under
// the checkpoint root, resumable downloads into the official layout, and header-level validation.

#include "cli_command.h"
#include "stop_signals.h"

#include "sapiens/common/paths.h"
#include "sapiens/model/checkpoint_locator.h"
#include "sapiens/model/model_zoo.h"
#include "sapiens/net/checkpoint_download.h"
#include "sapiens/net/sha256.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace sapiens::cli {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> interrupted{false};

struct ModelsArgs {
  std::string root;
  std::vector<std::string> ids;
  std::string endpoint;
  bool json = false;
  bool force = false;
  bool hash = false;
};

std::string rootOf(const ModelsArgs& a) {
  return a.root.empty() ? paths::checkpointRoot() : a.root;
}

std::string humanBytes(std::uint64_t bytes) {
  if (bytes >= 1000ull * 1000 * 1000) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1000ull * 1000) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.1f} kB", bytes / 1e3);
}

std::vector<const zoo::Entry*> selected(const std::vector<std::string>& ids) {
  std::vector<const zoo::Entry*> entries;
  for (const std::string& id : ids) {
    const zoo::Entry* e = zoo::find(id);
    if (!e) {
      std::string known;
      for (const auto& c : zoo::catalogue()) known += (known.empty() ? "" : ", ") + c.id;
      throw CLI::ValidationError("models", "unknown checkpoint '" + id + "' (known: " + known + ")");
    }
    entries.push_back(e);
  }
  return entries;
}

int listModels(const ModelsArgs& a) {
  const std::string root = rootOf(a);
  nlohmann::json out = {
      {"root", root}, {"download_supported", downloadSupported()}, {"checkpoints", nlohmann::json::array()}};
  if (!a.json) {
    std::cout << fmt::format("checkpoint root {}\n", root);
    std::cout << fmt::format("{:<15} {:<8} {:>11}  {:<45} {}\n", "id", "status", "data (F32)", "file",
                             "Hugging Face repository");
  }
  for (const zoo::Entry& e : zoo::catalogue()) {
    const zoo::FileCheck check = zoo::checkInstalled(e, root);
    const std::uint64_t partial = zoo::partialBytes(e, root);
    std::string status(zoo::stateName(check.state));
    if (check.state == zoo::FileState::Missing && partial > 0) status = "partial";
    out["checkpoints"].push_back({{"id", e.id},
                                  {"task", std::string(taskName(e.task))},
                                  {"size", e.size},
                                  {"repository", e.repository},
                                  {"file", e.relativePath},
                                  {"url", zoo::downloadUrl(e, a.endpoint)},
                                  {"tensors", e.tensors},
                                  {"elements", e.elements},
                                  {"data_bytes_if_f32", e.dataBytesIfF32},
                                  {"status", status},
                                  {"bytes", check.bytes},
                                  {"partial_bytes", partial},
                                  {"problem", check.problem}});
    if (!a.json) {
      std::cout << fmt::format("{:<15} {:<8} {:>11}  {:<45} {}\n", e.id, status, humanBytes(e.dataBytesIfF32),
                               e.relativePath, e.repository);
      if (!check.problem.empty()) std::cout << "    " << check.problem << "\n";
      if (partial > 0 && check.state == zoo::FileState::Missing)
        std::cout << fmt::format("    {} downloaded; `sapiens-cli models download {}` resumes\n",
                                 humanBytes(partial), e.id);
    }
  }
  if (a.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "No albedo checkpoint has been published; albedo runs on the untrained demo weights.\n";
    if (!downloadSupported()) std::cout << "This build cannot download (built without libcurl).\n";
  }
  return kOk;
}

std::string fileHash(const std::string& path) {
  const std::optional<std::string> hash = sha256OfFile(path, {}, [] { return interrupted.load(); });
  if (!hash) throw std::runtime_error("verify: interrupted while hashing " + path);
  return *hash;
}

int verifyModels(const ModelsArgs& a) {
  onStopSignals([](int) { interrupted = true; });
  const std::string root = rootOf(a);
  std::vector<const zoo::Entry*> entries = selected(a.ids);
  const bool all = entries.empty();
  if (all)
    for (const auto& e : zoo::catalogue()) entries.push_back(&e);
  int valid = 0, invalid = 0, missing = 0;
  for (const zoo::Entry* e : entries) {
    const zoo::FileCheck check = zoo::checkInstalled(*e, root);
    switch (check.state) {
      case zoo::FileState::Valid:
        ++valid;
        std::cout << fmt::format("ok       {} ({})\n", check.path, humanBytes(check.bytes));
        break;
      case zoo::FileState::Invalid:
        ++invalid;
        std::cout << fmt::format("INVALID  {}\n", check.path);
        std::cerr << "verify: " << check.problem << "\n";
        break;
      case zoo::FileState::Missing:
        ++missing;
        if (!all) std::cout << fmt::format("missing  {}\n", check.path);
        break;
    }
    if (a.hash && check.state != zoo::FileState::Missing)
      std::cout << fmt::format("         sha256 {}\n", fileHash(check.path));
  }
  std::cout << fmt::format("verify: {} valid, {} invalid{} under {}\n", valid, invalid,
                           all ? "" : fmt::format(", {} missing", missing), root);
  return invalid > 0 || (!all && missing > 0) ? kFailure : kOk;
}

void showProgress(const std::string& id, const DownloadProgress& p, bool terminal) {
  std::string line;
  if (p.verifying && p.total && *p.total > 0) {
    line = fmt::format("{}: checking SHA-256, {:.0f} %", id,
                       100.0 * static_cast<double>(p.received) / static_cast<double>(*p.total));
  } else if (p.total && *p.total > 0) {
    line = fmt::format("{}: {} of {} ({:.1f} %), {}/s", id, humanBytes(p.received), humanBytes(*p.total),
                       100.0 * static_cast<double>(p.received) / static_cast<double>(*p.total),
                       humanBytes(static_cast<std::uint64_t>(p.bytesPerSecond)));
  } else {
    line = fmt::format("{}: {}", id, humanBytes(p.received));
  }
  if (terminal) std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
}

int downloadModels(const ModelsArgs& a) {
  if (a.ids.empty()) throw CLI::ValidationError("models download", "name the checkpoints, e.g. seg-0.4b");
  const std::vector<const zoo::Entry*> entries = selected(a.ids);
  if (!downloadSupported()) {
    std::cerr << "models download: this build has no libcurl; install libcurl4-openssl-dev and rebuild, or "
                 "fetch the files yourself (sapiens-cli models list --json gives every URL)\n";
    return kEnvironment;
  }
  const std::string root = rootOf(a);
  onStopSignals([](int) { interrupted = true; });
  const bool terminal = isatty(STDERR_FILENO);
  int failures = 0;
  for (const zoo::Entry* e : entries) {
    zoo::CheckpointDownload job;
    job.entry = e;
    job.root = root;
    job.endpoint = a.endpoint;
    job.force = a.force;
    job.isCancelled = [] { return interrupted.load(); };
    job.onProgress = [&](const DownloadProgress& p) { showProgress(e->id, p, terminal); };
    std::cerr << fmt::format("{}: {} -> {}\n", e->id, zoo::downloadUrl(*e, a.endpoint),
                             zoo::installedPath(*e, root));
    try {
      const zoo::CheckpointDownloadResult r = zoo::downloadCheckpoint(job);
      if (terminal) std::fprintf(stderr, "\n");
      if (r.alreadyPresent) {
        std::cout << fmt::format("{}: already present and valid: {}\n", e->id, r.path);
        continue;
      }
      std::cout << fmt::format(
          "{}: downloaded {} ({}{}{})\n", e->id, r.path, humanBytes(r.download.bytes),
          r.download.resumedFrom ? ", resumed at " + humanBytes(r.download.resumedFrom) : "",
          r.download.sha256.empty() ? ", no SHA-256 announced"
                                    : ", SHA-256 " + r.download.sha256 + " as announced");
    } catch (const DownloadError& err) {
      if (terminal) std::fprintf(stderr, "\n");
      std::cerr << e->id << ": " << err.what() << "\n";
      ++failures;
      if (err.kind() == DownloadError::Kind::Cancelled) break;
    }
  }
  return failures ? kFailure : kOk;
}

CliCommand modelsCommand("models", [](CLI::App& app) -> CommandAction {
  auto a = std::make_shared<ModelsArgs>();
  auto* sub = app.add_subcommand("models", "The official Sapiens2 checkpoints: list, download, verify");
  sub->require_subcommand(1);
  auto* list =
      sub->add_subcommand("list", "Every released checkpoint, its repository and whether it is present");
  auto* download = sub->add_subcommand(
      "download", "Download checkpoints into the official layout (resumes, verifies, places atomically)");
  auto* verify = sub->add_subcommand("verify", "Check the checkpoints present (header, task, architecture)");
  for (CLI::App* s : {list, download, verify})
    s->add_option("--root", a->root, "Checkpoint root (default $SAPIENS_CHECKPOINT_ROOT or ~/sapiens2_host)");
  list->add_flag("--json", a->json, "Machine-readable output");
  list->add_option("--endpoint", a->endpoint,
                   "Hugging Face endpoint for the URLs shown (default $HF_ENDPOINT)");
  download->add_option("ids", a->ids, "Checkpoints: id (seg-0.4b), file name or repository")->required();
  download->add_option("--endpoint", a->endpoint,
                       "Hugging Face endpoint or mirror (default $HF_ENDPOINT or https://huggingface.co)");
  download->add_flag("--force", a->force, "Download even when a valid file is present");
  verify->add_option("ids", a->ids, "Checkpoints to check (default: every one present)");
  verify->add_flag("--hash", a->hash,
                   "Also compute and print each file's SHA-256 (compare with the hub's file page)");
  return [a, list, download]() -> int {
    if (list->parsed()) return listModels(*a);
    if (download->parsed()) return downloadModels(*a);
    return verifyModels(*a);
  };
});

}  // namespace
}  // namespace sapiens::cli
