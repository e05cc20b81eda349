#!/usr/bin/env bash
# Qt's xcb/offscreen platforms need a few shared libraries that minimal Debian/Ubuntu images lack,
# and the suite's real-window test needs Xvfb. As root with apt, install what is missing;
# otherwise say exactly what is missing (only the Qt libraries are required).
#
# With --window (make run) only what the window needs: Qt's libraries and those of its xcb plugin, the
# window on X11 (a desktop, ssh -X, neffbench remote); a server image such as the Deep Learning AMI's
# Ubuntu lacks libxcb-cursor0, without which Qt aborts. Not root: the exact install line, and neffbench
# itself names what is missing when it starts.
set -u
required=(libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 libglib2.0-0)
xcb=(libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xinerama0
     libxcb-shape0 libxcb-randr0 libxkbcommon-x11-0)
xcb_rpm=(xcb-util-cursor xcb-util-wm xcb-util-keysyms xcb-util-image xcb-util-renderutil libxkbcommon-x11)
# For the tests that open a real window under Xvfb, validate the desktop file, and show the window over
# ssh -X (a throwaway sshd on 127.0.0.1) and over VNC (neffbench remote); without them those tests skip
# and say why.
optional=(xvfb xauth "${xcb[@]}" desktop-file-utils openssh-server openssh-client x11vnc)
if [ "${1:-}" = "--window" ]; then
  optional=("${xcb[@]}")
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  if command -v rpm >/dev/null 2>&1 && [ "${1:-}" = "--window" ]; then
    mapfile -t lack < <(for p in "${xcb_rpm[@]}"; do rpm -q "$p" >/dev/null 2>&1 || echo "$p"; done)
    if [ ${#lack[@]} -gt 0 ] && [ "$(id -u)" -eq 0 ] && command -v dnf >/dev/null 2>&1; then
      echo "Installing what the window needs on X11: ${lack[*]}"
      dnf install -y -q "${lack[@]}" >/dev/null || echo "Could not install ${lack[*]}: the window may not open."
    elif [ ${#lack[@]} -gt 0 ]; then
      echo "The window on X11 needs: sudo dnf install -y ${lack[*]}"
    fi
    exit 0
  fi
  echo "Not a Debian-like system: make sure Qt's libraries (EGL, GL, xkbcommon, fontconfig, dbus, glib) are installed."
  exit 0
fi
missing() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t need < <(missing "${required[@]}")
mapfile -t want < <(missing "${optional[@]}")
[ ${#need[@]} -eq 0 ] && [ ${#want[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  if [ "${1:-}" = "--window" ]; then
    echo "Installing system packages for the window (Qt and its X11 platform): ${need[*]} ${want[*]}"
  else
    echo "Installing system packages for Qt, Xvfb, the desktop-file check, ssh -X and VNC: ${need[*]} ${want[*]}"
  fi
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" "${want[@]}" >/dev/null; then
    exit 0
  fi
  [ ${#need[@]} -eq 0 ] && { echo "Could not install ${want[*]}: the Xvfb, ssh -X and VNC tests will skip."; exit 0; }
  echo "Could not install the Qt libraries ${need[*]}."
  exit 1
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "Qt needs these system packages, which are missing: ${need[*]}"
  echo "Install them with: sudo apt-get install ${need[*]}"
  exit 1
fi
if [ "${1:-}" = "--window" ]; then
  echo "The window on X11 (a desktop, ssh -X, neffbench remote) needs: sudo apt-get install -y ${want[*]}"
  echo "  (on Amazon Linux: sudo dnf install -y ${xcb_rpm[*]})"
  exit 0
fi
echo "Optional, for the tests that open a real window under Xvfb, over ssh -X and over VNC, and validate the desktop file: sudo apt-get install ${want[*]}"
exit 0
