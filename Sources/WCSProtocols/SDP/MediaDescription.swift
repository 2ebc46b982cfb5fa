/// One `m=` section (RFC 8866 §5.14) with its `i=`, `c=`, `b=`, `k=` and `a=` lines.
public struct MediaDescription: Hashable, Sendable {
  /// Media type: `audio`, `video`, `application`, ... (RFC 8866 §5.14), as written.
  public var media: String
  /// Transport port; 0 means the section is rejected/disabled (RFC 3264 §6, RFC 8829 §5.3.1).
  public var port: Int
  /// Optional number of ports (`m=video 49170/2 ...`).
  public var portCount: Int?
  /// Transport protocol, e.g. `UDP/TLS/RTP/SAVPF` (RFC 5764 §8) or `UDP/DTLS/SCTP`.
  public var proto: String
  /// Media formats: RTP payload types as decimal strings for RTP profiles, or e.g.
  /// `webrtc-datachannel` for SCTP (RFC 8841).
  public var formats: [String]
  /// `i=` media title.
  public var information: String?
  /// Media-level `c=` lines (several are allowed for multicast).
  public var connections: [SDPConnection]
  /// Media-level `b=` lines, in order.
  public var bandwidths: [SDPBandwidth]
  /// `k=` encryption key, verbatim value (obsolete).
  public var encryptionKey: String?
  /// Media-level `a=` attributes, in order.
  public var attributes: [SDPAttribute]
  /// Lines of unknown type or that could not be parsed, verbatim, in order (written before
  /// the attributes).
  public var unknownLines: [String]

  /// Creates an `m=` section.
  // Not inlined: inlined, the optimizer built the value in a temporary and then copied it
  // (retaining and releasing every field) for every section parsed (docs/performance.md).
  @inline(never)
  public init(
    media: String, port: Int, portCount: Int? = nil, proto: String, formats: [String],
    information: String? = nil, connections: [SDPConnection] = [],
    bandwidths: [SDPBandwidth] = [], encryptionKey: String? = nil,
    attributes: [SDPAttribute] = [], unknownLines: [String] = []
  ) {
    self.media = media
    self.port = port
    self.portCount = portCount
    self.proto = proto
    self.formats = formats
    self.information = information
    self.connections = connections
    self.bandwidths = bandwidths
    self.encryptionKey = encryptionKey
    self.attributes = attributes
    self.unknownLines = unknownLines
  }

  /// The `m=` formats that are RTP payload types (0...127), in `m=` order (RFC 3551 §6).
  public var payloadTypes: [Int] {
    formats.compactMap { f in Int(f).flatMap { (0...127).contains($0) ? $0 : nil } }
  }

  /// `true` when the port is 0: rejected in an answer or disabled (RFC 3264 §6).
  public var isRejected: Bool { port == 0 }
}
