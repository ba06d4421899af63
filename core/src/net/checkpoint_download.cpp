#include "sapiens/net/checkpoint_download.h"

#include "sapiens/common/log.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace sapiens::zoo {

std::vector<std::string> hubHeaders() {
  std::vector<std::string> headers;
  if (const char* token = std::getenv("HF_TOKEN"); token && *token)
    headers.push_back(std::string("Authorization: Bearer ") + token);
  return headers;
}

std::string installedPath(const Entry& entry, const std::string& root) {
  return root + "/" + entry.relativePath;
}

std::uint64_t partialBytes(const Entry& entry, const std::string& root) {
  std::error_code ec;
  const std::string part = partialPath(installedPath(entry, root));
  if (!std::filesystem::is_regular_file(part, ec)) return 0;
  const auto bytes = std::filesystem::file_size(part, ec);
  return ec ? 0 : bytes;
}

CheckpointDownloadResult downloadCheckpoint(const CheckpointDownload& job) {
  if (!job.entry) throw std::invalid_argument("downloadCheckpoint: no catalogue entry");
  const Entry& entry = *job.entry;
  CheckpointDownloadResult result;
  result.path = installedPath(entry, job.root);
  if (!job.force && checkFile(entry, result.path).state == FileState::Valid) {
    logger().info("{}: already present and valid: {}", entry.id, result.path);
    result.alreadyPresent = true;
    return result;
  }
  DownloadRequest request;
  request.url = downloadUrl(entry, job.endpoint);
  request.destination = result.path;
  request.headers = hubHeaders();
  request.isCancelled = job.isCancelled;
  request.onProgress = job.onProgress;
  request.validate = [&entry](const std::string& part) {
    const FileCheck check = checkFile(entry, part);
    if (check.state != FileState::Valid) throw std::runtime_error(check.problem);
  };
  logger().info("{}: {} -> {}", entry.id, request.url, result.path);
  result.download = downloadFile(request);
  return result;
}

RemoteFile probeCheckpoint(const Entry& entry, const std::string& endpoint,
                           const std::function<bool()>& isCancelled) {
  return probeRemoteFile(downloadUrl(entry, endpoint), hubHeaders(), 20, isCancelled);
}

}  // namespace sapiens::zoo
