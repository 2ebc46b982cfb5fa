/// A whole SDP session description (RFC 8866 §5): the session-level lines followed by zero or
/// more media descriptions.
///
/// Values are kept as parsed; lines the parser did not understand are kept verbatim in
/// `attributes` (as ``SDPAttribute/other(name:value:)``) or `unknownLines`, so
/// parse → write → parse gives an equal value.
public struct SessionDescription: Hashable, Sendable {
  /// `v=` protocol version (RFC 8866 §5.1); always 0 in practice.
  public var version: Int
  /// `o=` origin (RFC 8866 §5.2). A missing `o=` is parsed as ``SDPOrigin/placeholder`` with a
  /// warning.
  public var origin: SDPOrigin
  /// `s=` session name (RFC 8866 §5.3); `"-"` when the SDP has none.
  public var sessionName: String
  /// `i=` session information (RFC 8866 §5.4).
  public var information: String?
  /// `u=` URI (RFC 8866 §5.5).
  public var uri: String?
  /// `e=` email addresses (RFC 8866 §5.6), in order.
  public var emails: [String]
  /// `p=` phone numbers (RFC 8866 §5.6), in order.
  public var phones: [String]
  /// Session-level `c=` connection data (RFC 8866 §5.7).
  public var connection: SDPConnection?
  /// Session-level `b=` bandwidth lines (RFC 8866 §5.8), in order.
  public var bandwidths: [SDPBandwidth]
  /// `t=` lines with their `r=` repeat lines (RFC 8866 §5.9/§5.10). Never empty after parsing:
  /// a missing `t=` is parsed as `t=0 0` with a warning.
  public var timing: [SDPTiming]
  /// `z=` time-zone adjustments, verbatim value (RFC 8866 §5.11).
  public var timeZones: String?
  /// `k=` encryption key, verbatim value (RFC 8866 §5.12, obsolete).
  public var encryptionKey: String?
  /// Session-level `a=` attributes (RFC 8866 §5.13), in order.
  public var attributes: [SDPAttribute]
  /// Session-level lines of unknown type or that could not be parsed, verbatim, in order
  /// (written before the attributes).
  public var unknownLines: [String]
  /// `m=` sections (RFC 8866 §5.14), in order; their index is the "m-line index" of
  /// RFC 3264 §6.
  public var media: [MediaDescription]

  /// Creates a description; every argument has the value an empty SDP would have.
  // Not inlined: inlined, the optimizer built the value in a temporary and then copied it
  // (retaining and releasing every field) for every section parsed (docs/performance.md).
  @inline(never)
  public init(
    version: Int = 0, origin: SDPOrigin = .placeholder, sessionName: String = "-",
    information: String? = nil, uri: String? = nil, emails: [String] = [], phones: [String] = [],
    connection: SDPConnection? = nil, bandwidths: [SDPBandwidth] = [],
    timing: [SDPTiming] = [SDPTiming()], timeZones: String? = nil, encryptionKey: String? = nil,
    attributes: [SDPAttribute] = [], unknownLines: [String] = [], media: [MediaDescription] = []
  ) {
    self.version = version
    self.origin = origin
    self.sessionName = sessionName
    self.information = information
    self.uri = uri
    self.emails = emails
    self.phones = phones
    self.connection = connection
    self.bandwidths = bandwidths
    self.timing = timing
    self.timeZones = timeZones
    self.encryptionKey = encryptionKey
    self.attributes = attributes
    self.unknownLines = unknownLines
    self.media = media
  }
}
