#!/usr/bin/env bash
# Installs what the build and the tests need on Debian, once: apt packages that are missing and
# Python packages for the interop peers. Quiet when everything is present; works as root or
# through sudo. Usage: scripts/install-deps.sh [build|test|demo]
set -euo pipefail
what=${1:-test}

apt_build=(pkg-config libwebsockets-dev libssl-dev libsrtp2-dev libopus-dev libvpx-dev libusrsctp-dev
  libavformat-dev libavcodec-dev libswscale-dev libswresample-dev libavutil-dev libyuv-dev
  libpulse-dev libasound2-dev libxcb1-dev libxcb-shm0-dev libturbojpeg0-dev libsdl2-dev libpng-dev libre-dev
  libopenh264-dev)
apt_test=(ffmpeg openssl coturn forensics-samples-files pulseaudio pulseaudio-utils xvfb
  x11-xserver-utils chromium baresip-core nftables iproute2 sway
  gir1.2-gst-rtsp-server-1.0 python3-gst-1.0 gstreamer1.0-plugins-ugly gstreamer1.0-plugins-bad
  nginx-light libnginx-mod-rtmp kamailio)
apt_demo=(ffmpeg forensics-samples-files)
pip_test=(aiortc)

packages=("${apt_build[@]}")
case "$what" in
  test) packages+=("${apt_test[@]}") ;;
  demo) packages+=("${apt_demo[@]}") ;;
  build) ;;
  *) echo "usage: $0 [build|test|demo]" >&2; exit 2 ;;
esac

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ "$what" = test ]; then
  py=${PYTHON:-python3}
  for p in "${pip_test[@]}"; do
    if ! "$py" -c "import $p" 2>/dev/null; then
      echo "install-deps: pip install $p"
      "$py" -m pip install -q "$p"
    fi
  done
fi
