#pragma once
// Which checkpoint each task of a run uses, decided once for every front end: the one the user named,
// else the official file found under the checkpoint root, else (when allowed) the untrained demo
// weights, else none, with a sentence saying where it looked.

#include "sapiens/model/task.h"

#include <map>
#include <string>
#include <vector>

namespace sapiens {

struct CheckpointRequest {
  std::vector<Task> tasks;
  std::map<Task, std::string> explicitPaths;  ///< the user's choices; not checked here
  std::string root;                           ///< default: paths::checkpointRoot()
  std::string size = "0.4b";                  ///< preferred official size
  /// A task with neither an explicit nor a found checkpoint gets the demo weights
  /// (demo::findOrCreateDemoCheckpoint, which may generate them: about a second per task).
  bool demoFallback = false;
};

enum class CheckpointSource { Explicit, Found, DemoWeights, None };

struct TaskCheckpoint {
  Task task = Task::Seg;
  CheckpointSource source = CheckpointSource::None;
  std::string path;   ///< empty for None
  std::string error;  ///< None: why (where it looked; why the demo weights could not be had)
};

/// One entry per requested task, in headTasksInRunOrder(). Looks at the disk; loads no model. Logs where
/// it looked for each task that gets the demo weights (info) and one warning naming all of them.
std::vector<TaskCheckpoint> resolveTaskCheckpoints(const CheckpointRequest& request);

}  // namespace sapiens
