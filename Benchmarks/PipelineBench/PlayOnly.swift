import Foundation
import WCSMedia

/// `PipelineBench play-only [seconds]`: only the play path (one player of the child
/// publisher) for `span` seconds, then prints its CPU per decoded picture. For profilers that
/// attribute the process's CPU to functions, e.g.
/// `perf record -e cpu-clock -g -F 2000 -p <pid>` or `perf stat -e task-clock,context-switches`
/// (kernel time of wake-ups included) and `strace -c -f -p <pid>` (syscalls per second).
func runPlayOnly(duration span: Double) throws -> Never {
  let loop = EventLoop(label: "PipelineBench.play")
  let backend = NativeMediaBackend(
    configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
  let publisher = try PeerProcess(mode: "peer-publisher")
  let player = try addPlayer(backend: backend, peer: publisher)
  try waitUntil("player renders") { player.renderer.count.withLock { $0 } >= 30 }
  Thread.sleep(forTimeInterval: 1)
  let before = statistics(player.connection)
  let cpuStart = processCPUSeconds()
  print("play-only: measuring \(Int(span)) s (pid \(getpid()))")
  Thread.sleep(forTimeInterval: span)
  let cpu = processCPUSeconds() - cpuStart
  let after = statistics(player.connection)
  let decoded = after.framesDecoded - before.framesDecoded
  print(
    "play-only: \(decoded) pictures, \(seconds(cpu)) CPU, \(milliseconds(cpu / Double(max(1, decoded)))) per picture"
  )
  player.connection.close()
  publisher.stop()
  loop.shutdown()
  exit(0)
}

/// `PipelineBench decode-only [seconds]`: only the raw loop of part 2 (VP8Decoder +
/// OpusDecoder over the same encoded stream, paced in real time) for `span` seconds, for the
/// same profilers, so their figures for the play path have a baseline.
func runDecodeOnly(duration span: Double) throws -> Never {
  let warmUp = 30
  let stream = try encodedStream(
    frames: warmUp + Int(span) * PipelineSettings.frameRate, audio: Int(span) * 50)
  print("decode-only: measuring \(Int(span)) s (pid \(getpid()))")
  let cpu = try measureRawDecode(stream, warmUp: warmUp, paced: true)
  let pictures = stream.video.count - warmUp
  print(
    "decode-only: \(pictures) pictures, \(seconds(cpu)) CPU, \(milliseconds(cpu / Double(max(1, pictures)))) per picture"
  )
  exit(0)
}
