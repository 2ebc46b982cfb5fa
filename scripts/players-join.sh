#!/bin/bash
# usage: scripts/players-join.sh [BIN_DIR] [OUT_DIR] [PLAYERS]
# Key frame delivery to players joining at once: wcs-local-server (release), one 640x360
# Streamer, then PLAYERS (default 8) Players started together 2.5 s later; prints each player's
# time to PLAYING, to its first remote frame and its frames decoded, and the relay's per-leg
# statistics lines (PLIs received, forwarded and deferred, key frames out).
# Build first (one product per call):
#   for p in wcs-local-server Streamer Player; do swift build -c release --product $p; done
bin=${1:-.build/release}
out=${2:-/tmp/players-join}
count=${3:-8}
mkdir -p "$out"
rm -f "$out"/*.log
port=$((20000 + RANDOM % 20000))
"$bin/wcs-local-server" --ws-port $port --http-port $((port + 1)) --records "$out/records" \
  > "$out/server.log" 2>&1 &
server=$!
sleep 0.5
"$bin/Streamer" --url ws://127.0.0.1:$port/join --width 640 --height 360 --duration 14 \
  > "$out/streamer.log" 2>&1 &
streamer=$!
sleep 2.5
players=()
for i in $(seq 1 "$count"); do
  "$bin/Player" --url ws://127.0.0.1:$port/join --duration 8 --out "$out/p$i" \
    > "$out/player$i.log" 2>&1 &
  players+=($!)
done
wait "${players[@]}"
for i in $(seq 1 "$count"); do
  echo "player $i: $(grep -E 'Time to (PLAYING|first remote frame)|Frames received' \
    "$out/player$i.log" | tr -s ' ' | tr '\n' ' ')"
done
wait $streamer
kill $server
wait $server 2>/dev/null
grep -E "(publisher|player) 'join'" "$out/server.log" | sed 's/^media [^:]*: //'
