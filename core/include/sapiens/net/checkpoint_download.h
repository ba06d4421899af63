#pragma once
// One checkpoint of a catalogue into the official layout under a checkpoint root: the one way the CLI
// (`models download`) and the studio (Models > Manage Models) fetch Meta's files. Resumes from the .part
// file, checks the hub's SHA-256 and the catalogue's header check before the file is placed.

#include "sapiens/model/model_zoo.h"
#include "sapiens/net/http_download.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sapiens::zoo {

struct CheckpointDownload {
  const Entry* entry = nullptr;
  std::string root;
  std::string endpoint;  ///< "" = $HF_ENDPOINT, else https://huggingface.co
  bool force = false;    ///< download even when a valid file is present
  std::function<void(const DownloadProgress&)> onProgress;
  std::function<bool()> isCancelled;
};

struct CheckpointDownloadResult {
  std::string path;
  bool alreadyPresent = false;  ///< a valid file was there; nothing was downloaded
  DownloadResult download;      ///< of the transfer, when there was one
};

/// Downloads (or finds valid) the entry's file. Throws DownloadError as downloadFile does; a file that
/// fails the catalogue's check is rejected with Kind::Invalid and the checkFile reason.
CheckpointDownloadResult downloadCheckpoint(const CheckpointDownload& job);

/// Request headers for the hub: "Authorization: Bearer $HF_TOKEN" when the token is set.
std::vector<std::string> hubHeaders();

/// root/<relativePath>.
std::string installedPath(const Entry& entry, const std::string& root);
/// Bytes already in the entry's .part file under `root` (0 when there is none).
std::uint64_t partialBytes(const Entry& entry, const std::string& root);

/// The file's size and hash as the server announces them (HEAD).
RemoteFile probeCheckpoint(const Entry& entry, const std::string& endpoint = "",
                           const std::function<bool()>& isCancelled = {});

}  // namespace sapiens::zoo
