#pragma once
// What a Sapiens2 model computes: the bare backbone (pretrain checkpoints) or one of the task heads.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sapiens {

enum class Task { Backbone, Pose, Seg, Normal, Albedo, Pointmap, Matting };

/// "backbone", "pose", "seg", "normal", "albedo", "pointmap", "matting".
std::string_view taskName(Task task);
/// The tasks' names joined by `separator`: "pose,seg,normal".
std::string taskNames(const std::vector<Task>& tasks, std::string_view separator = ",");
/// Accepts the names above (case-insensitive) and the aliases "pretrain" and "segmentation".
std::optional<Task> parseTask(std::string_view text);
/// Every task, in declaration order.
const std::vector<Task>& allTasks();
/// The task heads (every task but the bare backbone) in declaration order, as lists and options show
/// them: pose, seg, normal, albedo, pointmap, matting.
const std::vector<Task>& headTasks();
/// The task heads in the order a picture is analysed: seg first, whose mask gives pose its person
/// boxes, then pose, normal, albedo, pointmap, matting.
const std::vector<Task>& headTasksInRunOrder();

}  // namespace sapiens
