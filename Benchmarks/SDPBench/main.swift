// Parse + write speed of a typical browser offer. Run: swift run -c release SDPBench
// Arguments: [ops per round, default 20000] [parse|write|parse+write: run only that measurement,
// e.g. under `valgrind --tool=callgrind` to count instructions of one operation].
import Foundation
import WCSMedia

let corpusPath = "../shared/corpus/sdp/aiortc-chrome-video-offer.sdp"
let embedded = """
  v=0\r
  o=- 4611731400430051336 2 IN IP4 127.0.0.1\r
  s=-\r
  t=0 0\r
  a=group:BUNDLE 0\r
  a=msid-semantic: WMS s\r
  m=video 9 UDP/TLS/RTP/SAVPF 96 97\r
  c=IN IP4 0.0.0.0\r
  a=rtcp:9 IN IP4 0.0.0.0\r
  a=candidate:1 1 udp 2122260223 192.168.1.10 50000 typ host generation 0 network-id 1\r
  a=ice-ufrag:Qx1b\r
  a=ice-pwd:5d1yRMd0HYzmtBJmB2qPsgW4\r
  a=fingerprint:sha-256 1D:E4:43:19:7B:6E:8F:31:A7:BF:B8:BF:73:14:4C:9A:E0:EA:76:3E:8D:05:1E:61:4F:0A:05:64:1C:27:0D:A6\r
  a=setup:actpass\r
  a=mid:0\r
  a=extmap:3 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time\r
  a=sendrecv\r
  a=rtcp-mux\r
  a=rtcp-rsize\r
  a=rtpmap:96 VP8/90000\r
  a=rtcp-fb:96 nack\r
  a=rtcp-fb:96 nack pli\r
  a=rtpmap:97 rtx/90000\r
  a=fmtp:97 apt=96\r
  a=ssrc-group:FID 1 2\r
  a=ssrc:1 cname:c\r
  a=ssrc:2 cname:c\r

  """

let fromCorpus = try? String(contentsOfFile: corpusPath, encoding: .utf8)
let text = fromCorpus ?? embedded
print("input: \(fromCorpus != nil ? corpusPath : "embedded offer"), \(text.utf8.count) bytes")

/// CPU time of this thread in ns: unlike wall time it does not count the time the scheduler
/// gives to other processes on a shared machine.
func threadCPUNanoseconds() -> UInt64 {
  var ts = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
  return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Best of `rounds` rounds (wall and thread CPU time), so other processes on a shared machine
/// inflate the figure less.
func measure(_ label: String, iterations: Int, rounds: Int = 7, _ body: () -> Int) {
  var sink = 0
  for _ in 0..<(iterations / 10) { sink &+= body() }  // warm-up
  var bestWall = Double.infinity
  var bestCPU = Double.infinity
  for _ in 0..<rounds {
    let wall = DispatchTime.now().uptimeNanoseconds
    let cpu = threadCPUNanoseconds()
    for _ in 0..<iterations { sink &+= body() }
    bestCPU = min(bestCPU, Double(threadCPUNanoseconds() - cpu) / Double(iterations))
    bestWall = min(
      bestWall, Double(DispatchTime.now().uptimeNanoseconds - wall) / Double(iterations))
  }
  print(
    String(
      format: "%@: %.2f µs/op CPU, %.2f µs/op wall (best of %d rounds of %d ops, sink %d)",
      label, bestCPU / 1000, bestWall / 1000, rounds, iterations, sink))
}

guard let parsed = try? SDPParser.parse(text).description else {
  print("input does not parse")
  exit(1)
}
let n = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 20_000
let only = CommandLine.arguments.dropFirst(2).first
func wanted(_ label: String) -> Bool { only == nil || only == label }
if wanted("parse") {
  measure("parse", iterations: n) { (try? SDPParser.parse(text))?.description.media.count ?? 0 }
}
if wanted("write") { measure("write", iterations: n) { SDPWriter.write(parsed).utf8.count } }
if wanted("parse+write") {
  measure("parse+write", iterations: n) {
    guard let d = try? SDPParser.parse(text).description else { return 0 }
    return SDPWriter.write(d).utf8.count
  }
}
