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
///
/// The source is a peer like a WebRTC publisher and meets the limits of
/// `H264AccessUnitAssembler`: every SPS, in the extradata or in-band, parses and announces a
/// picture within `pictureLimit` (else the pull stops: players would allocate for it); no NAL
/// unit holds a start code (H.264 §7.4.1: in the Annex B stream it would read as further NAL
/// units, never checked here); at most `maxNALUnits` per picture.
struct PulledH264: Sendable {
  /// Largest access unit taken from a source, bytes: a 4K intra frame fits, a length field
  /// claiming gigabytes does not.
  static let maxAccessUnitSize = 4 << 20
  /// Largest picture an SPS of the source may announce (its coded size, whole macroblocks):
  /// WebRTC H.264's limit, 4096 per side and 4096×2304 pixels.
  static let pictureLimit = H264PictureLimit.default
  /// Most NAL units one packet, and the picture gathered from packets, may hold
  /// (`H264AccessUnitAssembler`'s default): each becomes at least one RTP packet per player.
  static let maxNALUnits = 1024

  /// Length field size of the AVC layout, nil for Annex B.
  let lengthSize: Int?
  /// SPS and PPS of the extradata, without start codes.
  let parameterSets: [[UInt8]]
  /// The format the relay announces to players (RFC 6184 §8.1), from the first SPS.
  let formatParameters: H264FormatParameters
  private var sentParameterSets = false
  /// The picture being gathered (`take`) and its NAL units.
  private var pending: EncodedVideoFrame?
  private var pendingUnits = 0

  /// Reads the extradata of the source's video stream.
  /// - Throws: `PullError.wrongFormat` for an `avcC` record that ends early, a parameter set
  ///   holding a start code, an SPS that does not parse or announces a picture over
  ///   `pictureLimit`, or a profile RFC 6184 cannot name.
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
          let unit = Array(extradata[offset..<offset + size])
          guard !H264AccessUnitAssembler.holdsStartCode(unit) else {
            throw .wrongFormat("avcC parameter set holds a start code")
          }
          units.append(unit)
          offset += size
        }
      }
    } else {
      lengthSize = nil
      units = H264AnnexB.nalUnits(extradata).map { Array($0) }
    }
    parameterSets = units.map { Array(H264AnnexB.withoutTrailingZeros($0[...])) }.filter {
      guard let header = $0.first else { return false }
      let type = H264NALUnitType.of(header)
      return type == H264NALUnitType.sps || type == H264NALUnitType.pps
    }
    let spss = parameterSets.filter { H264NALUnitType.of($0[0]) == H264NALUnitType.sps }
    guard let first = spss.first else {
      // Parameter sets only in-band: announce what browsers and the SDK take by default; the
      // SPS that arrives with the first IDR is the one that counts for decoding.
      formatParameters = H264FormatParameters()
      return
    }
    let parsed = try Self.checkedSPS(first[...])
    for sps in spss.dropFirst() { _ = try Self.checkedSPS(sps[...]) }
    formatParameters = try Self.formatParameters(
      profileIDC: parsed.profileIDC, constraintFlags: parsed.constraintFlags,
      levelIDC: parsed.levelIDC)
  }

  /// `sps` parsed, when it announces a picture within `pictureLimit`.
  /// - Throws: `PullError.wrongFormat` when it does not parse or its picture is over the limit.
  static func checkedSPS(_ sps: ArraySlice<UInt8>) throws(PullError) -> H264SequenceParameterSet {
    let parsed: H264SequenceParameterSet
    do {
      parsed = try H264SequenceParameterSet(nalUnit: sps)
    } catch {
      throw .wrongFormat("SPS: \(error)")
    }
    let coded = (width: parsed.widthInMacroblocks * 16, height: parsed.heightInMacroblocks * 16)
    guard pictureLimit.allows(coded) else {
      throw .wrongFormat("SPS picture \(coded.width)x\(coded.height), over \(pictureLimit)")
    }
    return parsed
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

  /// One demuxed packet as an Annex B access unit (4-byte start codes); the extradata's
  /// parameter sets precede the first one taken.
  /// - Throws: `PullError.badFrame` for a packet over `maxAccessUnitSize` or `maxNALUnits`, an
  ///   AVC length that runs past the packet's end, or a NAL unit holding a start code (the packet
  ///   is dropped; the stream goes on); `PullError.wrongFormat` for an in-band SPS that does not
  ///   parse or announces a picture over `pictureLimit` (the pull must stop).
  mutating func accessUnit(_ packet: UnsafeRawBufferPointer) throws(PullError) -> [UInt8] {
    try annexB(packet).bytes
  }

  /// `accessUnit`, with the number of NAL units written.
  private mutating func annexB(_ packet: UnsafeRawBufferPointer) throws(PullError) -> (
    bytes: [UInt8], units: Int
  ) {
    guard packet.count <= Self.maxAccessUnitSize else {
      throw .badFrame("access unit of \(packet.count) bytes")
    }
    let bytes = [UInt8](packet)
    var units: [ArraySlice<UInt8>] = []
    if let lengthSize {
      var offset = 0
      while offset < bytes.count {
        guard offset + lengthSize <= bytes.count else { throw .badFrame("truncated NAL length") }
        var size = 0
        for index in 0..<lengthSize { size = size << 8 | Int(bytes[offset + index]) }
        offset += lengthSize
        guard size <= bytes.count - offset else { throw .badFrame("NAL unit past the end") }
        let unit = H264AnnexB.withoutTrailingZeros(bytes[offset..<offset + size])
        if !unit.isEmpty {
          guard !H264AccessUnitAssembler.holdsStartCode(unit) else {
            throw .badFrame("start code inside a NAL unit")
          }
          units.append(unit)
          guard units.count <= Self.maxNALUnits else {
            throw .badFrame("over \(Self.maxNALUnits) NAL units")
          }
        }
        offset += size
      }
    } else {
      // Split here and written again, so that what is checked is what players receive.
      units = H264AnnexB.nalUnits(bytes).map(H264AnnexB.withoutTrailingZeros).filter { !$0.isEmpty }
      guard units.count <= Self.maxNALUnits else {
        throw .badFrame("over \(Self.maxNALUnits) NAL units")
      }
    }
    for unit in units where H264NALUnitType.of(unit[unit.startIndex]) == H264NALUnitType.sps {
      _ = try Self.checkedSPS(unit)
    }
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count + 4 * units.count + 64)
    var written = units.count
    if !sentParameterSets {
      sentParameterSets = true
      for unit in parameterSets { output += [0, 0, 0, 1] + unit }
      written += parameterSets.count
    }
    for unit in units {
      output += [0, 0, 0, 1]
      output += unit
    }
    return (output, written)
  }

  /// One demuxed packet of the video stream, gathered into pictures: the RTSP demuxer hands
  /// over each slice of a multi-slice picture as its own packet, and the packets of one
  /// timestamp make one access unit (one marker bit), complete when the next timestamp starts.
  /// - Parameters:
  ///   - timestamp: the packet's RTP time (90 kHz); nil when it has none (checked, not sent).
  ///   - isKeyFrame: the demuxer's key flag.
  /// - Returns: the previous picture when this packet starts another one (to send), and why
  ///   this packet was dropped when it was (`PullError.badFrame`: as `accessUnit`, or the
  ///   picture it belongs to over `maxAccessUnitSize` or `maxNALUnits`, dropped whole).
  /// - Throws: `PullError.wrongFormat` as `accessUnit` (the pull must stop).
  mutating func take(_ packet: UnsafeRawBufferPointer, timestamp: UInt32?, isKeyFrame: Bool)
    throws(PullError) -> (picture: EncodedVideoFrame?, dropped: PullError?)
  {
    let sent = sentParameterSets
    let accessUnit: (bytes: [UInt8], units: Int)
    do {
      accessUnit = try annexB(packet)
    } catch {
      if case .wrongFormat = error { throw error }
      return (nil, error)
    }
    guard let timestamp else {
      // Not sent: the parameter sets still go before the first picture that is.
      sentParameterSets = sent
      return (nil, nil)
    }
    var picture: EncodedVideoFrame?
    if let current = pending, current.timestamp != timestamp {
      picture = current
      pending = nil
    }
    if pending == nil {
      pending = EncodedVideoFrame(data: [], isKeyFrame: false, timestamp: timestamp)
      pendingUnits = 0
    }
    guard (pending?.data.count ?? 0) + accessUnit.bytes.count <= Self.maxAccessUnitSize,
      pendingUnits + accessUnit.units <= Self.maxNALUnits
    else {
      pending = nil
      return (picture, .badFrame("access unit over the size limit"))
    }
    pending?.data += accessUnit.bytes
    pendingUnits += accessUnit.units
    if isKeyFrame { pending?.isKeyFrame = true }
    return (picture, nil)
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
