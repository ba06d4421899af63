#!/usr/bin/env bash
# Fuzzing with libFuzzer (clang from Debian): builds each target of tests/fuzz with
# -fsanitize=fuzzer,address,undefined into build/fuzz and runs it for SECONDS (default 60) on a working
# copy of its seed corpus (tests/fuzz/corpus/TARGET). Prints executions and coverage per target. A crash
# leaves its input in build/fuzz/TARGET/crash-*: copy it into the seed corpus, where the replay test
# (ctest test_fuzz_replay_TARGET, built by the ordinary compiler) keeps it as a regression test.
# A target is rebuilt only when its sources, a header, tests/fuzz/ or this script is newer than its binary.
#   tools/fuzz.sh [SECONDS] [TARGET...]   SECONDS 0: build only; default targets: all of
#   safetensors label_set keypoints_import image_open video_open (one after the other)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
targets=("$@")
all_targets=(safetensors label_set keypoints_import image_open video_open)
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a number, not '$seconds'" >&2; exit 2; }
for target in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $target "* ]] || { echo "fuzz: unknown target '$target' (${all_targets[*]})" >&2; exit 2; }
done
command -v clang++ >/dev/null || { echo "fuzz: clang++ is needed (apt install clang)" >&2; exit 2; }

# The sources each target needs besides its own file, all free of LibTorch (so they build in a minute).
json_sources="core/src/result/json_support.cpp core/src/io/atomic_file.cpp core/src/common/log.cpp
  core/src/common/paths.cpp"
label_sources="core/src/finetune/label_set.cpp core/src/finetune/frame_labels.cpp core/src/model/task.cpp
  core/src/export/coco_keypoints.cpp core/src/export/keypoints_json.cpp core/src/result/keypoint_metadata.cpp
  core/src/result/seg_classes.cpp core/src/export/npy.cpp core/src/export/mask_png.cpp
  core/src/export/image_file.cpp core/src/export/overlay.cpp core/src/export/file_extension.cpp
  core/src/media/image_io.cpp $json_sources"
sources_of() {
  case "$1" in
    safetensors) echo "core/src/model/safetensors.cpp" ;;
    label_set | keypoints_import) echo "$label_sources" ;;
    image_open) echo "core/src/media/image_io.cpp" ;;
    video_open)
      echo "core/src/media/frame_source.cpp core/src/media/video_file_source.cpp core/src/media/ffmpeg_handles.cpp
        core/src/media/image_sequence_source.cpp core/src/media/camera_source.cpp
        core/src/media/synthetic_live_source.cpp core/src/media/frame_number_pattern.cpp
        core/src/media/image_io.cpp core/src/common/log.cpp core/src/common/paths.cpp" ;;
  esac
}
# Compiler and linker flags besides the sanitizers (the system's OpenCV and FFmpeg are not instrumented:
# the coverage reported is of our code).
flags_of() {
  local opencv="$(pkg-config --cflags opencv4) -lopencv_imgcodecs -lopencv_imgproc -lopencv_core"
  local logging="-I$root/build/fuzz/generated $(pkg-config --cflags --libs spdlog fmt)"
  case "$1" in
    safetensors) ;;
    label_set | keypoints_import) echo "$opencv $logging" ;;
    image_open) echo "$opencv" ;;
    video_open) echo "$opencv $logging $(pkg-config --cflags --libs libavformat libavcodec libswscale libavutil)" ;;
  esac
}
# paths.cpp's build_info.h, as CMake would configure it (resources from the source tree).
mkdir -p "$root/build/fuzz/generated/sapiens/common"
sed -e "s|@SAPIENS_RESOURCE_DIR@|$root/resources|" -e 's|@[A-Za-z0-9_]*@||' \
  "$root/core/src/common/build_info.h.in" >"$root/build/fuzz/generated/sapiens/common/build_info.h.new"
cmp -s "$root/build/fuzz/generated/sapiens/common/build_info.h.new" \
  "$root/build/fuzz/generated/sapiens/common/build_info.h" ||
  mv "$root/build/fuzz/generated/sapiens/common/build_info.h.new" "$root/build/fuzz/generated/sapiens/common/build_info.h"
rm -f "$root/build/fuzz/generated/sapiens/common/build_info.h.new"

status=0
for target in "${targets[@]}"; do
  work="$root/build/fuzz/$target"
  mkdir -p "$work/corpus"
  cp -n "$root/tests/fuzz/corpus/$target/"* "$work/corpus/" 2>/dev/null || true
  binary="$work/fuzz_$target"
  # shellcheck disable=SC2046
  if [ ! -x "$binary" ] || [ -n "$(find "$root/core/include" "$root/core/src" "$root/tests/fuzz" "${BASH_SOURCE[0]}" \
        $(for s in $(sources_of "$target"); do echo "$root/$s"; done) -newer "$binary" -type f \
        \( -name '*.h' -o -path "$root/tests/fuzz/*" -o -path "$root/tools/*" -o -false \
        $(for s in $(sources_of "$target"); do echo "-o -path $root/$s"; done) \) -print -quit)" ]; then
    echo "fuzz: building $target"
    # shellcheck disable=SC2046
    clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
      -I"$root/core/include" -I"$root/core/src" "$root/tests/fuzz/fuzz_$target.cpp" \
      $(for s in $(sources_of "$target"); do echo "$root/$s"; done) $(flags_of "$target") -o "$binary.new"
    mv "$binary.new" "$binary"
  fi
  [ "$seconds" -gt 0 ] || continue
  echo "fuzz: $target for $seconds s"
  dict=()  # tests/fuzz/TARGET.dict: the keys and values of a text format, which mutations rarely invent
  [ ! -f "$root/tests/fuzz/$target.dict" ] || dict=(-dict="$root/tests/fuzz/$target.dict")
  if (cd "$work" && ./"fuzz_$target" -max_total_time="$seconds" -timeout=30 -print_final_stats=1 "${dict[@]}" \
        corpus >"$work/log" 2>&1); then
    :
  else
    status=1
    echo "fuzz: $target FOUND A CRASH: $(ls "$work"/crash-* 2>/dev/null | head -1) (log: $work/log)"
  fi
  grep -E "^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$work/log" || tail -5 "$work/log"
  echo "fuzz: $target corpus now $(ls "$work/corpus" | wc -l) inputs"
done
exit $status
