#!/usr/bin/env bash
# One prepared check for a machine with an NVIDIA GPU and a CUDA PyTorch or LibTorch 2.x:
#   1. configure the core-only build (model library, sapiens-cli and its bench: LibTorch and header-only
#      libraries) against that LibTorch, refusing a CPU-only one (SAPIENS_REQUIRE_CUDA);
#   2. build sapiens-cli;
#   3. numeric parity on the golden fixtures (tests/fixtures/golden) on the GPU: fp32 at the fixtures'
#      tolerances, bf16 at x25 (sapiens-cli forward --expect);
#   4. benchmark the backbones (default 0.4b, 1b, 5b) at 1024x768 in bf16 at batch 1 and 8, one table,
#      each figure against the bf16 matmul rate measured in the same run.
# Meant to finish in under 8 minutes on one H200. Everything it prints also goes to OUT/gpu-check.log.
#
# tools/gpu-check.sh [--dry-run] [--torch-prefix DIR] [--build DIR] [--out DIR] [--debs DIR]
#                    [--archs "0.4b 1b 5b"] [--batches "1 8"] [--skip-parity] [--skip-bench]
#   --dry-run       say what would run, run nothing (the LibTorch look-up included)
#   --torch-prefix  LibTorch's CMake prefix; default $SAPIENS_TORCH_PREFIX, else the one of python3's torch
#   --debs DIR      .deb files (e.g. libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev, fetched with
#                   `apt-get download` where the registry is reachable) unpacked into a private prefix
#                   that is searched too, for a machine without them
# Exit codes: 0 all checks passed, 1 a parity check failed, 2 setup failed (no CUDA LibTorch, configure
# or build error, bad arguments).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dry_run=0
torch_prefix="${SAPIENS_TORCH_PREFIX:-}"
build="$root/build/gpu-check"
out="${OUT:-$root/build/gpu-check-out}"
debs=""
archs="0.4b 1b 5b"
batches="1 8"
parity=1
bench=1

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
fail_setup() {
  echo "gpu-check: $*" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=1 ;;
    --torch-prefix) torch_prefix="${2:?--torch-prefix needs a folder}"; shift ;;
    --build) build="${2:?--build needs a folder}"; shift ;;
    --out) out="${2:?--out needs a folder}"; shift ;;
    --debs) debs="${2:?--debs needs a folder}"; shift ;;
    --archs) archs="${2:?--archs needs sizes}"; shift ;;
    --batches) batches="${2:?--batches needs sizes}"; shift ;;
    --skip-parity) parity=0 ;;
    --skip-bench) bench=0 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; fail_setup "unknown argument '$1'" ;;
  esac
  shift
done
for a in $archs; do
  case "$a" in 0.1b | 0.4b | 0.8b | 1b | 5b) ;; *) fail_setup "unknown backbone size '$a' (0.1b 0.4b 0.8b 1b 5b)" ;; esac
done
for b in $batches; do
  [[ "$b" =~ ^[1-9][0-9]*$ ]] || fail_setup "batch sizes are positive integers, not '$b'"
done

# Runs a command, or only shows it in a dry run.
step() {
  echo "+ $*"
  if [ "$dry_run" = 0 ]; then "$@"; fi
}

run_check() {
echo "gpu-check: $(date -u +%FT%TZ) on $(hostname), sources $root"

# 1. LibTorch
if [ -z "$torch_prefix" ]; then
  if [ "$dry_run" = 1 ]; then
    torch_prefix="<python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'>"
  elif ! torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)"; then
    fail_setup "no LibTorch: give --torch-prefix DIR or \$SAPIENS_TORCH_PREFIX, or install a CUDA PyTorch"
  fi
fi
if [ "$dry_run" = 0 ] && [ ! -d "$torch_prefix" ]; then
  fail_setup "no LibTorch at $torch_prefix (the folder does not exist)"
fi
echo "gpu-check: LibTorch from $torch_prefix"
prefix_path="$torch_prefix"

if [ -n "$debs" ]; then
  deps="$build/deps"
  [ "$dry_run" = 1 ] || [ -d "$debs" ] || fail_setup "--debs: no folder $debs"
  step mkdir -p "$deps"
  for deb in "$debs"/*.deb; do
    [ -e "$deb" ] || { [ "$dry_run" = 1 ] && break; fail_setup "--debs: no .deb in $debs"; }
    step dpkg-deb -x "$deb" "$deps"
  done
  prefix_path="$prefix_path;$deps/usr;$deps/usr/lib/x86_64-linux-gnu/cmake"
fi

# 2. configure and build
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
if ! step cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSAPIENS_CORE_ONLY=ON \
  -DSAPIENS_REQUIRE_CUDA=ON "-DCMAKE_PREFIX_PATH=$prefix_path"; then
  fail_setup "configure failed (above): a CUDA LibTorch is needed at $torch_prefix"
fi
step cmake --build "$build" --target sapiens-cli -j "$(nproc)" || fail_setup "the build failed (above)"
cli="$build/app/sapiens-cli"
step "$cli" doctor

# 3. parity
failed=0
if [ "$parity" = 1 ]; then
  golden="$root/tests/fixtures/golden"
  for fixture in backbone backbone_bf16 pose seg normal albedo pointmap; do
    for dtype in fp32 bf16; do
      scale=1
      [ "$dtype" = bf16 ] && scale=25
      echo "== parity $fixture $dtype"
      if ! step "$cli" forward --model "$golden/$fixture/model.safetensors" --input "$golden/$fixture/io.safetensors" \
        --output "$out/$fixture.$dtype.safetensors" --device cuda --dtype "$dtype" --intermediates \
        --expect "$golden/$fixture/io.safetensors" --tolerance-scale "$scale"; then
        echo "gpu-check: PARITY FAILED: $fixture $dtype"
        failed=1
      fi
    done
  done
fi

# 4. speed
if [ "$bench" = 1 ]; then
  rows=()
  for arch in $archs; do
    for batch in $batches; do
      echo "== bench $arch batch $batch"
      json="$out/bench-$arch-b$batch.json"
      if [ "$dry_run" = 1 ]; then
        step "$cli" bench --arch "$arch" --task backbone --height 1024 --width 768 --batch "$batch" --device cuda \
          --dtype bf16 --iterations 5 --warmup 2 --json
      elif "$cli" bench --arch "$arch" --task backbone --height 1024 --width 768 --batch "$batch" --device cuda \
        --dtype bf16 --iterations 5 --warmup 2 --json >"$json"; then
        rows+=("$json")
      else
        echo "gpu-check: bench $arch batch $batch failed (above)"
      fi
    done
  done
  if [ "${#rows[@]}" -gt 0 ]; then
    python3 - "${rows[@]}" <<'PY'
import json, sys
print(f"{'arch':>5} {'batch':>5} {'ms':>9} {'frames/s':>9} {'TFLOP/s':>8} {'matmul TFLOP/s':>15} {'of matmul':>9} {'peak MB':>8}")
for path in sys.argv[1:]:
    r = json.load(open(path))
    fps = 1000.0 * r["batch"] / r["ms_median"]
    share = 1.0 / r["floor_ratio"] if r.get("floor_ratio") else float("nan")
    print(f"{r['arch']:>5} {r['batch']:>5} {r['ms_median']:>9.2f} {fps:>9.1f} {r['gflops_achieved'] / 1000:>8.1f} "
          f"{r['gflops_floor'] / 1000:>15.1f} {share:>8.0%} {r.get('peak_rss_mb', 0):>8.0f}")
PY
  fi
fi

if [ "$dry_run" = 1 ]; then
  echo "gpu-check: dry run, nothing was run"
elif [ "$failed" = 1 ]; then
  echo "gpu-check: parity FAILED (see above); log in $out/gpu-check.log"
  exit 1
else
  echo "gpu-check: done; log and outputs in $out"
fi
}

if [ "$dry_run" = 1 ]; then
  run_check
  exit
fi
mkdir -p "$out"
set +e
run_check 2>&1 | tee "$out/gpu-check.log"
exit "${PIPESTATUS[0]}"
