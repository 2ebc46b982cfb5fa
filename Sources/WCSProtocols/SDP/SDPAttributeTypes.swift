/// `a=rtpmap:<payload type> <encoding name>/<clock rate>[/<encoding parameters>]`
/// (RFC 8866 §6.6).
public struct RTPMap: Hashable, Sendable {
  /// RTP payload type, 0...127 (RFC 3550 §5.1).
  public var payloadType: Int
  /// Encoding name as written, e.g. `opus`, `VP8`; compare case-insensitively (RFC 4855 §3).
  public var encodingName: String
  /// RTP clock rate in Hz, e.g. 48000 for Opus, 90000 for video.
  public var clockRate: Int
  /// Encoding parameters: the number of audio channels (`2` for Opus), if present.
  public var channels: Int?

  /// Creates an rtpmap.
  public init(payloadType: Int, encodingName: String, clockRate: Int, channels: Int? = nil) {
    self.payloadType = payloadType
    self.encodingName = encodingName
    self.clockRate = clockRate
    self.channels = channels
  }

  /// `true` when `encodingName` equals `name` ignoring ASCII case.
  public func isCodec(_ name: String) -> Bool { encodingName.lowercased() == name.lowercased() }
}

/// One `name[=value]` entry of an fmtp parameter list (RFC 8866 §6.15).
public struct FormatParameter: Hashable, Sendable {
  /// Parameter name, e.g. `minptime`, `apt`, or a valueless token such as `0-15`.
  public var name: String
  /// Value after the first `=`, nil for a valueless parameter.
  public var value: String?

  /// Creates a parameter.
  public init(_ name: String, _ value: String?) {
    self.name = name
    self.value = value
  }
}

/// `a=fmtp:<payload type> <params>` (RFC 8866 §6.15). The parameter list is split on `;` with
/// surrounding spaces trimmed; unknown parameters and their order are kept.
public struct FormatParameters: Hashable, Sendable {
  /// The payload type these parameters apply to.
  public var payloadType: Int
  /// Parameters in written order.
  public var parameters: [FormatParameter]

  /// Creates an fmtp attribute.
  public init(payloadType: Int, parameters: [FormatParameter]) {
    self.payloadType = payloadType
    self.parameters = parameters
  }

  /// The value of the first parameter called `name` (ASCII case-insensitive), nil if absent
  /// or valueless.
  public subscript(name: String) -> String? {
    let key = name.lowercased()
    return parameters.first { $0.name.lowercased() == key }?.value
  }

  /// Sets `name=value`: replaces the value of an existing parameter in place (keeping its
  /// position) or appends it at the end.
  public mutating func set(_ name: String, _ value: String?) {
    let key = name.lowercased()
    if let i = parameters.firstIndex(where: { $0.name.lowercased() == key }) {
      parameters[i].value = value
    } else {
      parameters.append(FormatParameter(name, value))
    }
  }

  /// The `apt` value (RFC 4588 §8.1): the payload type an RTX payload type retransmits.
  public var associatedPayloadType: Int? { self["apt"].flatMap { Int($0) } }
}

/// `a=rtcp-fb:<payload type or *> <type> [<parameter>]` (RFC 4585 §4.2), e.g. `nack pli`,
/// `ccm fir` (RFC 5104), `goog-remb`, `transport-cc`.
public struct RTCPFeedback: Hashable, Sendable {
  /// The payload type, nil for the wildcard `*`.
  public var payloadType: Int?
  /// Feedback type: `nack`, `ccm`, `goog-remb`, `transport-cc`, `trr-int`, ...
  public var type: String
  /// The rest of the line after the type (e.g. `pli`, `fir`), verbatim.
  public var parameter: String?

  /// Creates a feedback attribute.
  public init(payloadType: Int?, type: String, parameter: String? = nil) {
    self.payloadType = payloadType
    self.type = type
    self.parameter = parameter
  }
}

/// `a=extmap:<id>[/<direction>] <URI> [<extension attributes>]` (RFC 8285 §8).
public struct HeaderExtensionMap: Hashable, Sendable {
  /// Local identifier, 1...14 (one-byte) or 1...255 (two-byte header) (RFC 8285 §4).
  public var id: Int
  /// Optional direction restriction.
  public var direction: MediaDirection?
  /// Extension URI, e.g. `urn:ietf:params:rtp-hdrext:sdes:mid`.
  public var uri: String
  /// Extension attributes after the URI, verbatim.
  public var extensionAttributes: String?

  /// Creates an extmap attribute.
  public init(
    id: Int, direction: MediaDirection? = nil, uri: String, extensionAttributes: String? = nil
  ) {
    self.id = id
    self.direction = direction
    self.uri = uri
    self.extensionAttributes = extensionAttributes
  }
}

/// `a=ssrc:<ssrc> <attribute>[:<value>]` (RFC 5576 §4.1), e.g. `cname:xyz`, `msid:s t`.
public struct SSRCAttribute: Hashable, Sendable {
  /// Synchronization source, 32 bits (RFC 3550 §3).
  public var ssrc: UInt32
  /// Source attribute name, e.g. `cname`, `msid`, `mslabel`, `label`.
  public var attribute: String
  /// Text after the first `:`, verbatim; nil when there is none.
  public var value: String?

  /// Creates a source attribute.
  public init(ssrc: UInt32, attribute: String, value: String?) {
    self.ssrc = ssrc
    self.attribute = attribute
    self.value = value
  }
}

/// `a=ssrc-group:<semantics> <ssrc>...` (RFC 5576 §4.2), e.g. `FID` pairing a media SSRC with
/// its RTX SSRC (RFC 4588 §8.2).
public struct SSRCGroup: Hashable, Sendable {
  /// Semantics token: `FID`, `SIM`, `FEC`, ...
  public var semantics: String
  /// SSRCs in order.
  public var ssrcs: [UInt32]

  /// Creates a source group.
  public init(semantics: String, ssrcs: [UInt32]) {
    self.semantics = semantics
    self.ssrcs = ssrcs
  }
}

/// `a=msid:<stream id> [<track id>]` (RFC 8830 §2); stream id `-` means "no stream".
public struct MediaStreamID: Hashable, Sendable {
  /// MediaStream id.
  public var streamId: String
  /// MediaStreamTrack id (the "appdata").
  public var trackId: String?

  /// Creates an msid attribute.
  public init(streamId: String, trackId: String?) {
    self.streamId = streamId
    self.trackId = trackId
  }
}

/// `a=group:<semantics> <identification-tag>...` (RFC 5888 §5), e.g. `BUNDLE 0 1`
/// (RFC 9143 §7.1).
public struct SDPGroup: Hashable, Sendable {
  /// Semantics token, e.g. `BUNDLE`, `LS`.
  public var semantics: String
  /// The `a=mid` values of the grouped m-sections, in order.
  public var mids: [String]

  /// Creates a group attribute.
  public init(semantics: String, mids: [String]) {
    self.semantics = semantics
    self.mids = mids
  }
}

/// `a=fingerprint:<hash function> <XX:XX:...>` (RFC 8122 §5): the hash of the DTLS certificate.
public struct CertificateFingerprint: Hashable, Sendable {
  /// Hash function name from the IANA registry, lower-cased, e.g. `sha-256`.
  public var hashFunction: String
  /// The digest bytes (32 for sha-256).
  public var bytes: [UInt8]

  /// Creates a fingerprint; `hashFunction` is lower-cased (names are case-insensitive).
  public init(hashFunction: String, bytes: [UInt8]) {
    self.hashFunction = hashFunction.lowercased()
    self.bytes = bytes
  }

  /// Parses `sha-256 AB:CD:...`; returns nil if the hash name is missing or any byte is not two
  /// hex digits.
  public init?(attributeValue: some StringProtocol) {
    guard let f = String.withBytes(of: attributeValue, { CertificateFingerprint(bytes: $0) })
    else { return nil }
    self = f
  }

  init?(bytes value: ByteSlice) {
    var c = value
    guard let hash = c.nextField() else { return nil }
    // The rest is the hex field: a space or tab inside it (what made a third field before) fails
    // the digit/colon check below, so the result is the same without a separate field scan.
    let hex = c.trimmed()
    // "XX:" per byte, the last without the colon.
    guard !hex.isEmpty, (hex.count + 1) % 3 == 0, let base = hex.base.baseAddress else {
      return nil
    }
    let n = (hex.count + 1) / 3
    let p = base + hex.lo
    var valid = true
    let bytes = [UInt8](unsafeUninitializedCapacity: n) { buf, count in
      guard let out = buf.baseAddress else { return }
      var k = 0
      // In bounds by the length check: for k < n the digits are at 3k and 3k+1 <= count-1, and
      // the colon at 3k+2 is read only for k < n-1.
      while k < n {
        let i = k &* 3
        let h = Self.hexValue(p[i])
        let l = Self.hexValue(p[i &+ 1])
        let colon = k == n &- 1 ? UInt8(ascii: ":") : p[i &+ 2]
        guard h | l < 16, colon == UInt8(ascii: ":") else {
          valid = false
          break
        }
        out[k] = h << 4 | l
        k &+= 1
      }
      count = k
    }
    guard valid else { return nil }
    // Browsers write the name in lower-case ASCII; `lowercased()` (a new string) is then a no-op.
    var upper = false
    for i in 0..<hash.count {
      let b = hash.byte(i)
      if b >= 0x80 || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) { upper = true }
    }
    if upper {
      self.init(hashFunction: hash.string, bytes: bytes)
    } else {
      self.init(lowercaseHashFunction: hash.token, bytes: bytes)
    }
  }

  private init(lowercaseHashFunction: String, bytes: [UInt8]) {
    hashFunction = lowercaseHashFunction
    self.bytes = bytes
  }

  /// The value of a hex digit (either case), or 0xFF: no optional in the per-byte loop.
  @inline(__always)
  private static func hexValue(_ b: UInt8) -> UInt8 {
    let d = b &- UInt8(ascii: "0")
    if d < 10 { return d }
    // `| 0x20` folds exactly `A`...`F` onto `a`...`f` within this range.
    let l = (b | 0x20) &- UInt8(ascii: "a")
    return l < 6 ? l + 10 : 0xFF
  }

  /// The digest as upper-case hex pairs joined by `:` (RFC 8122 §5).
  public var hexString: String {
    var w = ByteWriter(capacity: bytes.count * 3)
    w.hexPairs(bytes)
    return w.string
  }
}
