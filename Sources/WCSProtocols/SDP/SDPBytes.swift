import Foundation

/// A byte range of the SDP text being parsed. Parsing on bytes (instead of `Character`s) spares
/// grapheme breaking on every line (docs/performance.md), and makes `\r\n` two bytes rather than
/// one grapheme.
/// Only valid inside the `withUTF8` call that produced `base`; never stored.
struct ByteSlice {
  let base: UnsafeBufferPointer<UInt8>
  var lo: Int
  var hi: Int

  init(_ base: UnsafeBufferPointer<UInt8>, _ lo: Int, _ hi: Int) {
    self.base = base
    self.lo = lo
    self.hi = hi
  }

  var isEmpty: Bool { lo >= hi }
  var count: Int { hi - lo }

  /// Byte at offset `i` from the start, 0 when `i` is outside the slice.
  @inline(__always)
  func byte(_ i: Int) -> UInt8 { i >= 0 && i < count ? base[lo + i] : 0 }

  var string: String {
    guard lo < hi else { return "" }
    return String(decoding: UnsafeBufferPointer(rebasing: base[lo..<hi]), as: UTF8.self)
  }

  /// Like `string`, but common WebRTC tokens come back as string literals, which costs no
  /// UTF-8 validation (the bulk of parse time otherwise goes into making small strings).
  var token: String {
    // Canonical decimals only: "07" must stay "07".
    if count <= 3, count == 1 || byte(0) != UInt8(ascii: "0"), let v = int(), v < 128 {
      return smallDecimalStrings[v]
    }
    switch count {
    case 2:
      if equals("IN") { return "IN" }
    case 3:
      if equals("IP4") { return "IP4" }
      if equals("udp") { return "udp" }
      if equals("UDP") { return "UDP" }
      if equals("tcp") { return "tcp" }
      if equals("rtx") { return "rtx" }
      if equals("VP8") { return "VP8" }
      if equals("FID") { return "FID" }
      if equals("ccm") { return "ccm" }
      if equals("fir") { return "fir" }
      if equals("pli") { return "pli" }
      if equals("apt") { return "apt" }
      if equals("red") { return "red" }
      if equals("IP6") { return "IP6" }
    case 4:
      if equals("nack") { return "nack" }
      if equals("msid") { return "msid" }
      if equals("opus") { return "opus" }
      if equals("H264") { return "H264" }
    case 5:
      if equals("cname") { return "cname" }
      if equals("label") { return "label" }
      if equals("audio") { return "audio" }
      if equals("video") { return "video" }
    case 6:
      if equals("active") { return "active" }
    case 7:
      if equals("mslabel") { return "mslabel" }
      if equals("passive") { return "passive" }
      if equals("0.0.0.0") { return "0.0.0.0" }
      if equals("sha-256") { return "sha-256" }
    case 8:
      if equals("minptime") { return "minptime" }
    case 9:
      if equals("goog-remb") { return "goog-remb" }
    case 10:
      if equals("network-id") { return "network-id" }
    case 12:
      if equals("transport-cc") { return "transport-cc" }
      if equals("useinbandfec") { return "useinbandfec" }
      if equals("network-cost") { return "network-cost" }
    case 16:
      if equals("9 IN IP4 0.0.0.0") { return "9 IN IP4 0.0.0.0" }
    case 17:
      if equals("UDP/TLS/RTP/SAVPF") { return "UDP/TLS/RTP/SAVPF" }
    default: break
    }
    return string
  }

  /// `string` for an RTP header extension URI; the ones browsers offer come back as literals
  /// (no allocation: they are longer than a small string).
  /// `string` for an RTP header extension URI; the ones browsers offer come back as literals
  /// (no allocation or UTF-8 validation: they are longer than a small string).
  var headerExtensionURI: String {
    switch count {
    case 26:
      if equals("urn:3gpp:video-orientation") {
        return "urn:3gpp:video-orientation"
      }
    case 34:
      if equals("urn:ietf:params:rtp-hdrext:toffset") {
        return "urn:ietf:params:rtp-hdrext:toffset"
      }
    case 35:
      if equals("urn:ietf:params:rtp-hdrext:sdes:mid") {
        return "urn:ietf:params:rtp-hdrext:sdes:mid"
      }
    case 43:
      if equals("urn:ietf:params:rtp-hdrext:ssrc-audio-level") {
        return "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
      }
      if equals("urn:ietf:params:rtp-hdrext:csrc-audio-level") {
        return "urn:ietf:params:rtp-hdrext:csrc-audio-level"
      }
    case 45:
      if equals("urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id") {
        return "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
      }
    case 54:
      if equals("urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id") {
        return "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
      }
    case 56:
      if equals("http://www.webrtc.org/experiments/rtp-hdrext/color-space") {
        return "http://www.webrtc.org/experiments/rtp-hdrext/color-space"
      }
    case 57:
      if equals("http://www.webrtc.org/experiments/rtp-hdrext/video-timing") {
        return "http://www.webrtc.org/experiments/rtp-hdrext/video-timing"
      }
    case 58:
      if equals("http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time") {
        return "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
      }
      if equals("http://www.webrtc.org/experiments/rtp-hdrext/playout-delay") {
        return "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"
      }
    case 61:
      if equals("http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time") {
        return "http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time"
      }
    case 63:
      if equals("http://www.webrtc.org/experiments/rtp-hdrext/video-content-type") {
        return "http://www.webrtc.org/experiments/rtp-hdrext/video-content-type"
      }
    case 72:
      if equals("http://www.webrtc.org/experiments/rtp-hdrext/generic-frame-descriptor-00") {
        return "http://www.webrtc.org/experiments/rtp-hdrext/generic-frame-descriptor-00"
      }
    case 73:
      if equals("http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01") {
        return "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
      }
    case 87:
      if equals(
        "https://aomediacodec.github.io/av1-rtp-spec/#dependency-descriptor-rtp-header-extension")
      {
        return
          "https://aomediacodec.github.io/av1-rtp-spec/#dependency-descriptor-rtp-header-extension"
      }
    default: break
    }
    return string
  }

  func dropFirst(_ n: Int) -> ByteSlice { ByteSlice(base, min(lo + n, hi), hi) }

  @inline(__always)
  func equals(_ literal: StaticString) -> Bool {
    guard literal.utf8CodeUnitCount == count else { return false }
    return sameBytes(literal.utf8Start, count)
  }

  /// `true` when the `count` bytes of `base` starting at `other` equal this slice's bytes (the
  /// same buffer; `other + count` must not pass the end).
  func equalsBytes(at other: Int) -> Bool {
    guard other >= 0, other + count <= base.count, let b = base.baseAddress else { return false }
    return memcmp(b + lo, b + other, count) == 0
  }

  func hasPrefix(_ literal: StaticString) -> Bool {
    let n = literal.utf8CodeUnitCount
    guard n <= count else { return false }
    return sameBytes(literal.utf8Start, n)
  }

  /// `true` when the first `n` bytes (`n <= count`) equal `p[0..<n]`; one `memcmp` instead of a
  /// byte loop, which matters for the 30–90 byte header extension URIs.
  @inline(__always)
  private func sameBytes(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
    guard n > 0 else { return true }
    guard let b = base.baseAddress, p[0] == b[lo] else { return false }
    if n < 16 {
      for i in 1..<n where p[i] != b[lo + i] { return false }
      return true
    }
    return memcmp(p, b + lo, n) == 0
  }

  private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

  func trimmed() -> ByteSlice {
    var l = lo
    var h = hi
    while l < h, Self.isSpace(base[l]) { l += 1 }
    while h > l, Self.isSpace(base[h - 1]) { h -= 1 }
    return ByteSlice(base, l, h)
  }

  /// Removes and returns the next space-separated field (runs of spaces collapse).
  mutating func nextField() -> ByteSlice? {
    while lo < hi, Self.isSpace(base[lo]) { lo += 1 }
    guard lo < hi else { return nil }
    let start = lo
    while lo < hi, !Self.isSpace(base[lo]) { lo += 1 }
    return ByteSlice(base, start, lo)
  }

  /// Number of space-separated fields.
  func fieldCount() -> Int {
    var copy = self
    var n = 0
    while copy.nextField() != nil { n += 1 }
    return n
  }

  /// Splits at the first `byte`: (before, after) or (whole, nil).
  func splitOnce(_ byte: UInt8) -> (ByteSlice, ByteSlice?) {
    var i = lo
    while i < hi {
      if base[i] == byte { return (ByteSlice(base, lo, i), ByteSlice(base, i + 1, hi)) }
      i += 1
    }
    return (self, nil)
  }

  /// Removes and returns the text up to the next `byte` (the rest after it stays); nil when
  /// already exhausted. Empty pieces are returned.
  mutating func nextPiece(_ byte: UInt8, _ done: inout Bool) -> ByteSlice? {
    guard !done else { return nil }
    var i = lo
    while i < hi, base[i] != byte { i += 1 }
    let piece = ByteSlice(base, lo, i)
    if i < hi { lo = i + 1 } else { done = true }
    return piece
  }

  /// A decimal number without sign, nil on any other byte or overflow.
  func uint64() -> UInt64? {
    guard lo < hi else { return nil }
    var v: UInt64 = 0
    // Up to 19 digits cannot overflow 64 bits: no overflow checks per digit (SSRCs, priorities
    // and ports are all that short).
    if hi - lo <= 19 {
      for i in lo..<hi {
        let d = base[i] &- 0x30
        guard d < 10 else { return nil }
        v = v &* 10 &+ UInt64(d)
      }
      return v
    }
    for i in lo..<hi {
      let d = base[i] &- 0x30
      guard d < 10 else { return nil }
      let (m, o1) = v.multipliedReportingOverflow(by: 10)
      let (s, o2) = m.addingReportingOverflow(UInt64(d))
      guard !o1, !o2 else { return nil }
      v = s
    }
    return v
  }

  func int() -> Int? {
    guard let v = uint64(), v <= UInt64(Int.max) else { return nil }
    return Int(v)
  }

  @inline(__always)
  func uint32() -> UInt32? {
    guard let v = uint64(), v <= UInt64(UInt32.max) else { return nil }
    return UInt32(v)
  }

  func int(in range: ClosedRange<Int>) -> Int? {
    guard let v = int(), range.contains(v) else { return nil }
    return v
  }
}

extension String {
  /// Runs `body` on the UTF-8 bytes of a contiguous copy of `text`.
  static func withBytes<R>(of text: some StringProtocol, _ body: (ByteSlice) -> R) -> R {
    var s = String(text)
    return s.withUTF8 { buf in body(ByteSlice(buf, 0, buf.count)) }
  }
}

/// "0"..."127" (RTP payload types in `m=` formats), made once: each is a small string, so
/// handing one out neither allocates nor validates UTF-8.
private let smallDecimalStrings: [String] = (0..<128).map { String($0) }
