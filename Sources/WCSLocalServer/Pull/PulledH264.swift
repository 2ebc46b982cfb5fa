import WCSCodecs
import WCSProtocols

/// H.264 as libavformat demuxes it from an RTSP or RTMP source, turned into Annex B access units
/// (what `H264Packetizer` takes) without decoding.
///
/// Two layouts exist: Annex B with start codes (RTSP: FFmpeg depacketizes RFC 6184 and puts the
/// `sprop-parameter-sets` in the extradata as Annex B) and AVC (RTMP/FLV, ISO/IEC 14496-15
/// §5.2.4: an `avcC` record in the extradata, then NAL units each after a 1, 2 or 4-byte big
/// endian length). The parameter sets of the extradata go before the first access unit, so a
/// player can decode the first IDR; the packetizer repeats them before every later IDR.
struct PulledH264: Sendable {
  /// Largest access unit taken from a source, bytes: a 4K intra frame fits, a length field
  /// claiming gigabytes does not.
  static let maxAccessUnitSize = 4 << 20
  /// Largest picture side a source may declare in its SPS, pixels.
  static let maxPictureSide = 4096

  /// Length field size of the AVC layout, nil for Annex B.
  let lengthSize: Int?
  /// SPS and PPS of the extradata, without start codes.
  let parameterSets: [[UInt8]]
  /// The format the relay announces to players (RFC 6184 §8.1), from the first SPS.
  let formatParameters: H264FormatParameters
  private var sentParameterSets = false

  /// Reads the extradata of the source's video stream.
  /// - Throws: `PullError.wrongFormat` for an `avcC` record that ends early, an SPS that does
  ///   not parse or declares a picture over `maxPictureSide`, or a profile RFC 6184 cannot name.
  init(extradata: [UInt8]) throws(PullError) {
    var units: [[UInt8]] = []
    if extradata.first == 1 {
      // avcC: version, profile, compatibility, level, 6 bits reserved + lengthSizeMinusOne,
      // 3 bits reserved + SPS count, SPSs, PPS count, PPSs (each after a 16-bit size).
      guard extradata.count >= 7 else { throw .wrongFormat("avcC record too short") }
      lengthSize = Int(extradata[4] & 0x03) + 1
      guard lengthSize != 3 else { throw .wrongFormat("avcC length size 3") }
      var offset = 5
      for countMask in [UInt8(0x1F), 0xFF] {
        guard offset < extradata.count else { throw .wrongFormat("avcC record ends early") }
        let count = Int(extradata[offset] & countMask)
        offset += 1
        for _ in 0..<count {
          guard offset + 2 <= extradata.count else { throw .wrongFormat("avcC ends early") }
          let size = Int(extradata[offset]) << 8 | Int(extradata[offset + 1])
          offset += 2
          guard size > 0, offset + size <= extradata.count else {
            throw .wrongFormat("avcC parameter set past the end")
          }
          units.append(Array(extradata[offset..<offset + size]))
          offset += size
        }
      }
    } else {
      lengthSize = nil
      units = H264AnnexB.nalUnits(extradata).map { Array($0) }
    }
    parameterSets = units.filter {
      guard let header = $0.first else { return false }
      let type = H264NALUnitType.of(header)
      return type == H264NALUnitType.sps || type == H264NALUnitType.pps
    }
    guard let sps = parameterSets.first(where: { H264NALUnitType.of($0[0]) == H264NALUnitType.sps })
    else {
      // Parameter sets only in-band: announce what browsers and the SDK take by default; the
      // SPS that arrives with the first IDR is the one that counts for decoding.
      formatParameters = H264FormatParameters()
      return
    }
    let parsed: H264SequenceParameterSet
    do {
      parsed = try H264SequenceParameterSet(nalUnit: sps)
    } catch {
      throw .wrongFormat("SPS: \(error)")
    }
    guard parsed.width <= Self.maxPictureSide, parsed.height <= Self.maxPictureSide else {
      throw .wrongFormat("picture \(parsed.width)x\(parsed.height)")
    }
    formatParameters = try Self.formatParameters(
      profileIDC: parsed.profileIDC, constraintFlags: parsed.constraintFlags,
      levelIDC: parsed.levelIDC)
  }

  /// `profile-level-id` from the three SPS bytes after the NAL header (RFC 6184 §8.1),
  /// packetization-mode 1 (the packetizer's FU-A carries any slice size).
  static func formatParameters(profileIDC: UInt8, constraintFlags: UInt8, levelIDC: UInt8)
    throws(PullError) -> H264FormatParameters
  {
    let text = [profileIDC, constraintFlags, levelIDC].map { byte in
      let digits = String(byte, radix: 16)
      return digits.count == 1 ? "0" + digits : digits
    }.joined()
    guard let profileLevelID = H264ProfileLevelID(Substring(text)) else {
      throw .wrongFormat("profile-level-id \(text)")
    }
    return H264FormatParameters(profileLevelID: profileLevelID, packetizationMode: 1)
  }

  /// One demuxed packet as an Annex B access unit; the extradata's parameter sets precede the
  /// first one.
  /// - Throws: `PullError.badFrame` for a packet over `maxAccessUnitSize` or an AVC length that
  ///   runs past the packet's end (the packet is dropped; the stream goes on).
  mutating func accessUnit(_ packet: UnsafeRawBufferPointer) throws(PullError) -> [UInt8] {
    guard packet.count <= Self.maxAccessUnitSize else {
      throw .badFrame("access unit of \(packet.count) bytes")
    }
    var output: [UInt8] = []
    output.reserveCapacity(packet.count + 64)
    if !sentParameterSets {
      sentParameterSets = true
      for unit in parameterSets { output += [0, 0, 0, 1] + unit }
    }
    guard let lengthSize else {
      output += packet
      return output
    }
    var offset = 0
    while offset < packet.count {
      guard offset + lengthSize <= packet.count else { throw .badFrame("truncated NAL length") }
      var size = 0
      for index in 0..<lengthSize { size = size << 8 | Int(packet[offset + index]) }
      offset += lengthSize
      guard size <= packet.count - offset else { throw .badFrame("NAL unit past the end") }
      if size > 0 {
        output += [0, 0, 0, 1]
        output += packet[offset..<offset + size]
      }
      offset += size
    }
    return output
  }
}

/// Why a pulled source fails or drops data. `info` is what its players see (wcs-protocol.md
/// §5.2).
enum PullError: Error, Equatable, Sendable {
  /// The source could not be reached or refused the session (connection refused, timeout).
  case cannotConnect(String)
  /// The server answered that the stream does not exist (RTSP 404, RTMP unknown stream).
  case notFound(String)
  /// The source is not H.264 video, or its parameters are out of bounds.
  case wrongFormat(String)
  /// One frame could not be taken (dropped and counted; not fatal).
  case badFrame(String)
  /// The source ended or stopped sending.
  case ended(String)

  /// The FAILED `info` for players of `url` (RTSP wording for `rtsp://`).
  func info(url: String) -> String {
    let rtsp = url.lowercased().hasPrefix("rtsp")
    switch self {
    case .cannotConnect: return rtsp ? "Failed to connect to rtsp stream" : "Stream not found"
    case .notFound: return rtsp ? "Rtsp stream not found" : "Stream not found"
    case .wrongFormat: return rtsp ? "Rtsp has wrong format" : "File has wrong format"
    case .badFrame, .ended: return "Stream failed"
    }
  }

  /// The detail for the log.
  var detail: String {
    switch self {
    case .cannotConnect(let text), .notFound(let text), .wrongFormat(let text),
      .badFrame(let text), .ended(let text):
      return text
    }
  }
}
