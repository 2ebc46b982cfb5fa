#!/usr/bin/env bash
# scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]: runs one libFuzzer target for SECONDS.
# TARGET: sdp stun turn rtp rtcp vp8 wcs-client wcs-server websocket h264 stream call-media
# vp8-decoder ice pull (FuzzTarget in
# Fuzz/FuzzTargets). Builds Fuzz<Name> in release with -sanitize=fuzzer,address into
# .build/fuzz (apart from the normal build), then fuzzes with:
#   - .build/fuzz-corpus/TARGET: where libFuzzer keeps what it finds (the first corpus
#     directory, the only one it writes to);
#   - Tests/FuzzCorpusTests/FuzzCorpus/TARGET: the committed crash-regression corpus;
#   - ../shared/corpus/<dir> for the targets it has data for, read in place (never copied in).
# Crashes go to .build/fuzz-crashes/TARGET/; copy each, once fixed, into the committed corpus
# as crash-<what>. The last line printed is libFuzzer's final stats (execs, cov:).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]}
seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]}
shift 2
case "$target" in
  sdp) product=FuzzSDP; shared=(sdp) ;;
  stun) product=FuzzSTUN; shared=() ;;
  turn) product=FuzzTURN; shared=() ;;
  rtp) product=FuzzRTP; shared=(rtp-rtcp) ;;
  rtcp) product=FuzzRTCP; shared=(rtp-rtcp) ;;
  vp8) product=FuzzVP8; shared=() ;;
  wcs-client) product=FuzzWCSClient; shared=(wcs-ws) ;;
  wcs-server) product=FuzzWCSServer; shared=(wcs-ws) ;;
  websocket) product=FuzzWebSocket; shared=() ;;
  h264) product=FuzzH264; shared=() ;;
  stream) product=FuzzStream; shared=() ;;
  call-media) product=FuzzCallMedia; shared=() ;;
  vp8-decoder) product=FuzzVP8Decoder; shared=() ;;
  ice) product=FuzzICE; shared=() ;;
  pull) product=FuzzPull; shared=() ;;
  *) echo "unknown target '$target'" >&2; exit 64 ;;
esac
SWIFT=${SWIFT:-swift}
scratch=.build/fuzz
mkdir -p .build
# -enable-testing: the targets reach internal parsers with @testable import.
"$SWIFT" build -c release --scratch-path "$scratch" --product "$product" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -enable-testing \
  >"$scratch-$product.log" 2>&1 || { tail -40 "$scratch-$product.log"; exit 1; }
binary=$("$SWIFT" build -c release --scratch-path "$scratch" --show-bin-path)/$product

work=.build/fuzz-corpus/$target
crashes=.build/fuzz-crashes/$target
mkdir -p "$work" "$crashes"
corpora=("$work" "Tests/FuzzCorpusTests/FuzzCorpus/$target")
for dir in "${shared[@]}"; do
  [ -d "../shared/corpus/$dir" ] && corpora+=("../shared/corpus/$dir")
done
# One process, one job: two cores are shared. Leaks are not findings here (caches live for the
# process on purpose); -rss_limit_mb bounds a runaway allocation, which is one.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} "$binary" "${corpora[@]}" \
  -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$crashes/" "$@"
