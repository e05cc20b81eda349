#!/usr/bin/env bash
# Install the launcher, the AppStream metainfo and the icon for the current user, pointing the launcher
# at the given neffbench executable:  bash packaging/install-desktop.sh /path/to/venv/bin/neffbench
# Honours XDG_DATA_HOME (default ~/.local/share). Run it again after moving the virtualenv.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
exe="${1:-}"
if [ -z "$exe" ]; then
  echo "usage: $0 PATH-TO-NEFFBENCH-EXECUTABLE" >&2
  exit 2
fi
if [ ! -x "$exe" ]; then
  echo "$exe is not an executable file; run 'make setup' first, or pass the path of the neffbench command." >&2
  exit 1
fi
exe="$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
apps="$data/applications"
icons="$data/icons/hicolor/scalable/apps"
metainfo="$data/metainfo"
mkdir -p "$apps" "$icons" "$metainfo"

# Exec must be absolute: a launcher does not see the virtualenv's PATH. It is quoted, and characters the
# desktop entry spec would need escaped twice are refused rather than half-escaped.
case "$exe" in
  *[\"\`\$\\]*) echo "The path $exe contains a quote, backquote, dollar or backslash; install from a plainer path." >&2; exit 1 ;;
esac
while IFS= read -r line; do
  case "$line" in
    Exec=*) printf 'Exec="%s"\n' "$exe" ;;
    *) printf '%s\n' "$line" ;;
  esac
done < "$here/neffbench.desktop" > "$apps/neffbench.desktop.tmp"
mv "$apps/neffbench.desktop.tmp" "$apps/neffbench.desktop"
install -m 644 "$repo/resources/icons/neffbench.svg" "$icons/neffbench.svg"
install -m 644 "$here/io.github.neffbench.NeffBench.metainfo.xml" "$metainfo/io.github.neffbench.NeffBench.metainfo.xml"

if command -v desktop-file-validate >/dev/null 2>&1; then
  desktop-file-validate "$apps/neffbench.desktop"
fi
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$apps" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$data/icons/hicolor" 2>/dev/null || true
echo "Installed $apps/neffbench.desktop (runs $exe), its icon and metainfo."
