// Prints codec and payload-format speed figures. Run: swift run -c release CodecBench
import Foundation
import WCSMedia

func seconds(_ body: () throws -> Void) rethrows -> Double {
  let start = DispatchTime.now().uptimeNanoseconds
  try body()
  return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func report(_ name: String, count: Int, unit: String, time: Double) {
  let rate = Double(count) / time
  print(
    "\(name): \(count) \(unit) in \(String(format: "%.3f", time)) s = "
      + "\(String(format: "%.1f", rate)) \(unit)/s (\(String(format: "%.3f", 1000 / rate)) ms each)"
  )
}

func benchmarkVP8(width: Int, height: Int, kbps: Int) throws {
  let camera = VirtualCamera(width: width, height: height)
  let pictures = (0..<60).map { camera.frame($0) }
  let encoder = try VP8Encoder(
    configuration: .init(width: width, height: height, bitrateKbps: kbps))
  var frames: [EncodedVideoFrame] = []
  let encodeTime = try seconds {
    for (index, picture) in pictures.enumerated() {
      frames += try encoder.encode(picture, timestamp: camera.rtpTimestamp(frameIndex: index))
    }
  }
  report("VP8 encode \(width)x\(height) @\(kbps) kbps", count: 60, unit: "frames", time: encodeTime)
  let decoder = try VP8Decoder()
  var psnr = Double.infinity
  var decoded: [I420Image] = []
  let decodeTime = try seconds {
    for frame in frames {
      if let picture = try decoder.decode(frame.data) { decoded.append(picture) }
    }
  }
  for (picture, source) in zip(decoded, pictures) {
    psnr = min(psnr, picture.psnr(to: source) ?? 0)
  }
  report("VP8 decode \(width)x\(height)", count: frames.count, unit: "frames", time: decodeTime)
  let bytes = frames.reduce(0) { $0 + $1.data.count }
  print(
    "  \(bytes * 8 / 2 / 1000) kbps over 2 s, worst PSNR \(String(format: "%.2f", psnr)) dB")
  var packetizer = VP8Packetizer()
  var payloads: [PacketizedPayload] = []
  var assembler = VP8FrameAssembler()
  var delivered = 0
  let packetTime = seconds {
    for frame in frames { payloads += packetizer.packetize(frame) }
    for (index, payload) in payloads.enumerated() {
      delivered +=
        assembler.insert(
          .init(
            sequenceNumber: UInt16(truncatingIfNeeded: index), timestamp: payload.timestamp,
            marker: payload.marker, payload: payload.payload)
        ).frames.count
    }
  }
  report("VP8 packetize+assemble", count: payloads.count, unit: "packets", time: packetTime)
  let scaleTime = seconds {
    for picture in pictures.prefix(30) {
      _ = picture.scaled(toWidth: width / 2, height: height / 2)
    }
  }
  report("I420 box scale \(width)x\(height) -> half", count: 30, unit: "frames", time: scaleTime)
}

func benchmarkOpus() throws {
  let microphone = VirtualMicrophone(signal: .chirp(from: 200, to: 3000, period: 1))
  let frames = (0..<500).map { microphone.frame($0) }
  let encoder = try OpusEncoder()
  var packets: [[UInt8]] = []
  let encodeTime = try seconds { for frame in frames { packets.append(try encoder.encode(frame)) } }
  report("Opus encode mono 32 kbps FEC", count: 500, unit: "frames", time: encodeTime)
  let decoder = try OpusDecoder()
  let decodeTime = try seconds { for packet in packets { _ = try decoder.decode(packet) } }
  report("Opus decode mono", count: 500, unit: "frames", time: decodeTime)
}

do {
  try benchmarkVP8(width: 640, height: 480, kbps: 1000)
  try benchmarkH264(width: 640, height: 480, kbps: 1000)
  try benchmarkVP8(width: 1280, height: 720, kbps: 2000)
  try benchmarkH264(width: 1280, height: 720, kbps: 2000)
  try benchmarkOpus()
} catch {
  print("benchmark failed: \(error)")
  exit(1)
}
