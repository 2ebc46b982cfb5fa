#!/bin/bash
# usage: scripts/play-instructions.sh [package dir] [label]
# Deterministic instruction counts of the play path (callgrind), per received RTP packet, with the
# codec calls left out (collection is toggled off inside VP8Decoder.decodeVideoFrame and
# OpusDecoder.decode*): builds PipelineBench (release), strips its DWARF (valgrind 3.19 cannot read
# Swift's DWARF 5), runs `play-only` at 160x120 under callgrind for 5 s and 25 s, and prints the
# difference (20 s of steady state) per packet: the total beyond the codecs, then the SDK's
# functions by inclusive count and all functions by exclusive count.
# Takes ~1.5 min; the counts repeat within ~1-2 % (startup differences), whatever else runs.
set -e
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-.}; LABEL=${2:-run}
cd "$DIR"
swift build -c release --product PipelineBench 2>&1 | grep -E "error|Build" | tail -2
OUT=/tmp/cgplay-$LABEL; mkdir -p $OUT
cp .build/release/PipelineBench $OUT/PB && strip --strip-debug $OUT/PB
for T in 5 25; do
  PIPELINEBENCH_SIZE=160x120 timeout 600 valgrind --tool=callgrind --callgrind-out-file=$OUT/cg$T.out \
    '--toggle-collect=$s9WCSCodecs10VP8DecoderC16decodeVideoFrame*' \
    '--toggle-collect=$s9WCSCodecs11OpusDecoderC6decode*' \
    '--toggle-collect=$s9WCSCodecs11OpusDecoderC9decodeFEC*' --collect-atstart=yes \
    $OUT/PB play-only $T > $OUT/cg$T.log 2>&1 || true
  grep "play-only:" $OUT/cg$T.log | tail -2
  for MODE in yes no; do
    callgrind_annotate --inclusive=$MODE --threshold=100 $OUT/cg$T.out 2>/dev/null | grep -E "^ *[0-9,]+ \(" | sed -E 's/ \( *[0-9.]*%\)//' | awk '{n=$1; gsub(",","",n); $1=""; print n "\t" $0}' > $OUT/$MODE$T.tsv
  done
  callgrind_annotate --tree=caller --threshold=100 $OUT/cg$T.out 2>/dev/null > $OUT/callers$T.txt
done
SCRIPTS=$SCRIPTS python3 - "$OUT" <<'PY'
import sys,re,collections,subprocess,os
sys.path.insert(0, os.environ['SCRIPTS'])
from callgrind_packets import packets, calls
out=sys.argv[1]
def load(p):
    d=collections.Counter()
    for l in open(p):
        n,name=l.split('\t',1); d[name.strip()]+=int(n)
    return d
p=packets(out+'/callers25.txt')-packets(out+'/callers5.txt')
def show(mode,filt,top):
    a,b=load(f'{out}/{mode}25.tsv'),load(f'{out}/{mode}5.tsv')
    d={k:a[k]-b.get(k,0) for k in a}
    items=[(k,v) for k,v in sorted(d.items(),key=lambda x:-x[1]) if filt(k) and k!='PROGRAM TOTALS'][:top]
    dem=subprocess.run(['swift','demangle','--simplified','--compact'],input='\n'.join(k for k,_ in items),capture_output=True,text=True).stdout.split('\n')
    for (k,v),n in zip(items,dem): print(f'{v/p:9.0f}  {n[:150]}')
    return a['PROGRAM TOTALS']-b['PROGRAM TOTALS']
a,b=load(f'{out}/yes25.tsv'),load(f'{out}/yes5.tsv')
tot=a['PROGRAM TOTALS']-b['PROGRAM TOTALS']
print(f'packets {p}; instructions beyond the codec calls per packet: {tot/p:,.0f}')
print('calls per packet: ' + ', '.join(f"{n} {(calls(out+'/callers25.txt',':'+n)-calls(out+'/callers5.txt',':'+n))/p:.1f}" for n in ['malloc','free','swift_allocObject','swift_retain','swift_release','swift_beginAccess']))
print('--- SDK functions, inclusive, per packet')
# The SDK's modules (WCSProtocols, WCSEventLoop, WCSEngine, ...) mangle as $s<length>WCS...
show('yes',lambda k: re.search(r'\$s\d+WCS', k) and 'partial apply' not in k,45)
print('--- all functions, exclusive, per packet')
show('no',lambda k: True,30)
PY
