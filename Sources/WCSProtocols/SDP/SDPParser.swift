/// Lenient SDP parser (RFC 8866 §5 grammar, JSEP RFC 8829 §5.8 parsing rules).
///
/// Accepts LF and CRLF line ends and blank lines. A malformed or unknown line never rejects the
/// SDP: it is kept verbatim (`SDPAttribute.other` or `unknownLines`), defaulted, or skipped, and
/// an ``SDPWarning`` names its line. Only an unusable SDP throws ``SDPParseError``.
public enum SDPParser {
  /// Parses `text`.
  ///
  /// - Throws: ``SDPParseError/empty`` for blank input, ``SDPParseError/missingVersion(line:)``
  ///   if the first line is not `v=<number>`, ``SDPParseError/noSessionOrMedia`` if there is
  ///   neither `o=` nor `m=`, ``SDPParseError/malformedMediaLine(line:text:)`` for an `m=`
  ///   line without media, port and protocol.
  public static func parse(_ text: String) throws(SDPParseError) -> SDPParseResult {
    var copy = text
    // The result comes back as the closure's return value (moved, not copied); going through a
    // `Result` or a captured variable copied the whole description once more.
    var failure = SDPParseError.empty
    let parsed: SDPParseResult? = copy.withUTF8 { buf in
      var state = State(
        session: SessionDescription(timing: []),
        current: MediaDescription(media: "", port: 0, proto: "", formats: []))
      var lineNumber = 0
      var sawLine = false
      var start = 0
      let n = buf.count
      do throws(SDPParseError) {
        while start <= n {
          let newline = lineEnd(buf, from: start)
          lineNumber += 1
          var end = newline
          if end > start, buf[end - 1] == UInt8(ascii: "\r") { end -= 1 }
          let line = ByteSlice(buf, start, end)
          if !line.trimmed().isEmpty {
            if !sawLine {
              sawLine = true
              try state.version(line, lineNumber)
            } else {
              try state.line(line, lineNumber)
            }
          }
          start = newline + 1
        }
        guard sawLine else { throw SDPParseError.empty }
        return try state.finish()
      } catch {
        failure = error
        return nil
      }
    }
    guard let parsed else { throw failure }
    return parsed
  }

  /// Index of the next LF at or after `from` (or `buf.count`), eight bytes at a time: a byte of
  /// `w ^ 0x0A..0A` is zero exactly where `w` has an LF (the "has zero byte" bit trick).
  @inline(__always)
  private static func lineEnd(_ buf: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
    guard let base = buf.baseAddress else { return buf.count }
    let n = buf.count
    var i = from
    let raw = UnsafeRawPointer(base)
    while i &+ 8 <= n {
      let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
      let x = w ^ 0x0A0A_0A0A_0A0A_0A0A
      let zero = (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
      // The lowest flagged byte is exact (borrows only run upwards), so it is the first LF.
      if zero != 0 { return i &+ (zero.trailingZeroBitCount >> 3) }
      i &+= 8
    }
    while i < n, base[i] != 0x0A { i += 1 }
    return i
  }
}

private struct State {
  var session: SessionDescription
  var warnings: [SDPWarning] = []
  // Not Optional: mutating through optional chaining copies the section, so every append would copy
  // its attribute array.
  var current: MediaDescription
  var inMedia = false
  var sawOrigin = false
  var sawSessionName = false
  /// The line before was a `t=` or `r=` taken into the timing: an `r=` belongs to the `t=` right
  /// before it (RFC 8866 §5.10). `timingTaken` is the same for the current line.
  var afterTiming = false
  var timingTaken = false
  /// Long `a=ssrc` values already made into strings, by their byte range: browsers repeat the
  /// same cname/msid/label for the RTX SSRC, and sharing the string saves an allocation and a
  /// UTF-8 validation each. Allocated only when the first such value is seen.
  var ssrcValues: [(lo: Int, hi: Int, string: String)] = []

  // Taken as `consuming` arguments: built in the initializer (or as property defaults) the
  // descriptions went through a temporary that was copied in (retaining and releasing every
  // field).
  init(session: consuming SessionDescription, current: consuming MediaDescription) {
    self.session = session
    self.current = current
  }

  mutating func warn(_ line: Int, _ reason: String) {
    warnings.append(SDPWarning(line: line, reason: reason))
  }

  mutating func version(_ line: ByteSlice, _ n: Int) throws(SDPParseError) {
    guard line.hasPrefix("v="), let v = line.dropFirst(2).trimmed().int() else {
      throw .missingVersion(line: n)
    }
    if v != 0 { warn(n, "unexpected version v=\(v)") }
    session.version = v
  }

  /// The description and warnings are swapped out (a copy would retain every field).
  mutating func finish() throws(SDPParseError) -> SDPParseResult {
    if inMedia { appendCurrent() }
    guard sawOrigin || !session.media.isEmpty else { throw .noSessionOrMedia }
    if !sawOrigin { warn(1, "no o= line, using \"- 0 0 IN IP4 127.0.0.1\"") }
    if !sawSessionName { warn(1, "no s= line, using \"-\"") }
    if session.timing.isEmpty {
      warn(1, "no t= line, using \"t=0 0\"")
      session.timing = [SDPTiming()]
    }
    var description = SessionDescription(timing: [])
    swap(&description, &session)
    var list: [SDPWarning] = []
    swap(&list, &warnings)
    return SDPParseResult(description: description, warnings: list)
  }

  mutating func keepUnknown(_ line: ByteSlice, _ n: Int, _ reason: String) {
    warn(n, reason + ", kept verbatim")
    if inMedia {
      current.unknownLines.append(line.string)
    } else {
      session.unknownLines.append(line.string)
    }
  }

  mutating func line(_ line: ByteSlice, _ n: Int) throws(SDPParseError) {
    afterTiming = timingTaken
    timingTaken = false
    guard line.count >= 2, line.byte(1) == UInt8(ascii: "=") else {
      keepUnknown(line, n, "not a <type>=<value> line")
      return
    }
    let type = line.byte(0)
    let value = line.dropFirst(2)
    if type == UInt8(ascii: "a") {
      attribute(value, n)
      return
    }
    if type == UInt8(ascii: "m") {
      try media(line, value, n)
      return
    }
    if inMedia {
      mediaLine(type, line, value, n)
    } else {
      sessionLine(type, line, value, n)
    }
  }

  mutating func attribute(_ value: ByteSlice, _ n: Int) {
    let (name, v) = value.splitOnce(UInt8(ascii: ":"))
    let attr: SDPAttribute
    switch SDPAttributeParser.parse(name: name, value: v) {
    case .typed(let a): attr = a
    case .malformed:
      warn(n, "malformed a=\(name.string), kept verbatim")
      attr = .other(name: name.string, value: v?.string)
    case .unknown: attr = .other(name: name.token, value: v?.token)
    case .ssrc(let ssrc, let attribute, let value):
      attr = .ssrc(
        SSRCAttribute(ssrc: ssrc, attribute: attribute, value: value.map { ssrcValue($0) }))
    }
    if inMedia {
      current.attributes.append(attr)
    } else {
      // Browsers put a few session attributes (group, msid-semantic, ice-options, ...): one
      // allocation instead of growing from capacity one.
      if session.attributes.isEmpty { session.attributes.reserveCapacity(8) }
      session.attributes.append(attr)
    }
  }

  /// `value.string`, shared with an earlier `a=ssrc` value of the same bytes when it is long
  /// enough to be a heap string.
  private mutating func ssrcValue(_ value: ByteSlice) -> String {
    let n = value.count
    guard n > 15 else { return value.token }
    for i in 0..<ssrcValues.count where ssrcValues[i].hi - ssrcValues[i].lo == n {
      if value.equalsBytes(at: ssrcValues[i].lo) { return ssrcValues[i].string }
    }
    let s = value.string
    if ssrcValues.isEmpty { ssrcValues.reserveCapacity(8) }
    if ssrcValues.count < 8 { ssrcValues.append((value.lo, value.hi, s)) }
    return s
  }

  mutating func media(_ line: ByteSlice, _ value: ByteSlice, _ n: Int) throws(SDPParseError) {
    var c = value
    guard let media = c.nextField(), let portField = c.nextField(), let proto = c.nextField()
    else { throw .malformedMediaLine(line: n, text: line.string) }
    let (portText, countText) = portField.splitOnce(UInt8(ascii: "/"))
    guard let port = portText.int(in: 0...65535) else {
      throw .malformedMediaLine(line: n, text: line.string)
    }
    var portCount: Int? = nil
    if let countText {
      if let count = countText.int(), count > 0 {
        portCount = count
      } else {
        warn(n, "bad port count in m= line, ignored")
      }
    }
    var formats: [String] = []
    formats.reserveCapacity(16)
    while let f = c.nextField() { formats.append(f.token) }
    if formats.isEmpty { warn(n, "m= line has no formats") }
    // Built in a local and swapped in: assigning a new section to `current` copied it.
    var next = MediaDescription(
      media: media.token, port: port, portCount: portCount, proto: proto.token,
      formats: formats)
    swap(&next, &current)
    if inMedia { session.media.append(next) }
    inMedia = true
    // Room for the rest of the SDP at ~24 bytes per line (an `a=` line is rarely shorter), so the
    // array is not regrown and copied while attributes are appended; capped so an early section
    // of a long SDP keeps at most ~14 KB of spare capacity.
    let remaining = line.base.count - line.hi
    current.attributes.reserveCapacity(min(max(remaining / 24, 8), 256))
  }

  /// Moves `current` into `session.media` without copying it (a copy retains every field and
  /// the later reassignment of `current` releases them again).
  private mutating func appendCurrent() {
    var m = MediaDescription(media: "", port: 0, proto: "", formats: [])
    swap(&m, &current)
    session.media.append(m)
  }

  mutating func sessionLine(_ type: UInt8, _ line: ByteSlice, _ value: ByteSlice, _ n: Int) {
    switch type {
    case UInt8(ascii: "o"):
      var c = value
      guard let user = c.nextField(), let id = c.nextField(), let version = c.nextField(),
        let net = c.nextField(), let addrType = c.nextField(), let address = c.nextField(),
        c.nextField() == nil
      else { return keepUnknown(line, n, "malformed o= line") }
      if sawOrigin { return keepUnknown(line, n, "duplicate o= line") }
      sawOrigin = true
      session.origin = SDPOrigin(
        username: user.token, sessionId: id.string, sessionVersion: version.token,
        netType: net.token, addressType: addrType.token, address: address.string)
    case UInt8(ascii: "s"):
      if sawSessionName { return keepUnknown(line, n, "duplicate s= line") }
      sawSessionName = true
      // RFC 8866 §5.3: s= must not be empty; a single space is the common workaround.
      session.sessionName = value.isEmpty ? " " : value.string
    case UInt8(ascii: "i"): session.information = value.string
    case UInt8(ascii: "u"): session.uri = value.string
    case UInt8(ascii: "e"): session.emails.append(value.string)
    case UInt8(ascii: "p"): session.phones.append(value.string)
    case UInt8(ascii: "c"):
      guard let c = connection(value) else { return keepUnknown(line, n, "malformed c= line") }
      session.connection = c
    case UInt8(ascii: "b"):
      guard let b = bandwidth(value) else { return keepUnknown(line, n, "malformed b= line") }
      session.bandwidths.append(b)
    case UInt8(ascii: "t"):
      var c = value
      guard let start = c.nextField()?.uint64(), let stop = c.nextField()?.uint64(),
        c.nextField() == nil
      else { return keepUnknown(line, n, "malformed t= line") }
      session.timing.append(SDPTiming(start: start, stop: stop))
      timingTaken = true
    case UInt8(ascii: "r"):
      // Elsewhere it would join whichever t= comes before it once written back.
      guard !session.timing.isEmpty, afterTiming else {
        return keepUnknown(line, n, "r= not after t=")
      }
      session.timing[session.timing.count - 1].repeats.append(value.string)
      timingTaken = true
    case UInt8(ascii: "z"): session.timeZones = value.string
    case UInt8(ascii: "k"): session.encryptionKey = value.string
    default: keepUnknown(line, n, "unknown line type")
    }
  }

  mutating func mediaLine(_ type: UInt8, _ line: ByteSlice, _ value: ByteSlice, _ n: Int) {
    switch type {
    case UInt8(ascii: "i"): current.information = value.string
    case UInt8(ascii: "c"):
      guard let c = connection(value) else { return keepUnknown(line, n, "malformed c= line") }
      current.connections.append(c)
    case UInt8(ascii: "b"):
      guard let b = bandwidth(value) else { return keepUnknown(line, n, "malformed b= line") }
      current.bandwidths.append(b)
    case UInt8(ascii: "k"): current.encryptionKey = value.string
    default: keepUnknown(line, n, "unknown or misplaced line type in m-section")
    }
  }

  func connection(_ value: ByteSlice) -> SDPConnection? {
    var c = value
    guard let net = c.nextField(), let type = c.nextField(), let address = c.nextField(),
      c.nextField() == nil
    else { return nil }
    return SDPConnection(netType: net.token, addressType: type.token, address: address.token)
  }

  func bandwidth(_ value: ByteSlice) -> SDPBandwidth? {
    let (type, v) = value.trimmed().splitOnce(UInt8(ascii: ":"))
    guard !type.isEmpty, let number = v?.uint64() else { return nil }
    return SDPBandwidth(type: type.string, value: number)
  }
}
