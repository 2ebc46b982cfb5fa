/// Inputs of ``SDPOfferBuilder``: which media to offer and the local identifiers and
/// transport credentials to put in the offer.
public struct SDPOfferParameters: Hashable, Sendable {
  /// The audio m-section: Opus/48000/2 (RFC 7587) plus optional PCMU/PCMA (RFC 3551).
  public struct Audio: Hashable, Sendable {
    /// Direction attribute of the section.
    public var direction: MediaDirection
    /// Local sending SSRC (RFC 3550 §8); written with cname/msid only when sending.
    public var ssrc: UInt32
    /// MediaStreamTrack id for `a=msid` (RFC 8830).
    public var trackId: String
    /// Opus payload type (dynamic, 96...127; Chrome uses 111).
    public var opusPayloadType: Int
    /// Also offer PCMU (PT 0) and PCMA (PT 8) after Opus.
    public var includeG711: Bool

    /// Creates the audio parameters.
    public init(
      direction: MediaDirection = .sendonly, ssrc: UInt32, trackId: String,
      opusPayloadType: Int = 111, includeG711: Bool = true
    ) {
      self.direction = direction
      self.ssrc = ssrc
      self.trackId = trackId
      self.opusPayloadType = opusPayloadType
      self.includeG711 = includeG711
    }
  }

  /// Retransmission (RFC 4588) for VP8: an `rtx` payload type with `apt`, and an SSRC paired
  /// with the media SSRC by `a=ssrc-group:FID` (RFC 5576 §4.2). H.264's RTX format
  /// (`H264.retransmissionPayloadType`) shares the SSRC: one codec is sent at a time.
  public struct RTX: Hashable, Sendable {
    /// The RTX payload type.
    public var payloadType: Int
    /// The RTX SSRC.
    public var ssrc: UInt32

    /// Creates RTX parameters.
    public init(payloadType: Int = 97, ssrc: UInt32) {
      self.payloadType = payloadType
      self.ssrc = ssrc
    }
  }

  /// The video m-section: VP8/90000 (RFC 7741) with optional RTX.
  public struct Video: Hashable, Sendable {
    /// Direction attribute of the section.
    public var direction: MediaDirection
    /// Local sending SSRC; written with cname/msid only when sending.
    public var ssrc: UInt32
    /// MediaStreamTrack id for `a=msid`.
    public var trackId: String
    /// VP8 payload type (Chrome uses 96).
    public var vp8PayloadType: Int
    /// Optional RTX.
    public var rtx: RTX?
    /// H.264 formats (RFC 6184) offered besides VP8, in this order (all before VP8 when the
    /// first is preferred, else after it); empty for VP8 only.
    public var h264Formats: [H264] = []
    /// The first of `h264Formats`, nil for VP8 only; setting it offers that one format.
    public var h264: H264? {
      get { h264Formats.first }
      set { h264Formats = newValue.map { [$0] } ?? [] }
    }

    /// Creates the video parameters.
    public init(
      direction: MediaDirection = .sendonly, ssrc: UInt32, trackId: String,
      vp8PayloadType: Int = 96, rtx: RTX? = nil
    ) {
      self.direction = direction
      self.ssrc = ssrc
      self.trackId = trackId
      self.vp8PayloadType = vp8PayloadType
      self.rtx = rtx
    }
  }

  /// An H.264 format of the video section.
  public struct H264: Hashable, Sendable {
    /// Its payload type (Chrome offers constrained baseline mode 1 at 125 or 102).
    public var payloadType: Int
    /// `profile-level-id`, `level-asymmetry-allowed`, `packetization-mode` (RFC 6184 §8.1).
    public var formatParameters: H264FormatParameters
    /// Listed before VP8 on the `m=` line: the answerer's first choice (RFC 3264 §5.1).
    public var isPreferred: Bool
    /// Its RTX payload type (`a=fmtp:<rtx> apt=<payloadType>`, RFC 4588 §8.1), written when the
    /// video section has RTX (`Video.rtx`, whose SSRC it shares); nil for none.
    public var retransmissionPayloadType: Int? = nil

    /// Creates the format: constrained baseline 3.1, mode 1, after VP8 unless preferred.
    public init(
      payloadType: Int = 102, formatParameters: H264FormatParameters = H264FormatParameters(),
      isPreferred: Bool = false
    ) {
      self.payloadType = payloadType
      self.formatParameters = formatParameters
      self.isPreferred = isPreferred
    }
  }

  /// Audio section, nil for none.
  public var audio: Audio?
  /// Video section, nil for none.
  public var video: Video?
  /// `o=` session id (RFC 8829 §5.2.1: a random 62-bit value).
  public var sessionId: UInt64
  /// `o=` session version, incremented on every new offer.
  public var sessionVersion: UInt64
  /// RTCP CNAME (RFC 7022: a random 16-byte-ish token per session).
  public var cname: String
  /// MediaStream id for `a=msid`.
  public var streamId: String
  /// Local `a=ice-ufrag` (RFC 8839 §5.4: ≥ 4 ice-chars).
  public var iceUfrag: String
  /// Local `a=ice-pwd` (≥ 22 ice-chars).
  public var icePwd: String
  /// Certificate fingerprint of the local DTLS certificate (RFC 8122 §5).
  public var fingerprint: CertificateFingerprint
  /// `a=setup` of the offer; `actpass` per RFC 8842 §5.2.
  public var setup: DTLSSetup
  /// Local candidates written into every m-section (component 1, RTCP muxed); empty when the
  /// offer is sent before gathering, as the Web SDK does (wcs-protocol.md §4.3).
  public var candidates: [ICECandidateAttribute]
  /// Write `a=end-of-candidates` after the candidates (RFC 8840 §8.2).
  public var endOfCandidates: Bool

  /// Creates the parameters.
  public init(
    audio: Audio?, video: Video?, sessionId: UInt64, sessionVersion: UInt64 = 2,
    cname: String, streamId: String, iceUfrag: String, icePwd: String,
    fingerprint: CertificateFingerprint, setup: DTLSSetup = .actpass,
    candidates: [ICECandidateAttribute] = [], endOfCandidates: Bool = false
  ) {
    self.audio = audio
    self.video = video
    self.sessionId = sessionId
    self.sessionVersion = sessionVersion
    self.cname = cname
    self.streamId = streamId
    self.iceUfrag = iceUfrag
    self.icePwd = icePwd
    self.fingerprint = fingerprint
    self.setup = setup
    self.candidates = candidates
    self.endOfCandidates = endOfCandidates
  }
}
