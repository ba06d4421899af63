#!/usr/bin/env bash
# The Debian package end to end: cpack -G DEB from the build tree into a temporary folder, dpkg-deb -x
# into a temporary root, then the installed sapiens-cli alone (no build tree, no source tree):
# --version, and a headless `run --task seg` on the installed sample with the installed demo weights;
# before that, lintian, hardening-check and the desktop validators on the .deb (deb_lint.sh).
# Usage: deb_roundtrip.sh CPACK BUILD_DIR SOURCE_DIR VERSION WITH_GUI(0|1) WITH_MAN(0|1)
set -euo pipefail

cpack="$1" build="$2" source="$3" version="$4" with_gui="$5" with_man="$6"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/sapiens-deb.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $* ($(( $(date +%s) - t0 )) s)"; }
t0=$(date +%s)

step "cpack -G DEB"
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" > "$tmp/cpack.log" 2>&1 \
  || { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB failed"; }
debs=("$tmp"/out/*.deb)
[ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ] || fail "expected one .deb in $tmp/out, got: ${debs[*]}"
deb="${debs[0]}"
echo "$(basename "$deb"): $(du -h "$deb" | cut -f1)"

step "lintian, hardening-check, appstreamcli, desktop-file-validate"
bash "$source/tests/package/deb_lint.sh" "$deb" "$with_gui" || fail "the package checks (deb_lint.sh)"

step "control fields"
dpkg-deb --field "$deb" Package Version Architecture Depends > "$tmp/control"
cat "$tmp/control"
grep -qx "Package: sapiens2-studio" "$tmp/control" || fail "package name"
grep -qx "Version: $version" "$tmp/control" || fail "version is not $version"
depends="$(sed -n 's/^Depends: //p' "$tmp/control")"
# Computed by dpkg-shlibdeps from the binaries (CPACK_DEBIAN_PACKAGE_SHLIBDEPS), not written by hand.
for lib in libc6 libstdc++6 libtorch1.13 libopencv-core406 libavcodec59; do
  [[ "$depends" =~ (^|, )"$lib"( |,|$) ]] || fail "Depends lacks $lib (shlibdeps): $depends"
done
if [ "$with_gui" = 1 ]; then
  for lib in libqt6core6 libqt6widgets6 qt6-qpa-plugins; do
    [[ "$depends" =~ (^|, )"$lib"( |,|$) ]] || fail "Depends lacks $lib: $depends"
  done
fi

step "dpkg-deb -x"
root="$tmp/root"
dpkg-deb -x "$deb" "$root"
share="$root/usr/share/sapiens2-studio"
expect=(usr/bin/sapiens-cli
        usr/share/sapiens2-studio/data/seg29.json usr/share/sapiens2-studio/data/keypoints308.json
        usr/share/sapiens2-studio/samples/astronaut.png
        usr/share/sapiens2-studio/shaders/image.vert usr/share/sapiens2-studio/shaders/image.frag
        usr/share/doc/sapiens2-studio/copyright usr/share/doc/sapiens2-studio/changelog.gz)
for task in pose seg normal albedo pointmap; do
  expect+=("usr/share/sapiens2-studio/demo-weights/$task/sapiens2_demo_$task.safetensors")
done
if [ "$with_gui" = 1 ]; then
  expect+=(usr/bin/sapiens-studio usr/share/applications/sapiens-studio.desktop
           usr/share/metainfo/org.sapiens2studio.Studio.metainfo.xml
           usr/share/icons/hicolor/scalable/apps/sapiens-studio.svg)
  for size in 16 22 24 32 48 64 128 256; do
    expect+=("usr/share/icons/hicolor/${size}x${size}/apps/sapiens-studio.png")
  done
fi
if [ "$with_man" = 1 ]; then
  expect+=(usr/share/man/man1/sapiens-cli.1.gz usr/share/man/man1/sapiens-cli-run.1.gz
           usr/share/man/man1/sapiens-cli-doctor.1.gz)
  if [ "$with_gui" = 1 ]; then expect+=(usr/share/man/man1/sapiens-studio.1.gz); fi
fi
for f in "${expect[@]}"; do
  [ -s "$root/$f" ] || fail "missing from the package: /$f"
done
if [ "$with_man" = 1 ]; then
  # (Whole pages into files first: grep -q on a pipe would kill zcat with SIGPIPE under pipefail.)
  for page in "$root"/usr/share/man/man1/*.1.gz; do
    zcat "$page" > "$tmp/page.1" || fail "bad gzip: $page"
    grep -q '^\.SH OPTIONS' "$tmp/page.1" || fail "no OPTIONS section in $page"
  done
  zcat "$root/usr/share/man/man1/sapiens-cli-run.1.gz" > "$tmp/page.1"
  grep -qF -- '\-\-task' "$tmp/page.1" || fail "run's man page lacks --task"
fi

step "installed binaries do not depend on the build tree"
for exe in "$root"/usr/bin/*; do
  rpaths="$(readelf -d "$exe" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\2/p')"
  if [ -n "$rpaths" ]; then
    case "$rpaths" in
      *"$build"*|*"$source"*) fail "$(basename "$exe") has a build-tree RPATH/RUNPATH: $rpaths" ;;
      *) echo "note: $(basename "$exe") has RPATH/RUNPATH $rpaths" ;;
    esac
  fi
done
# Every library resolves from the system (no LD_LIBRARY_PATH).
libs="$(ldd "$root/usr/bin/sapiens-cli")"
if grep -q "not found" <<<"$libs"; then
  echo "$libs" >&2; fail "sapiens-cli has unresolved libraries"
fi

# The installed tree alone: no variable may point into the build or source tree, no checkpoint may be
# found, and the per-user fallback (generating demo weights into ~/.local/share) must not be taken.
cli="$root/usr/bin/sapiens-cli"
run_env=(env -u SAPIENS_DEMO_WEIGHTS_DIR -u SAPIENS_RESOURCE_DIR -u XDG_DATA_HOME -u SAPIENS_NUM_THREADS
         HOME="$tmp/home" SAPIENS_CHECKPOINT_ROOT="$tmp/no-checkpoints" SAPIENS_LOG_DIR="$tmp/logs"
         OMP_WAIT_POLICY=PASSIVE)
mkdir -p "$tmp/home" "$tmp/no-checkpoints"

step "sapiens-cli --version"
out="$("${run_env[@]}" "$cli" --version)"
echo "$out"
[[ "$out" == "sapiens-cli $version"* ]] || fail "--version printed '$out'"

step "sapiens-cli run --task seg on the installed sample"
rc=0
"${run_env[@]}" "$cli" --threads 2 run "$share/samples/astronaut.png" --task seg --output "$tmp/run" \
  > "$tmp/run.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/run.log" >&2; fail "sapiens-cli run exited with $rc"; }
results="$tmp/run/results.json"
[ -s "$results" ] || { cat "$tmp/run.log" >&2; fail "no results.json"; }
[ -s "$tmp/run/astronaut.seg.png" ] || fail "no astronaut.seg.png"
grep -q '"succeeded": 1' "$results" || { cat "$results" >&2; fail "the picture did not succeed"; }
grep -q '"demo_weights": true' "$results" || fail "results.json does not record the demo weights"
weights="$share/demo-weights/seg/sapiens2_demo_seg.safetensors"
grep -qF "\"path\": \"$weights\"" "$results" \
  || { grep '"path"' "$results" >&2; fail "the run did not use the installed demo weights $weights"; }
[ ! -e "$tmp/home/.local/share/sapiens2-studio/demo-weights" ] || fail "the run generated demo weights in HOME"
step "ok"
