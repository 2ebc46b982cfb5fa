import Foundation
import Synchronization
import TestSupport
import WCSCodecs
import WCSProtocols
import XCTest

@testable import WCSLocalServer

/// A pulled source is a peer like a WebRTC publisher (issue 29): its H.264, extradata or
/// in-band, meets the limits of `H264AccessUnitAssembler`. An SPS over the picture limit stops
/// the pull with a reason; a NAL unit holding a start code (H.264 §7.4.1), which would read as
/// further, unchecked NAL units in the Annex B stream players decode, is dropped.
final class PulledH264LimitTests: XCTestCase {
  /// A baseline SPS (id `id`) announcing `widthInMacroblocks` × `heightInMacroblocks`, no VUI.
  static func sps(id: Int = 0, widthInMacroblocks: Int, heightInMacroblocks: Int) -> [UInt8] {
    var writer = ExpGolombBitWriter()
    for (value, bits) in [(0x67, 8), (66, 8), (0xC0, 8), (31, 8)] { writer.bits(value, bits) }
    // seq_parameter_set_id, log2_max_frame_num_minus4, pic_order_cnt_type 2, max_num_ref_frames.
    for value in [id, 0, 2, 1] { writer.ue(value) }
    writer.bits(0, 1)
    writer.ue(widthInMacroblocks - 1)
    writer.ue(heightInMacroblocks - 1)
    // frame_mbs_only, direct_8x8_inference, no cropping, no VUI, then the RBSP stop bit.
    for bit in [1, 1, 0, 0, 1] { writer.bits(bit, 1) }
    return writer.bytes
  }

  static let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x21]
  /// 4096×4096: each side at the limit, the area over 4096×2304 (what a 4K decoder is sized for).
  static let squareSPS = sps(id: 1, widthInMacroblocks: 256, heightInMacroblocks: 256)

  /// `units` each after a 4-byte big-endian length (ISO/IEC 14496-15 §5.2.4).
  static func avc(_ units: [[UInt8]]) -> [UInt8] {
    var out: [UInt8] = []
    for unit in units {
      let size = UInt32(unit.count)
      for shift in [24, 16, 8, 0] { out.append(UInt8(truncatingIfNeeded: size >> UInt32(shift))) }
      out += unit
    }
    return out
  }

  func testAnInBandSPSOverThePictureLimitIsTheWrongFormatInEitherLayout() throws {
    let expected = PullError.wrongFormat(
      "SPS picture 4096x4096, over \(H264PictureLimit.default)")
    var avc = try PulledH264(extradata: PulledSourceTests.avcC)
    let packet = Self.avc([Self.squareSPS, Self.idr])
    XCTAssertThrowsError(try packet.withUnsafeBytes { try avc.accessUnit($0) }) {
      XCTAssertEqual($0 as? PullError, expected)
    }
    var annexB = try PulledH264(extradata: [])
    let stream = H264AnnexB.stream([Self.squareSPS, Self.idr])
    XCTAssertThrowsError(try stream.withUnsafeBytes { try annexB.accessUnit($0) }) {
      XCTAssertEqual($0 as? PullError, expected)
    }
    let huge = Self.sps(widthInMacroblocks: 1024, heightInMacroblocks: 1024)
    XCTAssertThrowsError(
      try H264AnnexB.stream([huge, Self.idr]).withUnsafeBytes { try annexB.accessUnit($0) }
    ) {
      XCTAssertEqual(
        $0 as? PullError, .wrongFormat("SPS picture 16384x16384, over \(H264PictureLimit.default)"))
    }
    // An SPS within the limit passes, written as it came.
    let small = Self.sps(widthInMacroblocks: 20, heightInMacroblocks: 15)
    XCTAssertEqual(
      try H264AnnexB.stream([small, Self.idr]).withUnsafeBytes { try annexB.accessUnit($0) },
      H264AnnexB.stream([small, Self.idr]))
  }

  func testAnExtradataSPSOverThePictureAreaOrHoldingAStartCodeIsRefused() {
    // The old check held each side against 4096 but not the area, and only the first SPS.
    var record = PulledSourceTests.avcC
    let square = Self.sps(widthInMacroblocks: 256, heightInMacroblocks: 256)
    record.replaceSubrange(5..<6, with: [0xE2])
    record.insert(
      contentsOf: [0x00, UInt8(square.count)] + square, at: 8 + PulledSourceTests.sps.count)
    XCTAssertThrowsError(try PulledH264(extradata: record)) {
      XCTAssertEqual(
        $0 as? PullError, .wrongFormat("SPS picture 4096x4096, over \(H264PictureLimit.default)"))
    }
    let hidden: [UInt8] = [0x68, 0xCB, 0x00, 0x00, 0x01, 0x67, 0x42]
    var withStartCode = Array(PulledSourceTests.avcC.dropLast(PulledSourceTests.pps.count + 3))
    withStartCode += [0x01, 0x00, UInt8(hidden.count)] + hidden
    XCTAssertThrowsError(try PulledH264(extradata: withStartCode)) {
      XCTAssertEqual($0 as? PullError, .wrongFormat("avcC parameter set holds a start code"))
    }
  }

  func testAnAVCNALUnitHoldingAStartCodeIsDroppedAndTheParameterSetsWaitForTheNextFrame()
    throws
  {
    var h264 = try PulledH264(extradata: PulledSourceTests.avcC)
    // An SEI whose body reads, in Annex B, as a start code and then the 4096×4096 SPS.
    let sei: [UInt8] = [0x06, 0x05, 0x00, 0x00, 0x01] + Self.squareSPS
    XCTAssertThrowsError(
      try Self.avc([sei, Self.idr]).withUnsafeBytes { try h264.accessUnit($0) }
    ) { XCTAssertEqual($0 as? PullError, .badFrame("start code inside a NAL unit")) }
    // Emulation prevention (00 00 03) and trailing zeros (cabac_zero_words) are no start code;
    // the zeros go, as an Annex B reader would take them for trailing_zero_8bits (H.264 §B.2).
    let escaped: [UInt8] = [0x06, 0x05, 0x00, 0x00, 0x03, 0x01, 0x80]
    let next = try Self.avc([escaped, Self.idr + [0, 0]]).withUnsafeBytes {
      try h264.accessUnit($0)
    }
    XCTAssertEqual(
      next,
      H264AnnexB.stream(
        [PulledSourceTests.sps, PulledSourceTests.pps, escaped, Self.idr]),
      "the dropped frame did not use up the record's parameter sets")
  }

  func testAPacketOverTheNALUnitCapIsDropped() throws {
    var h264 = try PulledH264(extradata: PulledSourceTests.avcC)
    let slices = [[UInt8]](repeating: [0x01, 0x9A], count: PulledH264.maxNALUnits + 1)
    XCTAssertThrowsError(try Self.avc(slices).withUnsafeBytes { try h264.accessUnit($0) }) {
      XCTAssertEqual($0 as? PullError, .badFrame("over 1024 NAL units"))
    }
    var annexB = try PulledH264(extradata: [])
    XCTAssertThrowsError(
      try H264AnnexB.stream(slices).withUnsafeBytes { try annexB.accessUnit($0) }
    ) { XCTAssertEqual($0 as? PullError, .badFrame("over 1024 NAL units")) }
    XCTAssertEqual(
      try Self.avc(Array(slices.dropLast())).withUnsafeBytes { try h264.accessUnit($0) }.count,
      PulledSourceTests.sps.count + PulledSourceTests.pps.count + 8 + 1024 * 6)
  }

  /// A source (a raw H.264 file, read as an `rtsp://` source is) whose second access unit
  /// carries an SPS of 4096×4096 under another id: the reader fails there with the reason
  /// players get, instead of reading to the end.
  func testAReaderStopsWithWrongFormatAtAnInBandSPSOverTheLimit() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-pulled-h264-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let encoder = try H264Encoder(configuration: .init(width: 160, height: 120, bitrateKbps: 200))
    var frames: [[UInt8]] = []
    for index in 0..<6 {
      let picture = I420Image(width: 160, height: 120, y: UInt8(60 + 20 * index))
      frames += try encoder.encode(picture, timestamp: UInt32(index * 3000)).map(\.data)
    }
    XCTAssertEqual(frames.count, 6)
    var stream = frames[0]
    stream += H264AnnexB.stream([Self.squareSPS]) + frames[1]
    for frame in frames.dropFirst(2) { stream += frame }
    let path = directory.appendingPathComponent("source.h264").path
    try Data(stream).write(to: URL(fileURLWithPath: path))

    let events = Mutex<[PullSourceEvent]>([])
    let done = DispatchSemaphore(value: 0)
    let reader = PullSourceReader(
      url: path, limits: PullLimits(), payloadType: 102, ssrc: 1, audioPayloadType: 111,
      audioSSRC: 2)
    reader.start { event in
      events.withLock { $0.append(event) }
      if case .failed = event { done.signal() }
    }
    XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
    reader.stop()
    let all = events.withLock { $0 }
    guard case .failed(let error) = all.last else { return XCTFail("no failure: \(all)") }
    XCTAssertEqual(
      error, .wrongFormat("SPS picture 4096x4096, over \(H264PictureLimit.default)"))
    XCTAssertEqual(error.info(url: "rtsp://127.0.0.1/cam"), "Rtsp has wrong format")
    XCTAssertTrue(
      all.contains {
        if case .opened = $0 { return true }
        return false
      })
    // The first picture waits for the next timestamp to be sent; the reader stopped before.
    let packetEvents = all.filter {
      if case .packets = $0 { return true }
      return false
    }
    XCTAssertEqual(packetEvents.count, 0, "nothing after the SPS was read")
  }
}
