#include "sapiens/motion/bvh_file.h"

#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"
#include "sapiens/motion/motion_error.h"

#include <charconv>
#include <cmath>

namespace sapiens::motion {

namespace {

void appendDecimal(std::string& text, double value) {
  char digits[400];
  const auto result =
      std::to_chars(digits, digits + sizeof digits, value == 0.0 ? 0.0 : value, std::chars_format::fixed);
  text.append(digits, result.ptr);
}

void appendTriple(std::string& text, const Point3& values) {
  for (int i = 0; i < 3; ++i) {
    text += i ? " " : "";
    appendDecimal(text, values[i]);
  }
}

void appendJoint(std::string& text, const BvhMotion& motion, std::size_t index, int depth) {
  const BvhJoint& joint = motion.joints[index];
  const std::string indent(static_cast<std::size_t>(depth), '\t');
  text += indent + (joint.parent < 0 ? "ROOT " : "JOINT ") + joint.name + "\n" + indent + "{\n";
  text += indent + "\tOFFSET ";
  appendTriple(text, joint.offset);
  text += "\n" + indent +
          (joint.parent < 0 ? "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
                            : "\tCHANNELS 3 Zrotation Xrotation Yrotation\n");
  for (std::size_t child = index + 1; child < motion.joints.size(); ++child)
    if (motion.joints[child].parent == static_cast<int>(index)) appendJoint(text, motion, child, depth + 1);
  if (joint.hasEndSite) {
    text += indent + "\tEnd Site\n" + indent + "\t{\n" + indent + "\t\tOFFSET ";
    appendTriple(text, joint.endSite);
    text += "\n" + indent + "\t}\n";
  }
  text += indent + "}\n";
}

}  // namespace

std::string bvhText(const BvhMotion& motion) {
  std::string text = "HIERARCHY\n";
  appendJoint(text, motion, 0, 0);
  text += "MOTION\nFrames: " + std::to_string(motion.rotations.size()) + "\nFrame Time: ";
  appendDecimal(text, motion.frameTime);
  text += '\n';
  for (std::size_t f = 0; f < motion.rotations.size(); ++f) {
    appendTriple(text, motion.rootPositions[f]);
    for (const Point3& angles : motion.rotations[f]) {
      text += ' ';
      appendTriple(text, angles);
    }
    text += '\n';
  }
  return text;
}

void writeBvh(const std::string& path, const BvhMotion& motion) {
  if (motion.joints.empty() || motion.joints[0].parent >= 0)
    throw ExportError(path, "the skeleton has no root");
  if (motion.rotations.empty()) throw ExportError(path, "the motion has no frames");
  if (!(motion.frameTime > 0) || !std::isfinite(motion.frameTime))
    throw ExportError(path, "the frame time is not a positive number");
  if (motion.rootPositions.size() != motion.rotations.size())
    throw ExportError(path, "root positions and rotations have different frame counts");
  for (std::size_t f = 0; f < motion.rotations.size(); ++f)
    if (motion.rotations[f].size() != motion.joints.size())
      throw ExportError(path, "frame " + std::to_string(f) + " has " +
                                  std::to_string(motion.rotations[f].size()) + " rotations for " +
                                  std::to_string(motion.joints.size()) + " joints");
  writeFileAtomically(path, bvhText(motion));
}

void writeBvh(const std::string& path, const MarkerTable& markers) {
  BvhMotion motion;
  try {
    motion = buildBvhMotion(markers);
  } catch (const MotionError& e) {
    throw ExportError(path, e.what());
  }
  writeBvh(path, motion);
}

}  // namespace sapiens::motion
