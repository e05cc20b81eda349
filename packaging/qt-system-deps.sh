#!/usr/bin/env bash
# Qt's xcb/offscreen platforms need a few shared libraries that minimal Debian/Ubuntu images lack.
# As root with apt, install the missing ones; otherwise say exactly what is missing.
set -u
libs=(libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 libglib2.0-0)
missing=()
for p in "${libs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "Not a Debian-like system: make sure Qt's libraries (EGL, GL, xkbcommon, fontconfig, dbus, glib) are installed."
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Qt system libraries: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit $?
fi
echo "Qt needs these system packages, which are missing: ${missing[*]}"
echo "Install them with: sudo apt-get install ${missing[*]}"
exit 1
