#!/bin/bash
# usage: scripts/play-cache-misses.sh [package dir] [label]
# The play path's code footprint per received RTP packet: callgrind with its cache simulation
# (L1i 32 KiB, L1d 48 KiB, 64-byte lines, as on this machine), codec calls left out of the counts
# as in play-instructions.sh, `play-only` at 160x120 for 5 s and 25 s, difference per packet.
# Prints instructions (Ir), L1 instruction-cache misses (I1mr) and L1 data read misses (D1mr), by
# where the code lives (the SDK binary, libsrtp + NSS, libc, the Swift runtime) and by function.
# Why: between two packets libvpx and the kernel evict the L1 caches, so each packet runs the
# path's code cold; the lines it touches (I1mr) cost more than its instructions on this nested VM.
# Takes ~3 min; run it on a quiet machine (a loaded one keeps callgrind from real time, and late
# pictures change the path).
set -e
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-.}; LABEL=${2:-run}
cd "$DIR"
swift build -c release --product PipelineBench 2>&1 | grep -E "error|Build" | tail -2
OUT=/tmp/cgcache-$LABEL; mkdir -p $OUT
cp .build/release/PipelineBench $OUT/PB && strip --strip-debug $OUT/PB
for T in 5 25; do
  PIPELINEBENCH_SIZE=160x120 timeout 900 valgrind --tool=callgrind --cache-sim=yes \
    --I1=32768,8,64 --D1=49152,12,64 --callgrind-out-file=$OUT/cg$T.out \
    '--toggle-collect=$s9WCSCodecs10VP8DecoderC16decodeVideoFrame*' \
    '--toggle-collect=$s9WCSCodecs11OpusDecoderC6decode*' \
    '--toggle-collect=$s9WCSCodecs11OpusDecoderC9decodeFEC*' --collect-atstart=yes \
    $OUT/PB play-only $T > $OUT/cg$T.log 2>&1 || true
  grep "play-only:" $OUT/cg$T.log | tail -2
  callgrind_annotate --show=Ir,I1mr,D1mr --sort=I1mr --threshold=100 $OUT/cg$T.out 2>/dev/null \
    | grep -E "^ *[0-9,]+ \(" > $OUT/exclusive$T.txt
  callgrind_annotate --tree=caller --threshold=100 $OUT/cg$T.out 2>/dev/null > $OUT/callers$T.txt
done
SCRIPTS=$SCRIPTS python3 - "$OUT" <<'PY'
import sys, re, subprocess, os
sys.path.insert(0, os.environ["SCRIPTS"])
from callgrind_packets import packets
out = sys.argv[1]

def load(path):
    rows = {}
    for line in open(path):
        parts = re.sub(r"\(\s*[\d.]+%\)", "", line).split()
        try:
            numbers = [int(parts[i].replace(",", "")) for i in range(3)]
        except (ValueError, IndexError):
            continue
        name = " ".join(parts[3:])
        old = rows.get(name, [0, 0, 0])
        rows[name] = [old[i] + numbers[i] for i in range(3)]
    return rows

p = packets(f"{out}/callers25.txt") - packets(f"{out}/callers5.txt")
late, early = load(f"{out}/exclusive25.txt"), load(f"{out}/exclusive5.txt")
rows = {k: [v[i] - early.get(k, [0, 0, 0])[i] for i in range(3)] for k, v in late.items()}
total = rows.pop("PROGRAM TOTALS", [0, 0, 0])
print(f"packets {p}; per packet beyond the codec calls: "
      f"Ir {total[0] / p:,.0f}  I1mr {total[1] / p:,.0f}  D1mr {total[2] / p:,.0f}")

def place(name):
    if "/PB]" in name: return "SDK (PipelineBench binary)"
    if any(s in name for s in ("libsrtp", "libnss", "libsoftokn", "libfreebl", "libnspr", "libplc", "libplds")):
        return "libsrtp + NSS"
    if "libc.so" in name or "ld-linux" in name: return "libc, ld.so"
    if "/opt/swift/" in name: return "Swift runtime, stdlib, Foundation"
    return "other"

groups = {}
for name, v in rows.items():
    g = groups.setdefault(place(name), [0, 0, 0])
    for i in range(3): g[i] += v[i]
for name, v in sorted(groups.items(), key=lambda x: -x[1][1]):
    print(f"  {name:36} Ir {v[0] / p:8,.0f}  I1mr {v[1] / p:6,.0f}  D1mr {v[2] / p:5,.0f}")
print("--- functions by I1 misses per packet (Ir, I1mr, D1mr)")
top = sorted(rows.items(), key=lambda x: -x[1][1])[:40]
names = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(k for k, _ in top),
                       capture_output=True, text=True).stdout.split("\n")
for (k, v), n in zip(top, names):
    print(f"{v[0] / p:8,.0f} {v[1] / p:6.1f} {v[2] / p:6.1f}  {n[:140]}")
PY
