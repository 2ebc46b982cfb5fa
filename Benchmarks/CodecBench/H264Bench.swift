import Foundation
import WCSMedia

/// H.264 figures in the same shape as VP8's: OpenH264 encode, libavcodec decode, RFC 6184
/// packetize + assemble, for the same 60 virtual-camera pictures.
func benchmarkH264(width: Int, height: Int, kbps: Int) throws {
  let camera = VirtualCamera(width: width, height: height)
  let pictures = (0..<60).map { camera.frame($0) }
  let encoder = try H264Encoder(
    configuration: .init(width: width, height: height, bitrateKbps: kbps))
  var frames: [EncodedVideoFrame] = []
  let encodeTime = try seconds {
    for (index, picture) in pictures.enumerated() {
      frames += try encoder.encode(picture, timestamp: camera.rtpTimestamp(frameIndex: index))
    }
  }
  report(
    "H264 encode \(width)x\(height) @\(kbps) kbps", count: 60, unit: "frames", time: encodeTime)
  let decoder = try H264Decoder()
  var decoded: [I420Image] = []
  let decodeTime = try seconds {
    for frame in frames {
      if let picture = try decoder.decode(frame.data) { decoded.append(picture) }
    }
  }
  let psnr = zip(decoded, pictures).reduce(Double.infinity) { worst, pair in
    min(worst, pair.0.psnr(to: pair.1) ?? 0)
  }
  report("H264 decode \(width)x\(height)", count: frames.count, unit: "frames", time: decodeTime)
  let bytes = frames.reduce(0) { $0 + $1.data.count }
  print(
    "  \(bytes * 8 / 2 / 1000) kbps over 2 s, worst PSNR \(String(format: "%.2f", psnr)) dB")
  var packetizer = H264Packetizer()
  var payloads: [PacketizedPayload] = []
  var assembler = H264AccessUnitAssembler()
  var delivered = 0
  let packetTime = seconds {
    for frame in frames { payloads += packetizer.packetize(frame) }
    for (index, payload) in payloads.enumerated() {
      delivered +=
        assembler.insert(
          .init(
            sequenceNumber: UInt16(truncatingIfNeeded: index), timestamp: payload.timestamp,
            marker: payload.marker, payload: payload.payload)
        ).accessUnits.count
    }
  }
  report("H264 packetize+assemble", count: payloads.count, unit: "packets", time: packetTime)
  if delivered != frames.count { print("  only \(delivered) of \(frames.count) access units") }
}
