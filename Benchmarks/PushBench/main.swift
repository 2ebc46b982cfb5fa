// What an `rtmpUrl` re-publication (issue 28) costs the local server's push thread per second
// of media, beyond the network: Opus → AAC (libopus decode + libavcodec's AAC encoder, 128
// kbit/s stereo) and the FLV muxing of H.264 access units as AVC plus the AAC packets
// (`RTMPOutput`, here to /dev/null instead of an rtmp:// server).
// Run: `swift run -c release PushBench [--seconds 20]`. Figures are the calling thread's CPU
// time (CLOCK_THREAD_CPUTIME_ID), fair on a shared machine.
import BenchSupport
import Foundation
import WCSMedia

let seconds = option("--seconds", default: 20)

/// `count` 20 ms Opus packets (stereo, 64 kbit/s) of a 440 Hz tone.
func opusPackets(_ count: Int) throws -> [[UInt8]] {
  let encoder = try OpusEncoder(configuration: .init(channels: 2, bitrate: 64_000))
  var packets: [[UInt8]] = []
  for index in 0..<count {
    var samples = [Int16](repeating: 0, count: 1920)
    for sample in 0..<960 {
      let time = Double(index * 960 + sample) / 48_000
      let value = Int16(8000 * sin(2 * Double.pi * 440 * time))
      samples[2 * sample] = value
      samples[2 * sample + 1] = value
    }
    packets.append(try encoder.encode(PCMAudioFrame(samples: samples, channels: 2)))
  }
  return packets
}

/// `count` access units of the virtual camera at `width` × `height`, 30 fps, as NAL units.
func accessUnits(width: Int, height: Int, count: Int) throws -> [(
  units: [[UInt8]], isKeyFrame: Bool
)] {
  let camera = VirtualCamera(width: width, height: height)
  let encoder = try H264Encoder(
    configuration: .init(width: width, height: height, bitrateKbps: width >= 1280 ? 2500 : 800))
  var result: [([[UInt8]], Bool)] = []
  for index in 0..<count {
    for frame in try encoder.encode(camera.frame(index), timestamp: UInt32(index * 3000)) {
      result.append((H264AnnexB.nalUnits(frame.data).map(Array.init), frame.isKeyFrame))
    }
  }
  return result
}

let packets = try opusPackets(seconds * 50)
var aac: [OpusToAACTranscoder.Packet] = []
let transcoder = try OpusToAACTranscoder()
let transcodeStart = clockSeconds(CLOCK_THREAD_CPUTIME_ID)
for (index, packet) in packets.enumerated() {
  aac += try transcoder.add(packet, ticks: Int64(index * 960))
}
let transcodeSeconds = clockSeconds(CLOCK_THREAD_CPUTIME_ID) - transcodeStart
print(
  String(
    format: "Opus→AAC  %d s of stereo audio: %.1f µs per 20 ms packet, %.2f %% of a core",
    seconds, transcodeSeconds / Double(packets.count) * 1e6,
    transcodeSeconds / Double(seconds) * 100))

for (width, height) in [(640, 480), (1280, 720)] {
  let units = try accessUnits(width: width, height: height, count: seconds * 30)
  guard let first = units.first(where: \.isKeyFrame) else { continue }
  let sps = first.units.filter { $0.first.map { $0 & 0x1F } == 7 }
  let pps = first.units.filter { $0.first.map { $0 & 0x1F } == 8 }
  let output = try RTMPOutput(url: "/dev/null", interrupt: OutputInterrupt())
  try output.start(
    video: .init(
      width: width, height: height, sequenceParameterSets: sps, pictureParameterSets: pps),
    audio: (transcoder.audioSpecificConfig, 48_000, 2, transcoder.frameSize))
  let bytes = units.reduce(0) { $0 + $1.units.reduce(0) { $0 + $1.count } }
  let muxStart = clockSeconds(CLOCK_THREAD_CPUTIME_ID)
  var audioIndex = 0
  for (index, unit) in units.enumerated() {
    try output.writeVideo(
      nalUnits: unit.units, isKeyFrame: unit.isKeyFrame, ticks: Int64(index * 3000),
      durationTicks: 3000)
    while audioIndex < aac.count, aac[audioIndex].ticks * 90_000 / 48_000 <= Int64(index * 3000) {
      try output.writeAudio(aac[audioIndex])
      audioIndex += 1
    }
  }
  let muxSeconds = clockSeconds(CLOCK_THREAD_CPUTIME_ID) - muxStart
  output.close()
  print(
    String(
      format:
        "FLV mux   %dx%d H.264 (%.0f kbit/s) + AAC, %d s: %.1f µs per access unit, %.2f %% of a core",
      width, height, Double(bytes * 8) / Double(seconds) / 1000, seconds,
      muxSeconds / Double(units.count) * 1e6, muxSeconds / Double(seconds) * 100))
}
