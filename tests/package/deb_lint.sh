#!/usr/bin/env bash
# The package as a distribution would judge it, on a built .deb:
#   lintian -I --pedantic: fails on any error or warning tag, and on the tags of a release build that
#     is not hardened or stripped as Debian's are (hardening-*, binary-has-unneeded-section) or whose
#     strings are misspelt (spelling-error-in-binary); tags not ours to change are overridden with a
#     reason in packaging/lintian-overrides
#   hardening-check (devscripts) on every installed program: every line "yes" (control flow integrity:
#     see below)
#   appstreamcli validate and desktop-file-validate on the installed metainfo and .desktop (WITH_GUI=1)
# Usage: deb_lint.sh DEB WITH_GUI(0|1)
set -euo pipefail

deb="$1" with_gui="$2"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/sapiens-lint.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || fail "$1 is missing (scripts/install-deps installs $2)"; }
need lintian lintian
need hardening-check devscripts
if [ "$with_gui" = 1 ]; then
  need appstreamcli appstream
  need desktop-file-validate desktop-file-utils
fi

echo "--- lintian -I --pedantic $(basename "$deb")"
# (lintian says on stderr that it runs as root where it does; its tags go to stdout.)
lintian -I --pedantic --no-cfg "$deb" >"$tmp/lintian.txt" 2>"$tmp/lintian.err" || true
cat "$tmp/lintian.txt"
grep -v 'running with root privileges' "$tmp/lintian.err" >&2 || true
grep -q '^[A-Z]: ' "$tmp/lintian.txt" || [ ! -s "$tmp/lintian.txt" ] || fail "lintian printed no tags but: $(head -3 "$tmp/lintian.txt")"
bad="$(grep -E '^(E|W): |^[IP]: [^ ]+ (hardening-[a-z-]+|binary-has-unneeded-section) ' "$tmp/lintian.txt" || true)"
# lintian reads words out of the whole file, machine code included (where bytes such as 09 77 54 48 read
# "\twTH"): a misspelling counts where the word is in the program's strings (its data sections).
dpkg-deb -x "$deb" "$tmp/root"
while read -r word path; do
  objcopy -O binary --only-section=.rodata --only-section=.data --only-section=.data.rel.ro \
    "$tmp/root/$path" "$tmp/data.bin"
  strings -a "$tmp/data.bin" >"$tmp/strings.txt"  # (a file: grep -q on a pipe would SIGPIPE strings)
  if grep -qw -- "$word" "$tmp/strings.txt"; then
    bad+="${bad:+$'\n'}spelling-error-in-binary $word in the strings of /$path"
  else
    echo "note: '$word' in /$path is in machine code, not in a string: not a misspelling"
  fi
done < <(sed -n 's/^[IP]: [^ ]* spelling-error-in-binary \([^ ]*\) .*\[\(.*\)\]$/\1 \2/p' "$tmp/lintian.txt")
[ -z "$bad" ] || fail "lintian tags a release must not have:
$bad"

echo "--- hardening-check"
# Control flow integrity (x86 CET) is marked by a note the linker writes only when every object carries
# it, the C start files included; Debian 12's glibc is built without CET, so there no program gets the note
# (hardening-check says "no" for /usr/bin/ls too). Where a probe shows that, the check asks instead for the
# ENDBR64 markers -fcf-protection puts at the entry of every function that may be called indirectly.
echo 'int main(void) { return 0; }' >"$tmp/probe.c"
cet_note=1
cc -fcf-protection "$tmp/probe.c" -o "$tmp/probe" && readelf -n "$tmp/probe" >"$tmp/probe.notes"
if ! grep -q 'x86 feature: IBT, SHSTK' "$tmp/probe.notes"; then
  cet_note=0
  echo "note: this toolchain's start files lack the IBT/SHSTK property: checking ENDBR64 markers instead of the note"
fi
root="$tmp/root"
for program in "$root"/usr/bin/*; do
  name="$(basename "$program")"
  hardening-check "$program" >"$tmp/hardening.txt" 2>&1 || true
  cat "$tmp/hardening.txt"
  lines="$(tail -n +2 "$tmp/hardening.txt")"
  [ "$(grep -c . <<<"$lines")" -ge 7 ] || fail "hardening-check printed fewer checks than expected for $name"
  [ "$cet_note" = 1 ] || lines="$(grep -v 'Control flow integrity' <<<"$lines")"
  not_yes="$(grep -v ': yes' <<<"$lines" || true)"
  [ -z "$not_yes" ] || fail "$name is not hardened:
$not_yes"
  if [ "$cet_note" = 0 ]; then
    markers="$(LC_ALL=C grep -obUaP '\xf3\x0f\x1e\xfa' "$program" | wc -l)"
    echo " ENDBR64 markers: $markers"
    [ "$markers" -ge 1000 ] || fail "$name has $markers ENDBR64 markers: not built with -fcf-protection"
  fi
done

if [ "$with_gui" = 1 ]; then
  echo "--- appstreamcli validate"
  appstreamcli validate --no-net "$root"/usr/share/metainfo/*.metainfo.xml || fail "appstreamcli validate"
  echo "--- desktop-file-validate"
  out="$(desktop-file-validate "$root"/usr/share/applications/*.desktop 2>&1)" || fail "desktop-file-validate: $out"
  [ -z "$out" ] || fail "desktop-file-validate: $out"
fi
echo "--- package checks passed"
