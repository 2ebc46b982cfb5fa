/// Byte-level helpers shared by the SDP parser: splitting on ASCII separators through the
/// UTF-8 view, which is much cheaper than `Character` iteration (a CRLF pair is one
/// `Character`, so Character-based splitting on `\n` would also miss it).
enum SDPScanner {
  /// Space-separated fields (runs of spaces and tabs collapse).
  static func fields(_ s: Substring) -> [Substring] {
    var out: [Substring] = []
    out.reserveCapacity(8)
    let u = s.utf8
    var start: Substring.Index? = nil
    var i = u.startIndex
    while i != u.endIndex {
      let c = u[i]
      if c == 0x20 || c == 0x09 {
        if let st = start {
          out.append(s[st..<i])
          start = nil
        }
      } else if start == nil {
        start = i
      }
      i = u.index(after: i)
    }
    if let st = start { out.append(s[st..<u.endIndex]) }
    return out
  }

  /// Splits at the first occurrence of `byte`: (before, after) or (whole, nil).
  static func splitOnce(_ s: Substring, _ byte: UInt8) -> (Substring, Substring?) {
    let u = s.utf8
    guard let i = u.firstIndex(of: byte) else { return (s, nil) }
    return (s[u.startIndex..<i], s[u.index(after: i)..<u.endIndex])
  }

  /// Splits on `byte`, keeping empty pieces.
  static func split(_ s: Substring, _ byte: UInt8) -> [Substring] {
    var out: [Substring] = []
    let u = s.utf8
    var st = u.startIndex
    var i = st
    while i != u.endIndex {
      if u[i] == byte {
        out.append(s[st..<i])
        st = u.index(after: i)
      }
      i = u.index(after: i)
    }
    out.append(s[st..<u.endIndex])
    return out
  }

  /// Removes leading and trailing spaces/tabs.
  static func trim(_ s: Substring) -> Substring {
    let u = s.utf8
    var lo = u.startIndex
    var hi = u.endIndex
    while lo != hi, u[lo] == 0x20 || u[lo] == 0x09 { lo = u.index(after: lo) }
    while hi != lo {
      let p = u.index(before: hi)
      guard u[p] == 0x20 || u[p] == 0x09 else { break }
      hi = p
    }
    return s[lo..<hi]
  }
}
