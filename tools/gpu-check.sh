#!/usr/bin/env bash
# One prepared check for a machine with an NVIDIA GPU and a CUDA PyTorch or LibTorch 2.x:
#   1. configure the core-only build (model library, sapiens-cli and its bench: LibTorch and header-only
#      libraries) against that LibTorch, refusing a CPU-only one (SAPIENS_REQUIRE_CUDA);
#   2. build sapiens-cli; and, where nvcc was found, the custom CUDA kernels' test program
#      (test_cuda_kernels: each kernel of core/src/cuda against its CPU reference on this GPU);
#   3. numeric parity on the golden fixtures (tests/fixtures/golden) on the GPU: fp32 at the fixtures'
#      tolerances (intermediates too), bf16 final outputs at x150 (sapiens-cli forward --expect);
#   4. benchmark the backbones (default 0.4b, 1b, 5b) at 1024x768 in bf16 at batch 1 and 8, one table,
#      each figure against the bf16 matmul rate measured in the same run;
#   5. a batch the GPU cannot hold (0.4b at --oom-batch, default 2048) must end in one clear error, exit 1.
# Meant to finish in under 8 minutes on one H200. Everything it prints also goes to OUT/gpu-check.log.
#
# tools/gpu-check.sh [--dry-run] [--torch-prefix DIR] [--build DIR] [--out DIR] [--debs DIR]
#                    [--archs "0.4b 1b 5b"] [--batches "1 8"] [--skip-parity] [--skip-bench] [--skip-oom]
#                    [--oom-batch N] [--skip-kernels]
#   --dry-run       say what would run, run nothing (the LibTorch look-up included)
#   --torch-prefix  LibTorch's CMake prefix; default $SAPIENS_TORCH_PREFIX, else the one of python3's torch
#   --debs DIR      .deb files (e.g. libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev, fetched with
#                   `apt-get download` where the registry is reachable) unpacked into a private prefix
#                   that is searched too, for a machine without them
#   --skip-kernels  do not build or run the custom CUDA kernels' test
# Exit codes: 0 all checks passed, 1 a parity or kernel check failed, 2 setup failed (no CUDA LibTorch, configure
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
oom=1
oom_batch=2048
kernels=1

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
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
    --skip-oom) oom=0 ;;
    --oom-batch) oom_batch="${2:?--oom-batch needs a size}"; shift ;;
    --skip-kernels) kernels=0 ;;
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
if [ "$dry_run" = 0 ]; then
  nvidia-smi -L 2>&1 || true
  echo "compiler: $(c++ --version 2>&1 | head -n 1); cmake: $(cmake --version | head -n 1)"
  python3 -c 'import torch; print("python torch", torch.__version__, "cuda", torch.version.cuda, "cxx11 abi", torch.compiled_with_cxx11_abi())' 2>&1 || true
fi

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
# Warnings are counted, not fatal: a newer compiler's or LibTorch's new warnings must not hide the parity.
if ! step cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSAPIENS_CORE_ONLY=ON \
  -DSAPIENS_REQUIRE_CUDA=ON -DSAPIENS_WERROR=OFF "-DCMAKE_PREFIX_PATH=$prefix_path"; then
  fail_setup "configure failed (above): a CUDA LibTorch is needed at $torch_prefix"
fi
if [ "$dry_run" = 1 ]; then
  step cmake --build "$build" --target sapiens-cli -j "$(nproc)"
else
  echo "+ cmake --build $build --target sapiens-cli -j $(nproc)"
  cmake --build "$build" --target sapiens-cli -j "$(nproc)" >"$out/build.log" 2>&1 || {
    tail -n 60 "$out/build.log"
    fail_setup "the build failed (above; whole log in $out/build.log)"
  }
  warnings="$(grep -c "warning:" "$out/build.log" || true)"
  echo "gpu-check: build done, $warnings compiler warnings"
  grep -A3 "warning:" "$out/build.log" | grep -v "^--$" | head -n 40 || true
fi
cli="$build/app/sapiens-cli"
step "$cli" doctor
scratch="$build/outputs"
step mkdir -p "$scratch"
failed=0

# 2b. the custom CUDA kernels (built only where configure found nvcc): exit 0 pass, 77 no device, else fail
if [ "$kernels" = 1 ]; then
  echo "== custom CUDA kernels"
  kernel_test="$build/core/test_cuda_kernels"
  if [ "$dry_run" = 1 ]; then
    step cmake --build "$build" --target test_cuda_kernels -j "$(nproc)"
    step "$kernel_test"
  elif ! cmake --build "$build" --target help 2>/dev/null | grep -q "test_cuda_kernels"; then
    echo "gpu-check: kernels NOT BUILT: configure found no usable nvcc (put the CUDA toolkit's bin on PATH or set CUDACXX)"
  elif ! cmake --build "$build" --target test_cuda_kernels -j "$(nproc)" >"$out/build-kernels.log" 2>&1; then
    tail -n 40 "$out/build-kernels.log"
    echo "gpu-check: KERNEL CHECK FAILED: the kernels did not build (log in $out/build-kernels.log)"
    failed=1
  else
    set +e
    "$kernel_test"
    rc=$?
    set -e
    case "$rc" in
      0) echo "gpu-check: kernels match their CPU references" ;;
      77) echo "gpu-check: kernels SKIPPED: the test found no CUDA device" ;;
      *) echo "gpu-check: KERNEL CHECK FAILED: test_cuda_kernels exit $rc (above)"; failed=1 ;;
    esac
  fi
fi

# 3. parity
if [ "$parity" = 1 ]; then
  golden="$root/tests/fixtures/golden"
  for fixture in backbone backbone_bf16 pose seg normal albedo pointmap; do
    for dtype in fp32 bf16; do
      # fp32: every output and intermediate at the fixtures' tolerances. bf16 (the fixtures are float32
      # computations): the final outputs at x150, 0.3 max / 0.03 mean of max|ref|, which the CPU's own
      # bf16 run meets (worst: albedo max 0.155, scale mean 0.029) and a wrong kernel or layout does not.
      checks=(--intermediates --tolerance-scale 1)
      [ "$dtype" = bf16 ] && checks=(--tolerance-scale 150)
      echo "== parity $fixture $dtype"
      if ! step "$cli" forward --model "$golden/$fixture/model.safetensors" --input "$golden/$fixture/io.safetensors" \
        --output "$scratch/$fixture.$dtype.safetensors" --device cuda --dtype "$dtype" \
        --expect "$golden/$fixture/io.safetensors" "${checks[@]}"; then
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
      json="$scratch/bench-$arch-b$batch.json"
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
    python3 - "${rows[@]}" <<'PY' | tee "$out/bench.txt"
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

# 5. an input the GPU has no memory for: one clear line and exit 1, not a crash or an allocator dump
if [ "$oom" = 1 ]; then
  echo "== out of memory: 0.4b at batch $oom_batch"
  if [ "$dry_run" = 1 ]; then
    step "$cli" bench --arch 0.4b --task backbone --height 1024 --width 768 --batch "$oom_batch" --device cuda \
      --dtype bf16 --iterations 1 --warmup 1
  else
    set +e
    "$cli" bench --arch 0.4b --task backbone --height 1024 --width 768 --batch "$oom_batch" --device cuda \
      --dtype bf16 --iterations 1 --warmup 1 >"$scratch/oom.out" 2>&1
    rc=$?
    set -e
    tail -n 5 "$scratch/oom.out"
    if [ "$rc" = 1 ] && grep -q "out of GPU memory in the forward pass of a batch of $oom_batch" "$scratch/oom.out"; then
      echo "gpu-check: out of memory reported clearly (exit 1)"
    else
      echo "gpu-check: OUT-OF-MEMORY CHECK FAILED: exit $rc, message above"
      failed=1
    fi
  fi
fi

if [ "$dry_run" = 1 ]; then
  echo "gpu-check: dry run, nothing was run"
elif [ "$failed" = 1 ]; then
  echo "gpu-check: parity or kernel check FAILED (see above); log in $out/gpu-check.log"
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
