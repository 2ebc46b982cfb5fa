/// Sender report, packet type 200 (RFC 3550 §6.4.1).
public struct RTCPSenderReport: Equatable, Sendable {
  /// SSRC of the sender.
  public var ssrc: UInt32
  /// NTP timestamp of this report (64-bit, seconds since 1900 << 32 | fraction).
  public var ntpTimestamp: UInt64
  /// The same instant in the sender's RTP clock.
  public var rtpTimestamp: UInt32
  /// Packets sent since the start of transmission.
  public var packetCount: UInt32
  /// Payload octets sent since the start of transmission.
  public var octetCount: UInt32
  /// Reception reports, at most 31.
  public var reports: [RTCPReportBlock]
  /// Profile-specific extension after the report blocks (usually empty).
  public var profileExtension: [UInt8]

  /// Creates a sender report.
  public init(
    ssrc: UInt32, ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32,
    octetCount: UInt32, reports: [RTCPReportBlock] = [], profileExtension: [UInt8] = []
  ) {
    self.ssrc = ssrc
    self.ntpTimestamp = ntpTimestamp
    self.rtpTimestamp = rtpTimestamp
    self.packetCount = packetCount
    self.octetCount = octetCount
    self.reports = reports
    self.profileExtension = profileExtension
  }

  static func parse(count: UInt8, body: inout ByteReader) throws -> RTCPSenderReport {
    guard body.remaining >= 24 + RTCPReportBlock.length * Int(count) else {
      throw RTCPParseError.invalidLength(
        packetType: RTCPPacketType.senderReport,
        reason: "\(count) report blocks need \(24 + 24 * Int(count)) octets, got \(body.remaining)")
    }
    let ssrc = body.readUInt32() ?? 0
    let ntp = body.readUInt64() ?? 0
    let rtp = body.readUInt32() ?? 0
    let packets = body.readUInt32() ?? 0
    let octets = body.readUInt32() ?? 0
    var reports: [RTCPReportBlock] = []
    for _ in 0..<count {
      if let block = RTCPReportBlock.parse(&body) { reports.append(block) }
    }
    return RTCPSenderReport(
      ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: rtp, packetCount: packets,
      octetCount: octets, reports: reports,
      profileExtension: body.readBytes(body.remaining) ?? [])
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    guard reports.count <= 31 else {
      throw .tooManyItems(packetType: RTCPPacketType.senderReport, count: reports.count)
    }
    guard profileExtension.count % 4 == 0 else {
      throw .invalidField("SR profile extension not a multiple of 4 octets")
    }
    try bytes.appendRTCPPacket(
      packetType: RTCPPacketType.senderReport, count: UInt8(reports.count)
    ) { bytes throws(RTCPWriteError) in
      bytes.appendUInt32(ssrc)
      bytes.appendUInt64(ntpTimestamp)
      bytes.appendUInt32(rtpTimestamp)
      bytes.appendUInt32(packetCount)
      bytes.appendUInt32(octetCount)
      for report in reports { report.append(to: &bytes) }
      bytes.append(contentsOf: profileExtension)
    }
  }
}

/// Receiver report, packet type 201 (RFC 3550 §6.4.2).
public struct RTCPReceiverReport: Equatable, Sendable {
  /// SSRC of the packet sender (the receiver that reports).
  public var ssrc: UInt32
  /// Reception reports, at most 31.
  public var reports: [RTCPReportBlock]
  /// Profile-specific extension after the report blocks (usually empty).
  public var profileExtension: [UInt8]

  /// Creates a receiver report.
  public init(ssrc: UInt32, reports: [RTCPReportBlock] = [], profileExtension: [UInt8] = []) {
    self.ssrc = ssrc
    self.reports = reports
    self.profileExtension = profileExtension
  }

  static func parse(count: UInt8, body: inout ByteReader) throws -> RTCPReceiverReport {
    guard body.remaining >= 4 + RTCPReportBlock.length * Int(count) else {
      throw RTCPParseError.invalidLength(
        packetType: RTCPPacketType.receiverReport,
        reason: "\(count) report blocks need \(4 + 24 * Int(count)) octets, got \(body.remaining)")
    }
    let ssrc = body.readUInt32() ?? 0
    var reports: [RTCPReportBlock] = []
    for _ in 0..<count {
      if let block = RTCPReportBlock.parse(&body) { reports.append(block) }
    }
    return RTCPReceiverReport(
      ssrc: ssrc, reports: reports, profileExtension: body.readBytes(body.remaining) ?? [])
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    guard reports.count <= 31 else {
      throw .tooManyItems(packetType: RTCPPacketType.receiverReport, count: reports.count)
    }
    guard profileExtension.count % 4 == 0 else {
      throw .invalidField("RR profile extension not a multiple of 4 octets")
    }
    try bytes.appendRTCPPacket(
      packetType: RTCPPacketType.receiverReport, count: UInt8(reports.count)
    ) { bytes throws(RTCPWriteError) in
      bytes.appendUInt32(ssrc)
      for report in reports { report.append(to: &bytes) }
      bytes.append(contentsOf: profileExtension)
    }
  }
}
