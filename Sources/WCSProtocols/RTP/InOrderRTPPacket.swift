/// The header fields of a received RTP packet of the common shape, read once from the
/// unprotected bytes for `InOrderRTPReception`: version 2, no padding, no CSRCs, and either no
/// header extension or a one-byte one (RFC 8285 §4.2, profile 0xBEDE) of at most
/// `RTPWireHeaderExtension.capacity` data octets whose elements all fit, as WebRTC senders
/// send (the transport-wide sequence number, perhaps beside a few more).
///
/// Any other packet (and any that `RTPHeader.parse` would reject) is not of this shape
/// (`init` gives nil) and takes the general path. For one that is, `packet()` gives what
/// `RTPPacket.parse` gives, and `transportSequenceNumber` what `TransportWideCC.sequenceNumber`
/// finds in its header.
package struct InOrderRTPPacket {
  /// The packet's bytes (the loop's receive buffer: used during the receiving call only).
  let bytes: UnsafeRawBufferPointer
  let marker: Bool
  package let payloadType: UInt8
  let sequenceNumber: UInt16
  let timestamp: UInt32
  let ssrc: UInt32
  /// The transport-wide sequence number: the value of the first extension element of the
  /// negotiated id when that element has two octets (nil without one, or without an id).
  package let transportSequenceNumber: UInt16?
  /// The extension as the parsed header holds it (nil: no X bit).
  private let wireExtension: RTPWireHeaderExtension?
  /// Fixed header plus extension: where the payload starts.
  private let headerLength: Int

  /// Reads the packet in `bytes`, whose SSRC (octets 8..<12) the caller read as `ssrc`; nil
  /// when it is not of the common shape (or is malformed). `transportWideCCID`: the negotiated
  /// extension id of the transport-wide sequence number, if any.
  @inline(__always)
  package init?(_ bytes: UnsafeRawBufferPointer, ssrc: UInt32, transportWideCCID: UInt8?) {
    // Every offset read below is checked against `bytes.count` first.
    guard bytes.count >= RTPHeader.fixedHeaderLength else { return nil }
    let first = bytes[0]
    // V=2, P=0, CC=0 (X either way).
    guard first & 0xEF == 0x80 else { return nil }
    let second = bytes[1]
    var headerLength = RTPHeader.fixedHeaderLength
    var wireExtension: RTPWireHeaderExtension?
    var transportSequenceNumber: UInt16?
    if first & 0x10 != 0 {
      guard bytes.count >= headerLength + 4,
        UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: headerLength, as: UInt16.self))
          == RTPHeaderExtension.oneByteProfile
      else { return nil }
      let length =
        Int(
          UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: headerLength + 2, as: UInt16.self)))
        * 4
      let start = headerLength + 4
      let end = start + length
      guard length <= RTPWireHeaderExtension.capacity, end <= bytes.count else { return nil }
      // `RTPHeaderExtension.walkElements`' one-byte rules: 0 is padding, id 15 ends the walk,
      // an element that does not fit is malformed (left to the general path to count).
      var index = start
      var found = false
      while index < end {
        let element = bytes[index]
        index += 1
        if element == 0 { continue }
        let id = element >> 4
        if id == 15 { break }
        let valueLength = Int(element & 0x0F) + 1
        guard index + valueLength <= end else { return nil }
        if !found, id == transportWideCCID {
          found = true
          if valueLength == 2 {
            transportSequenceNumber =
              UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
          }
        }
        index += valueLength
      }
      guard
        let wire = RTPWireHeaderExtension(
          profile: RTPHeaderExtension.oneByteProfile,
          data: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
      else { return nil }
      wireExtension = wire
      headerLength = end
    }
    self.bytes = bytes
    marker = second & 0x80 != 0
    payloadType = second & 0x7F
    sequenceNumber = UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
    timestamp = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
    self.ssrc = ssrc
    self.transportSequenceNumber = transportSequenceNumber
    self.wireExtension = wireExtension
    self.headerLength = headerLength
  }

  /// The packet as `RTPPacket.parse` gives it: the header, and the payload copied out.
  @inline(__always)
  func packet() -> RTPPacket {
    RTPPacket(
      header: RTPHeader(
        marker: marker, payloadType: payloadType, sequenceNumber: sequenceNumber,
        timestamp: timestamp, ssrc: ssrc, csrcs: [],
        extensionStorage: wireExtension.map { .wire($0) } ?? .none),
      payload: Array(UnsafeRawBufferPointer(rebasing: bytes[headerLength...])))
  }
}
