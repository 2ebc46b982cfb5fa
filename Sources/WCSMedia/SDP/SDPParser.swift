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
    var state = State()
    var lineNumber = 0
    var sawLine = false
    let whole = Substring(text)
    let u = whole.utf8
    var start = u.startIndex
    var i = start
    while true {
      let atEnd = i == u.endIndex
      if atEnd || u[i] == UInt8(ascii: "\n") {
        lineNumber += 1
        var end = i
        if end != start, u[u.index(before: end)] == UInt8(ascii: "\r") {
          end = u.index(before: end)
        }
        let line = whole[start..<end]
        if !SDPScanner.trim(line).isEmpty {
          if !sawLine {
            sawLine = true
            try state.version(line, lineNumber)
          } else {
            try state.line(line, lineNumber)
          }
        }
        if atEnd { break }
        start = u.index(after: i)
      }
      i = u.index(after: i)
    }
    guard sawLine else { throw .empty }
    return try state.finish()
  }
}

private struct State {
  var session = SessionDescription(timing: [])
  var warnings: [SDPWarning] = []
  var current: MediaDescription? = nil
  var sawOrigin = false
  var sawSessionName = false

  mutating func warn(_ line: Int, _ reason: String) {
    warnings.append(SDPWarning(line: line, reason: reason))
  }

  mutating func version(_ line: Substring, _ n: Int) throws(SDPParseError) {
    guard line.hasPrefix("v="), let v = Int(SDPScanner.trim(line.dropFirst(2))) else {
      throw .missingVersion(line: n)
    }
    if v != 0 { warn(n, "unexpected version v=\(v)") }
    session.version = v
  }

  mutating func finish() throws(SDPParseError) -> SDPParseResult {
    if let m = current { session.media.append(m) }
    guard sawOrigin || !session.media.isEmpty else { throw .noSessionOrMedia }
    if !sawOrigin { warn(1, "no o= line, using \"- 0 0 IN IP4 127.0.0.1\"") }
    if !sawSessionName { warn(1, "no s= line, using \"-\"") }
    if session.timing.isEmpty {
      warn(1, "no t= line, using \"t=0 0\"")
      session.timing = [SDPTiming()]
    }
    return SDPParseResult(description: session, warnings: warnings)
  }

  mutating func keepUnknown(_ line: Substring, _ n: Int, _ reason: String) {
    warn(n, reason + ", kept verbatim")
    if current != nil {
      current?.unknownLines.append(String(line))
    } else {
      session.unknownLines.append(String(line))
    }
  }

  mutating func line(_ line: Substring, _ n: Int) throws(SDPParseError) {
    let u = line.utf8
    guard u.count >= 2, u[u.index(after: u.startIndex)] == UInt8(ascii: "=") else {
      keepUnknown(line, n, "not a <type>=<value> line")
      return
    }
    let type = u[u.startIndex]
    let value = line.dropFirst(2)
    if type == UInt8(ascii: "a") {
      attribute(value, n)
      return
    }
    if type == UInt8(ascii: "m") {
      try media(line, value, n)
      return
    }
    if current != nil {
      mediaLine(type, line, value, n)
    } else {
      sessionLine(type, line, value, n)
    }
  }

  mutating func attribute(_ value: Substring, _ n: Int) {
    let (name, v) = SDPScanner.splitOnce(value, UInt8(ascii: ":"))
    let attr: SDPAttribute
    switch SDPAttributeParser.parse(name: name, value: v) {
    case .some(.some(let a)): attr = a
    case .some(.none):
      warn(n, "malformed a=\(name), kept verbatim")
      attr = .other(name: String(name), value: v.map { String($0) })
    case .none: attr = .other(name: String(name), value: v.map { String($0) })
    }
    if current != nil {
      current?.attributes.append(attr)
    } else {
      session.attributes.append(attr)
    }
  }

  mutating func media(_ line: Substring, _ value: Substring, _ n: Int) throws(SDPParseError) {
    let f = SDPScanner.fields(value)
    guard f.count >= 3 else { throw .malformedMediaLine(line: n, text: String(line)) }
    let (portText, countText) = SDPScanner.splitOnce(f[1], UInt8(ascii: "/"))
    guard let port = Int(portText), (0...65535).contains(port) else {
      throw .malformedMediaLine(line: n, text: String(line))
    }
    var portCount: Int? = nil
    if let countText {
      if let c = Int(countText), c > 0 {
        portCount = c
      } else {
        warn(n, "bad port count in m= line, ignored")
      }
    }
    if f.count == 3 { warn(n, "m= line has no formats") }
    if let m = current { session.media.append(m) }
    current = MediaDescription(
      media: String(f[0]), port: port, portCount: portCount, proto: String(f[2]),
      formats: f.dropFirst(3).map { String($0) })
  }

  mutating func sessionLine(_ type: UInt8, _ line: Substring, _ value: Substring, _ n: Int) {
    switch type {
    case UInt8(ascii: "o"):
      let f = SDPScanner.fields(value)
      guard f.count == 6 else { return keepUnknown(line, n, "malformed o= line") }
      if sawOrigin { return keepUnknown(line, n, "duplicate o= line") }
      sawOrigin = true
      session.origin = SDPOrigin(
        username: String(f[0]), sessionId: String(f[1]), sessionVersion: String(f[2]),
        netType: String(f[3]), addressType: String(f[4]), address: String(f[5]))
    case UInt8(ascii: "s"):
      if sawSessionName { return keepUnknown(line, n, "duplicate s= line") }
      sawSessionName = true
      // RFC 8866 §5.3: s= must not be empty; a single space is the common workaround.
      session.sessionName = value.isEmpty ? " " : String(value)
    case UInt8(ascii: "i"): session.information = String(value)
    case UInt8(ascii: "u"): session.uri = String(value)
    case UInt8(ascii: "e"): session.emails.append(String(value))
    case UInt8(ascii: "p"): session.phones.append(String(value))
    case UInt8(ascii: "c"):
      guard let c = connection(value) else { return keepUnknown(line, n, "malformed c= line") }
      session.connection = c
    case UInt8(ascii: "b"):
      guard let b = bandwidth(value) else { return keepUnknown(line, n, "malformed b= line") }
      session.bandwidths.append(b)
    case UInt8(ascii: "t"):
      let f = SDPScanner.fields(value)
      guard f.count == 2, let start = UInt64(f[0]), let stop = UInt64(f[1]) else {
        return keepUnknown(line, n, "malformed t= line")
      }
      session.timing.append(SDPTiming(start: start, stop: stop))
    case UInt8(ascii: "r"):
      guard !session.timing.isEmpty else { return keepUnknown(line, n, "r= without t=") }
      session.timing[session.timing.count - 1].repeats.append(String(value))
    case UInt8(ascii: "z"): session.timeZones = String(value)
    case UInt8(ascii: "k"): session.encryptionKey = String(value)
    default: keepUnknown(line, n, "unknown line type")
    }
  }

  mutating func mediaLine(_ type: UInt8, _ line: Substring, _ value: Substring, _ n: Int) {
    switch type {
    case UInt8(ascii: "i"): current?.information = String(value)
    case UInt8(ascii: "c"):
      guard let c = connection(value) else { return keepUnknown(line, n, "malformed c= line") }
      current?.connections.append(c)
    case UInt8(ascii: "b"):
      guard let b = bandwidth(value) else { return keepUnknown(line, n, "malformed b= line") }
      current?.bandwidths.append(b)
    case UInt8(ascii: "k"): current?.encryptionKey = String(value)
    default: keepUnknown(line, n, "unknown or misplaced line type in m-section")
    }
  }

  func connection(_ value: Substring) -> SDPConnection? {
    let f = SDPScanner.fields(value)
    guard f.count == 3 else { return nil }
    return SDPConnection(
      netType: String(f[0]), addressType: String(f[1]), address: String(f[2]))
  }

  func bandwidth(_ value: Substring) -> SDPBandwidth? {
    let (type, v) = SDPScanner.splitOnce(SDPScanner.trim(value), UInt8(ascii: ":"))
    guard !type.isEmpty, let v, let number = UInt64(v) else { return nil }
    return SDPBandwidth(type: String(type), value: number)
  }
}
