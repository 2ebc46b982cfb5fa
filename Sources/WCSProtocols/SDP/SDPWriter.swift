/// Serializes a ``SessionDescription`` with CRLF line ends in the RFC 8866 §5 order:
/// `v o s i u e p c b t r z k a*` then per section `m i c* b* k a*`. Lines kept verbatim
/// (`unknownLines`) are written just before the attributes of their level.
public enum SDPWriter {
  /// The SDP text; every line (including the last) ends with CRLF (RFC 8866 §5).
  public static func write(_ sdp: SessionDescription) -> String {
    var w = ByteWriter(capacity: 512 + sdp.media.count * 2048)
    w.lit("v=")
    w.put(sdp.version)
    w.crlf()
    let o = sdp.origin
    w.lit("o=")
    w.put(o.username)
    w.lit(" ")
    w.put(o.sessionId)
    w.lit(" ")
    w.put(o.sessionVersion)
    w.lit(" ")
    w.put(o.netType)
    w.lit(" ")
    w.put(o.addressType)
    w.lit(" ")
    w.put(o.address)
    w.crlf()
    w.line("s=", sdp.sessionName)
    if let i = sdp.information { w.line("i=", i) }
    if let u = sdp.uri { w.line("u=", u) }
    for e in sdp.emails { w.line("e=", e) }
    for p in sdp.phones { w.line("p=", p) }
    if let c = sdp.connection { connection(c, &w) }
    for b in sdp.bandwidths { bandwidth(b, &w) }
    for t in sdp.timing {
      w.lit("t=")
      w.put(t.start)
      w.lit(" ")
      w.put(t.stop)
      w.crlf()
      for r in t.repeats { w.line("r=", r) }
    }
    if let z = sdp.timeZones { w.line("z=", z) }
    if let k = sdp.encryptionKey { w.line("k=", k) }
    for line in sdp.unknownLines {
      w.put(line)
      w.crlf()
    }
    attributes(sdp.attributes, &w)
    for m in sdp.media { media(m, &w) }
    return w.string
  }

  /// The `a=` line for one attribute, without the line end (e.g. `a=rtpmap:111 opus/48000/2`).
  /// `write` leaves out an `a=fmtp` without parameters; here it is `a=fmtp:<pt>`.
  public static func line(for attribute: SDPAttribute) -> String {
    var w = ByteWriter(capacity: 128)
    withUnsafePointer(to: attribute) { self.attribute($0, &w) }
    return w.string
  }

  private static func media(_ m: MediaDescription, _ w: inout ByteWriter) {
    w.lit("m=", m.media, " ")
    w.put(m.port)
    if let c = m.portCount {
      w.lit("/")
      w.put(c)
    }
    w.lit(" ")
    w.put(m.proto)
    for f in m.formats { w.lit(" ", f) }
    w.crlf()
    if let i = m.information { w.line("i=", i) }
    for c in m.connections { connection(c, &w) }
    for b in m.bandwidths { bandwidth(b, &w) }
    if let k = m.encryptionKey { w.line("k=", k) }
    for line in m.unknownLines {
      w.put(line)
      w.crlf()
    }
    attributes(m.attributes, &w)
  }

  /// Walks the array through its buffer so each element is borrowed, not copied (a copy would
  /// retain and release every string inside).
  private static func attributes(_ list: [SDPAttribute], _ w: inout ByteWriter) {
    list.withUnsafeBufferPointer { buf in
      guard let p = buf.baseAddress else { return }
      for i in 0..<buf.count {
        // An `a=fmtp` with no parameters is not valid RFC 8866 §6.15 syntax (the format
        // parameters are required); some peers reject the whole description for it.
        if case .fmtp(let f) = p[i], f.parameters.isEmpty { continue }
        attribute(p + i, &w)
        w.crlf()
      }
    }
  }

  private static func connection(_ c: SDPConnection, _ w: inout ByteWriter) {
    w.lit("c=", c.netType, " ")
    w.put(c.addressType)
    w.lit(" ")
    w.put(c.address)
    w.crlf()
  }

  private static func bandwidth(_ b: SDPBandwidth, _ w: inout ByteWriter) {
    w.lit("b=", b.type, ":")
    w.put(b.value)
    w.crlf()
  }

  private static func attribute(_ a: UnsafePointer<SDPAttribute>, _ w: inout ByteWriter) {
    switch a.pointee {
    case .rtpmap(let r):
      w.lit("a=rtpmap:")
      w.put(r.payloadType)
      w.lit(" ", r.encodingName, "/")
      w.put(r.clockRate)
      if let c = r.channels {
        w.lit("/")
        w.put(c)
      }
    case .fmtp(let f):
      w.lit("a=fmtp:")
      w.put(f.payloadType)
      if !f.parameters.isEmpty { w.lit(" ") }
      for (i, p) in f.parameters.enumerated() {
        if i > 0 { w.lit(";") }
        w.put(p.name)
        if let v = p.value { w.lit("=", v) }
      }
    case .rtcpFeedback(let fb):
      w.lit("a=rtcp-fb:")
      if let pt = fb.payloadType { w.put(pt) } else { w.lit("*") }
      w.lit(" ", fb.type)
      if let p = fb.parameter { w.lit(" ", p) }
    case .extmap(let e):
      w.lit("a=extmap:")
      w.put(e.id)
      if let d = e.direction { w.lit("/", d.rawValue) }
      w.lit(" ", e.uri)
      if let x = e.extensionAttributes { w.lit(" ", x) }
    case .ssrc(let s):
      w.lit("a=ssrc:")
      w.put(UInt64(s.ssrc))
      w.lit(" ", s.attribute)
      if let v = s.value { w.lit(":", v) }
    case .ssrcGroup(let g):
      w.lit("a=ssrc-group:", g.semantics)
      for s in g.ssrcs {
        w.lit(" ")
        w.put(UInt64(s))
      }
    case .msid(let m):
      w.lit("a=msid:", m.streamId)
      if let t = m.trackId { w.lit(" ", t) }
    case .mid(let m): w.lit("a=mid:", m)
    case .group(let g):
      w.lit("a=group:", g.semantics)
      for m in g.mids { w.lit(" ", m) }
    case .rtcpMux: w.lit("a=rtcp-mux")
    case .rtcpReducedSize: w.lit("a=rtcp-rsize")
    case .iceUfrag(let u): w.lit("a=ice-ufrag:", u)
    case .icePwd(let p): w.lit("a=ice-pwd:", p)
    case .iceOptions(let o):
      w.lit("a=ice-options:")
      for (i, t) in o.enumerated() {
        if i > 0 { w.lit(" ") }
        w.put(t)
      }
    case .iceLite: w.lit("a=ice-lite")
    case .candidate(let c):
      w.lit("a=candidate:")
      candidate(c, &w)
    case .endOfCandidates: w.lit("a=end-of-candidates")
    case .fingerprint(let f):
      w.lit("a=fingerprint:", f.hashFunction, " ")
      w.hexPairs(f.bytes)
    case .setup(let s): w.lit("a=setup:", s.rawValue)
    case .direction(let d): w.lit("a=", d.rawValue)
    case .sctpPort(let p):
      w.lit("a=sctp-port:")
      w.put(p)
    case .other(let name, let value):
      w.lit("a=", name)
      if let value { w.lit(":", value) }
    }
  }

  /// RFC 8839 §5.1 order: mandatory fields, raddr, rport, then extensions.
  static func candidate(_ c: ICECandidateAttribute, _ w: inout ByteWriter) {
    w.put(c.foundation)
    w.lit(" ")
    w.put(c.component)
    w.lit(" ", c.transport, " ")
    w.put(UInt64(c.priority))
    w.lit(" ", c.address, " ")
    w.put(c.port)
    w.lit(" typ ", c.type.token)
    // A name without a value (an odd trailing name when parsed) is not written: followed by
    // anything it would take the next field as its value on the next parse.
    if let a = c.relatedAddress, !a.isEmpty { w.lit(" raddr ", a) }
    if let p = c.relatedPort {
      w.lit(" rport ")
      w.put(p)
    }
    if let t = c.tcpType, !t.isEmpty { w.lit(" tcptype ", t) }
    if let g = c.generation {
      w.lit(" generation ")
      w.put(g)
    }
    for e in c.extensions {
      guard let v = e.value, !v.isEmpty else { continue }
      w.lit(" ", e.name)
      w.lit(" ", v)
    }
  }
}

/// Appends UTF-8 bytes into one growing buffer that is decoded into a `String` once at the end;
/// much cheaper than growing a `String` (or an `Array` through `append(contentsOf:)`) piece by
/// piece. Non-copyable so the buffer has exactly one owner, freed in `deinit`.
struct ByteWriter: ~Copyable {
  private var base: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  private var count = 0

  init(capacity: Int) {
    self.capacity = max(capacity, 64)
    base = .allocate(capacity: self.capacity)
  }

  deinit { base.deallocate() }

  var string: String {
    String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
  }

  @inline(__always)
  private mutating func ensure(_ extra: Int) {
    if count + extra > capacity { grow(extra) }
  }

  private mutating func grow(_ extra: Int) {
    let newCapacity = max(capacity * 2, count + extra)
    let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
    grown.update(from: base, count: count)
    base.deallocate()
    base = grown
    capacity = newCapacity
  }

  @inline(__always)
  mutating func byte(_ b: UInt8) {
    ensure(1)
    base[count] = b
    count += 1
  }

  /// Pieces of 4...16 bytes (most tokens and literals) are copied as two overlapping words:
  /// a `memmove` call or a byte loop costs several times more.
  @inline(__always)
  private mutating func raw(_ p: UnsafePointer<UInt8>, _ n: Int) {
    ensure(n)
    let d = UnsafeMutableRawPointer(base + count)
    let s = UnsafeRawPointer(p)
    if n >= 8 && n <= 16 {
      let a = s.loadUnaligned(as: UInt64.self)
      let b = s.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
      d.storeBytes(of: a, as: UInt64.self)
      d.storeBytes(of: b, toByteOffset: n - 8, as: UInt64.self)
    } else if n >= 4 && n < 8 {
      let a = s.loadUnaligned(as: UInt32.self)
      let b = s.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
      d.storeBytes(of: a, as: UInt32.self)
      d.storeBytes(of: b, toByteOffset: n - 4, as: UInt32.self)
    } else if n < 4 {
      for i in 0..<n { base[count + i] = p[i] }
    } else {
      (base + count).update(from: p, count: n)
    }
    count += n
  }

  /// A literal, copied straight from the binary's constant data.
  @inline(__always)
  mutating func lit(_ s: StaticString) {
    raw(s.utf8Start, s.utf8CodeUnitCount)
  }

  mutating func put(_ s: String) {
    let copied: Void? = s.utf8.withContiguousStorageIfAvailable { buf in
      if let p = buf.baseAddress { raw(p, buf.count) }
    }
    if copied == nil {
      var s = s
      s.withUTF8 { if let p = $0.baseAddress { raw(p, $0.count) } }
    }
  }

  mutating func put(_ a: String, _ b: String) {
    put(a)
    put(b)
  }

  mutating func put(_ a: String, _ b: String, _ c: String) {
    put(a)
    put(b)
    put(c)
  }

  mutating func put(_ a: String, _ b: String, _ c: String, _ d: String, _ e: String) {
    put(a, b, c)
    put(d, e)
  }

  mutating func put(_ v: Int) {
    if v < 0 { byte(UInt8(ascii: "-")) }
    put(UInt64(v.magnitude))
  }

  mutating func put(_ v: UInt64) {
    ensure(20)
    // Many fields (ids, component, generation, small payload types) are one or two digits.
    if v < 10 {
      base[count] = 0x30 &+ UInt8(truncatingIfNeeded: v)
      count += 1
      return
    }
    if v < 100 {
      base[count] = 0x30 &+ UInt8(truncatingIfNeeded: v / 10)
      base[count + 1] = 0x30 &+ UInt8(truncatingIfNeeded: v % 10)
      count += 2
      return
    }
    // Digit count by multiplying up (cheaper than dividing down). `power` stops at 10^19 because
    // 10^20 does not fit in 64 bits; a value at or above 10^19 has the 20th digit.
    var digits = 1
    var power: UInt64 = 10
    while digits < 19, v >= power {
      power &*= 10
      digits += 1
    }
    if digits == 19, v >= power { digits = 20 }
    // Two digits per division by 100; splitting the remainder is a small multiply.
    var x = v
    var i = count + digits
    while x >= 100 {
      let r = UInt8(truncatingIfNeeded: x % 100)
      x /= 100
      i -= 2
      base[i] = 0x30 &+ r / 10
      base[i + 1] = 0x30 &+ r % 10
    }
    let r = UInt8(truncatingIfNeeded: x)
    if r >= 10 {
      i -= 2
      base[i] = 0x30 &+ r / 10
      base[i + 1] = 0x30 &+ r % 10
    } else {
      i -= 1
      base[i] = 0x30 &+ r
    }
    count += digits
  }

  mutating func crlf() {
    ensure(2)
    base[count] = 13
    base[count + 1] = 10
    count += 2
  }

  /// A literal then a string (e.g. `" "` and a field): the literal is not made into a `String`.
  @inline(__always)
  mutating func lit(_ prefix: StaticString, _ value: String) {
    lit(prefix)
    put(value)
  }

  /// Literal, string, literal (e.g. `" "`, a field, `"/"`).
  @inline(__always)
  mutating func lit(_ prefix: StaticString, _ value: String, _ suffix: StaticString) {
    lit(prefix)
    put(value)
    lit(suffix)
  }

  mutating func line(_ prefix: StaticString, _ value: String) {
    lit(prefix)
    put(value)
    crlf()
  }

  mutating func hexPairs(_ data: [UInt8]) {
    guard !data.isEmpty else { return }
    // Room for all of it up front, so the loop stores without a capacity check per byte.
    ensure(data.count * 3)
    let digits: StaticString = "0123456789ABCDEF"
    let hex = digits.utf8Start
    let out = base + count
    data.withUnsafeBufferPointer { buf in
      guard let src = buf.baseAddress else { return }
      // "XX:" per byte; the colon after the last byte is stored but not counted.
      for i in 0..<buf.count {
        let b = src[i]
        let o = out + i &* 3
        o[0] = hex[Int(b >> 4)]
        o[1] = hex[Int(b & 0x0F)]
        o[2] = UInt8(ascii: ":")
      }
    }
    count += data.count * 3 - 1
  }
}

extension SessionDescription {
  /// The SDP text with CRLF line ends (see ``SDPWriter/write(_:)``).
  public var sdpText: String { SDPWriter.write(self) }

  /// Parses `text` leniently (see ``SDPParser/parse(_:)``), dropping the warnings.
  ///
  /// - Throws: ``SDPParseError`` when the SDP is unusable.
  public init(parsing text: String) throws(SDPParseError) {
    self = try SDPParser.parse(text).description
  }
}
