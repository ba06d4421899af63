#pragma once
// The catalogue of Meta's released Sapiens2 checkpoints (docs/MODEL_ZOO.md of facebookresearch/sapiens2):
// every task x size with its official file name and folder, its Hugging Face repository and download
// URL, and what the file must contain (tensor count, elements, the architecture it must match).
// Exact file sizes are not published; the data area of an all-F32 file is 4 bytes x elements, which a
// third party confirmed for pose-0.8b only, so sizes are checked against the server's announced length
// and the file's own header, never against a guessed number. No hashes are known, none are invented.

#include "sapiens/model/architecture.h"
#include "sapiens/model/task.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sapiens::zoo {

struct Entry {
  Task task = Task::Backbone;
  std::string size;          ///< "0.4b", "1b-4k", ...
  std::string id;            ///< "pose-0.4b", "pretrain-1b-4k": what the CLI takes
  std::string repository;    ///< "facebook/sapiens2-pose-0.4b"
  std::string fileName;      ///< "sapiens2_0.4b_pose.safetensors"
  std::string relativePath;  ///< "pose/sapiens2_0.4b_pose.safetensors" under the checkpoint root
  std::int64_t tensors = 0;  ///< tensors in the file (the RoPE periods buffer included)
  std::int64_t elements = 0;
  std::uint64_t dataBytesIfF32 = 0;  ///< 4 x elements: the data area when every tensor is stored F32
  Architecture expected;             ///< what the file must hold

  const Architecture& architecture() const { return expected; }
};

/// An entry of another catalogue (a mirror's own models, a test's): `id` is also the file's stem,
/// stored as <task folder>/<id>.safetensors in `repository`.
Entry customEntry(const std::string& id, const std::string& repository, const Architecture& architecture);

/// Every released checkpoint: pretrain 0.1b/0.4b/0.8b/1b/1b-4k/5b; pose, seg, normal, pointmap at
/// 0.4b/0.8b/1b/5b (22 entries). No albedo checkpoint has been published.
const std::vector<Entry>& catalogue();
/// By id ("seg-1b"), by official stem or file name ("sapiens2_1b_seg[.safetensors]"), or nullptr.
const Entry* find(std::string_view name);

/// The files that give `tasks` a released model: each task's checkpoint at `size`, else at the smallest
/// size released for it (matting: 1b); tasks without a release (albedo, backbone) get none.
std::vector<const Entry*> starterSet(const std::vector<Task>& tasks, std::string_view size = "0.4b");

/// "https://huggingface.co/<repository>/resolve/main/<file>" with `endpoint` (default: $HF_ENDPOINT, else
/// https://huggingface.co) in place of the host, so that mirrors and tests can serve the same paths.
std::string downloadUrl(const Entry& entry, const std::string& endpoint = "");

enum class FileState { Missing, Valid, Invalid };

struct FileCheck {
  FileState state = FileState::Missing;
  std::string path;
  std::uint64_t bytes = 0;
  std::string problem;  ///< why it is invalid, one sentence naming the file
};

/// Validates a file against the entry without reading tensor data: a complete safetensors header
/// (offsets covering the file exactly), the entry's task, and exactly its architecture's tensors and
/// shapes. A Hugging Face `model.safetensors` copy is checked the same way.
FileCheck checkFile(const Entry& entry, const std::string& path);
/// checkFile on root/<relativePath>.
FileCheck checkInstalled(const Entry& entry, const std::string& root);

std::string_view stateName(FileState state);

}  // namespace sapiens::zoo
