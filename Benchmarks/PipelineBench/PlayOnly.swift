import Foundation
import Synchronization
import WCSMedia

// Profiling the play path (the wall-clock CPU of part 2 is noisy on a shared machine; the
// share of libvpx/libopus in the play process's own samples is not):
//   swift run -c release PipelineBench play-only 22 &   # prints its pid, measures 22 s
//   perf record -e cpu-clock -F 4000 -g -p <pid> -o play.data -- sleep 8
//   perf report -i play.data --no-children --sort dso     # libvpx/libopus vs the rest
//   perf stat -e task-clock,context-switches,page-faults -p <pid> -- sleep 5
//   strace -c -f -p <pid>                                 # syscalls (wake-ups) per second
// (`publish-only` does the same for the publish path of part 1.)
// and the same on `decode-only`, whose samples are ~95 % libvpx/libopus: the play path's CPU
// beyond raw decoding is about (raw share / play share) - 1, counting libvpx, libopus and the
// copy out of libvpx (VP8Decoder) as decoding. At 640x480 callgrind's slowdown (tens of times)
// would keep the player from decoding 30 pictures a second in real time, which changes what the
// play path does (late packets, key-frame requests); at 160x120 it keeps up, so
// `scripts/play-instructions.sh` counts the path's instructions per packet beyond the codec calls
// there (`PIPELINEBENCH_SIZE=160x120`). `raw-receive` (RawReceive.swift) is the floor to compare
// the wall-clock figure with.

/// `PipelineBench play-only [seconds] [queue]`: only the play path (one player of the child
/// publisher) for `span` seconds, then prints its CPU per decoded picture. With `queue`, video
/// is always decoded on the track's queue (`decodesVideoOnLoop` false), for comparing both
/// with one build.
func runPlayOnly(duration span: Double, decodesVideoOnLoop: Bool) throws -> Never {
  let loop = EventLoop(label: "PipelineBench.play")
  var configuration = NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback)
  configuration.decodesVideoOnLoop = decodesVideoOnLoop
  let backend = NativeMediaBackend(configuration: configuration)
  let publisher = try PeerProcess(mode: "peer-publisher")
  let player = try addPlayer(backend: backend, peer: publisher)
  try waitUntil("player renders") { player.renderer.count.withLock { $0 } >= 30 }
  Thread.sleep(forTimeInterval: 1)
  let before = statistics(player.connection)
  let cpuStart = processCPUSeconds()
  let wakeStart = processWakeUps()
  print("play-only: measuring \(Int(span)) s (pid \(getpid()))")
  Thread.sleep(forTimeInterval: span)
  let cpu = processCPUSeconds() - cpuStart
  let wakeUps = processWakeUps() - wakeStart
  let after = statistics(player.connection)
  let decoded = after.framesDecoded - before.framesDecoded
  let codec =
    after.videoDecodeCPUTime + after.audioDecodeCPUTime - before.videoDecodeCPUTime
    - before.audioDecodeCPUTime
  print(
    "play-only: \(decoded) pictures, \(seconds(cpu)) CPU, \(milliseconds(cpu / Double(max(1, decoded)))) per picture, \(percent((cpu - codec) / max(codec, 1e-9))) beyond the codec calls"
  )
  let videoCodec = after.videoDecodeCPUTime - before.videoDecodeCPUTime
  let audioCodec = after.audioDecodeCPUTime - before.audioDecodeCPUTime
  let packets = after.summary.packetsReceived - before.summary.packetsReceived
  let bytes = after.summary.bytesReceived - before.summary.bytesReceived
  print(
    "play-only: \(packets) packets, \(Int(Double(bytes) * 8 / span / 1000)) kbit/s; VP8 \(milliseconds(videoCodec / Double(max(1, decoded)))) per picture, Opus \(milliseconds(audioCodec / span)) per second"
  )
  player.connection.close()
  publisher.stop()
  loop.shutdown()
  // Priced after the player stopped, so none of its CPU counts in the idle loop's.
  let price = measureWakeUpPrice(span: 3)
  print(
    "play-only: \(Int(Double(wakeUps) / span)) wake-ups a second at \(String(format: "%.1f µs", price * 1e6)) each (an idle loop's, 20 ms sleeps): \(percent(Double(wakeUps) * price / max(codec, 1e-9))) of the codec calls; \(percent((cpu - codec - Double(wakeUps) * price) / max(codec, 1e-9))) beyond them besides"
  )
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

/// `PipelineBench publish-only [seconds]`: only the publish path of part 1 (one publish to the
/// child sink) for `span` seconds, for the same profilers; prints its CPU per published picture.
func runPublishOnly(duration span: Double) throws -> Never {
  let run = try measurePublish(announce: "publish-only")
  let beyond = (run.cpu - run.sourceCPU - run.codecCPU) / max(run.codecCPU, 1e-9)
  print(
    "publish-only: \(run.frames) pictures, \(seconds(run.cpu)) CPU, \(milliseconds(run.cpu / Double(max(1, run.frames)))) per picture, \(percent(beyond)) beyond the codec calls (sources excluded)"
  )
  exit(0)
}

/// `PipelineBench idle-loop [seconds] [period ms]`: an `EventLoop` whose only work is a timer
/// firing every `period` (default 5 ms), for the cost of one wake-up on this machine.
func runIdleLoop(duration span: Double, period: Duration) -> Never {
  let run = measureIdleLoop(period: period, span: span, settle: 1)
  print(
    "idle-loop: \(run.wakeUps) wake-ups, \(seconds(run.cpu)) CPU, \(String(format: "%.1f µs", run.cpu / Double(max(1, run.wakeUps)) * 1e6)) per wake-up"
  )
  exit(0)
}

/// A timer that re-arms itself every `period` on its loop.
final class IdleTicker: Sendable {
  let loop: EventLoop
  let period: Duration
  let fired = Mutex(0)

  init(loop: EventLoop, period: Duration) {
    self.loop = loop
    self.period = period
  }

  func arm() {
    loop.schedule(after: period) {
      self.fired.withLock { $0 += 1 }
      self.arm()
    }
  }
}
