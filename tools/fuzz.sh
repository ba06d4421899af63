#!/usr/bin/env bash
# Fuzzing with libFuzzer (clang from Debian): builds each target of tests/fuzz with
# -fsanitize=fuzzer,address,undefined into build/fuzz and runs it for SECONDS (default 60) on a working
# copy of its seed corpus (tests/fuzz/corpus/TARGET). Prints executions and coverage per target. A crash
# leaves its input in build/fuzz/TARGET/crash-*: copy it into the seed corpus, where the replay test
# (ctest test_fuzz_replay_TARGET, built by the ordinary compiler) keeps it as a regression test.
#   tools/fuzz.sh [SECONDS] [TARGET...]      targets: safetensors
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(safetensors)
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a number, not '$seconds'" >&2; exit 2; }
command -v clang++ >/dev/null || { echo "fuzz: clang++ is needed (apt install clang)" >&2; exit 2; }

# The sources each target needs besides its own file (kept free of LibTorch, so they build in seconds).
sources_of() {
  case "$1" in
    safetensors) echo "core/src/model/safetensors.cpp" ;;
    *) echo "fuzz: unknown target '$1' (safetensors)" >&2; exit 2 ;;
  esac
}

status=0
for target in "${targets[@]}"; do
  work="$root/build/fuzz/$target"
  mkdir -p "$work/corpus"
  cp -n "$root/tests/fuzz/corpus/$target/"* "$work/corpus/" 2>/dev/null || true
  # shellcheck disable=SC2046
  clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$root/core/include" "$root/tests/fuzz/fuzz_$target.cpp" $(for s in $(sources_of "$target"); do echo "$root/$s"; done) \
    -o "$work/fuzz_$target"
  echo "fuzz: $target for $seconds s"
  if (cd "$work" && ./"fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 corpus >"$work/log" 2>&1); then
    :
  else
    status=1
    echo "fuzz: $target FOUND A CRASH: $(ls "$work"/crash-* 2>/dev/null | head -1) (log: $work/log)"
  fi
  grep -E "^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$work/log" || tail -5 "$work/log"
  echo "fuzz: $target corpus now $(ls "$work/corpus" | wc -l) inputs"
done
exit $status
