#!/usr/bin/env bash
# Fuzzing with libFuzzer (clang from Debian): builds each target of tests/fuzz with
# -fsanitize=fuzzer,address,undefined into build/fuzz (or $FUZZ_BUILD_DIR) and runs it for SECONDS
# (default 60) on a working copy of its seed corpus (tests/fuzz/corpus/TARGET). Prints executions and
# coverage per target. A crash (or an out-of-memory, a time-out, a leak) fails the run and its input is
# kept as build/fuzz/findings/TARGET/crash-SHA1, with the command that copies it into the seed corpus
# tests/fuzz/corpus/TARGET (commit it): the replay test (ctest test_fuzz_replay_TARGET, built by the
# ordinary compiler) then keeps it as a regression test. Nothing is written into the source tree.
# A target is rebuilt only when its sources, a header, tests/fuzz/ or this script is newer than its binary.
#   tools/fuzz.sh [--if-supported] [SECONDS] [TARGET...]   SECONDS 0: build only; default targets: all of
#   safetensors label_set keypoints_import image_open video_open (one after the other)
# --if-supported: exit 77 (ctest's skip) where clang++ cannot build a libFuzzer program with ASan/UBSan,
# instead of failing. FUZZ_SEED=N: a reproducible campaign (that seed, from the stored corpus alone, a fixed
# number of runs): ctest's test_fuzz_libfuzzer runs it so, so that a test run's verdict does not depend on
# the machine's speed or on chance; without it each run explores anew from the growing working corpus.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if_supported=0
if [ "${1:-}" = --if-supported ]; then if_supported=1; shift; fi
seconds="${1:-60}"
shift || true
targets=("$@")
all_targets=(safetensors label_set keypoints_import image_open video_open)
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a number, not '$seconds'" >&2; exit 2; }
for target in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $target "* ]] || { echo "fuzz: unknown target '$target' (${all_targets[*]})" >&2; exit 2; }
done
unsupported() {
  echo "fuzz: $*" >&2
  if [ "$if_supported" = 1 ]; then echo "fuzz: skipped"; exit 77; fi
  exit 2
}
command -v clang++ >/dev/null || unsupported "clang++ is needed (apt install clang libclang-rt-dev)"
out="${FUZZ_BUILD_DIR:-$root/build/fuzz}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$out/probe.cpp"
clang++ -fsanitize=fuzzer,address,undefined "$out/probe.cpp" -o "$out/probe" 2>"$out/probe.log" ||
  unsupported "clang++ cannot link a libFuzzer program with ASan/UBSan (apt install libclang-rt-dev): $(head -3 "$out/probe.log")"

# The sources each target needs besides its own file, all free of LibTorch (so they build in a minute).
json_sources="core/src/result/json_support.cpp core/src/io/atomic_file.cpp core/src/io/file_read.cpp core/src/common/log.cpp
  core/src/common/paths.cpp"
label_sources="core/src/finetune/label_set.cpp core/src/finetune/frame_labels.cpp core/src/model/task.cpp
  core/src/export/coco_keypoints.cpp core/src/export/keypoints_json.cpp core/src/result/keypoint_metadata.cpp
  core/src/result/seg_classes.cpp core/src/export/npy.cpp core/src/export/mask_png.cpp
  core/src/export/image_file.cpp core/src/export/overlay.cpp core/src/export/file_extension.cpp
  core/src/export/track_colors.cpp core/src/export/png_by_rows.cpp
  core/src/media/image_io.cpp $json_sources"
sources_of() {
  case "$1" in
    safetensors) echo "core/src/model/safetensors.cpp" ;;
    label_set | keypoints_import) echo "$label_sources" ;;
    image_open) echo "core/src/media/image_io.cpp core/src/io/file_read.cpp" ;;
    video_open)
      echo "core/src/media/frame_source.cpp core/src/media/video_file_source.cpp core/src/media/ffmpeg_handles.cpp
        core/src/media/image_sequence_source.cpp core/src/media/camera_source.cpp
        core/src/media/synthetic_live_source.cpp core/src/media/frame_number_pattern.cpp
        core/src/media/image_io.cpp core/src/io/file_read.cpp core/src/common/log.cpp core/src/common/paths.cpp" ;;
  esac
}
# Compiler and linker flags besides the sanitizers (the system's OpenCV and FFmpeg are not instrumented:
# the coverage reported is of our code).
flags_of() {
  local opencv="$(pkg-config --cflags opencv4) -lopencv_imgcodecs -lopencv_imgproc -lopencv_core"
  local logging="-I$out/generated $(pkg-config --cflags --libs spdlog fmt)"
  case "$1" in
    safetensors) ;;
    label_set | keypoints_import) echo "$opencv $logging $(pkg-config --cflags --libs libpng)" ;;
    image_open) echo "$opencv" ;;
    video_open) echo "$opencv $logging $(pkg-config --cflags --libs libavformat libavcodec libswscale libavutil)" ;;
  esac
}
# Executions a second each target gets through, about half of what it did on 2 cores in 2026 (FUZZ_SEED).
runs_per_second() {
  case "$1" in
    safetensors | keypoints_import) echo 5000 ;;
    label_set) echo 3000 ;;
    image_open | video_open) echo 250 ;;
  esac
}
# paths.cpp's build_info.h, as CMake would configure it (resources from the source tree).
mkdir -p "$out/generated/sapiens/common"
sed -e "s|@SAPIENS_RESOURCE_DIR@|$root/resources|" -e 's|@[A-Za-z0-9_]*@||' \
  "$root/core/src/common/build_info.h.in" >"$out/generated/sapiens/common/build_info.h.new"
cmp -s "$out/generated/sapiens/common/build_info.h.new" \
  "$out/generated/sapiens/common/build_info.h" ||
  mv "$out/generated/sapiens/common/build_info.h.new" "$out/generated/sapiens/common/build_info.h"
rm -f "$out/generated/sapiens/common/build_info.h.new"

# The inputs libFuzzer left for a failure, kept in the build folder under a name of their content, with the
# command that adds them to the seed corpus. The campaign never writes into the source tree: a test run
# leaves `git status` as it was, and the replay tests read the committed corpus only.
keep_failing_inputs() {
  local target="$1" work="$2" found=0 input kept
  mkdir -p "$out/findings/$target"
  for input in "$work"/crash-* "$work"/oom-* "$work"/timeout-* "$work"/leak-*; do
    [ -f "$input" ] || continue
    found=1
    kept="$out/findings/$target/crash-$(sha1sum "$input" | cut -c1-40)"
    cp "$input" "$kept"
    echo "fuzz: $target FAILED on $(basename "$input"), kept as $kept (log: $work/log)"
    echo "fuzz: fix the cause, then keep it as a regression test: cp '$kept' '$root/tests/fuzz/corpus/$target/' and commit it"
  done
  [ "$found" = 1 ] || echo "fuzz: $target FAILED without an input file (log: $work/log)"
  tail -40 "$work/log" >&2
}

status=0
for target in "${targets[@]}"; do
  work="$out/$target"
  # The working corpus: the stored one plus what past runs added; with FUZZ_SEED the stored one alone.
  [ -z "${FUZZ_SEED:-}" ] || rm -rf "$work/corpus"
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
  rm -f "$work"/crash-* "$work"/oom-* "$work"/timeout-* "$work"/leak-*  # a past run's, already kept
  dict=()  # tests/fuzz/TARGET.dict: the keys and values of a text format, which mutations rarely invent
  [ ! -f "$root/tests/fuzz/$target.dict" ] || dict=(-dict="$root/tests/fuzz/$target.dict")
  bound=(-max_total_time="$seconds")
  if [ -n "${FUZZ_SEED:-}" ]; then
    # Reproducible: this seed, the stored corpus alone, and a number of runs (about half of what this
    # target does in SECONDS on 2 cores of 2026) instead of a time, with three times SECONDS as a cap.
    bound=(-seed="$FUZZ_SEED" -runs="$((seconds * $(runs_per_second "$target")))" -max_total_time="$((3 * seconds))")
  fi
  echo "fuzz: $target for $seconds s ${FUZZ_SEED:+(seed $FUZZ_SEED, ${bound[1]#-})}"
  # A single allocation over 2 GB is a finding (a small file asking for a huge buffer); the process as a
  # whole may hold 4 GB, since ASan keeps freed blocks in quarantine (held small here) and the readers
  # legitimately decode pictures up to their limits.
  if (cd "$work" && ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=64}" ./"fuzz_$target" "${bound[@]}" \
        -timeout=30 -rss_limit_mb=4096 -malloc_limit_mb=2048 -print_final_stats=1 "${dict[@]}" corpus \
        >"$work/log" 2>&1); then
    :
  else
    status=1
    keep_failing_inputs "$target" "$work"
  fi
  grep -E "^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$work/log" || tail -5 "$work/log"
  echo "fuzz: $target corpus now $(ls "$work/corpus" | wc -l) inputs"
done
exit $status
