import WCSEventLoop
import WCSProtocols

/// Settings of a `PeerConnection`.
public struct PeerConnectionConfiguration: Sendable {
  /// STUN servers for server-reflexive candidates (RFC 8445 §5.1.1.2); empty for none.
  public var stunServers: [ICETransportAddress]
  /// TURN servers for relayed candidates (RFC 8656); empty for none.
  public var turnServers: [ICETURNServer]
  /// How TURN servers reached over TLS (`ICETURNTransport.tls`) are authenticated: their
  /// certificate verified against the system store by default.
  public var turnTLSOptions = TLSClientOptions()
  /// Which local candidates ICE gathers, signals and pairs (W3C `iceTransportPolicy`).
  /// `.relay` uses only TURN relayed candidates (needs `turnServers`; none with `iceLite`):
  /// the local description then carries no candidate — relayed ones arrive later as
  /// `.localCandidate` events to trickle — and no `a=end-of-candidates` until gathering
  /// finished; host addresses are never revealed or used directly.
  public var iceTransportPolicy: ICETransportPolicy
  /// Answer as an ICE-lite agent (RFC 8445 §2.5): only answer checks, never send them. For the
  /// local server, which has public (or loopback) addresses. Only used by the answerer.
  public var iceLite: Bool
  /// The transport of host candidates: `.udp` (default), one UDP socket per host address; or
  /// `.tcp`, ICE-TCP only (RFC 6544, as the iOS SDK's TCP transport and a WCS set up for media
  /// over TCP): an active TCP candidate per host address for a full agent, which connects to
  /// the peer's passive candidates, or a listener and passive candidate per host address for
  /// an ICE-lite answerer. With `.tcp` STUN and TURN over UDP are not used; TURN servers
  /// reached over TCP or TLS still give relayed candidates, on UDP sockets that offer no host
  /// candidate of their own.
  public var iceCandidateProtocol: ICETransportProtocol = .udp
  /// Also use loopback addresses as host candidates (tests and the local server on one machine).
  public var allowLoopback: Bool
  /// The host addresses to bind, one UDP socket each; `nil` means every address of every
  /// interface that is up (plus loopback when `allowLoopback`).
  public var hostAddresses: [ICEIPAddress]?
  /// With `hostAddresses` `nil`: only the addresses of these interfaces (names as `ip link`
  /// shows them, e.g. `eth0`); `nil` means every interface.
  public var hostInterfaces: [String]?
  /// Whether the media connection watches the host's addresses (rtnetlink, on its loop) and
  /// fails with `MediaConnectionFailure.networkChanged` when an address it uses goes away or a
  /// usable one appears while it is disconnected, so the SDK restarts ICE (RFC 8445 §9).
  public var watchesNetworkChanges = true
  /// Bind sockets to the first free port of this range; `nil` lets the kernel pick.
  public var portRange: ClosedRange<UInt16>?
  /// Our DTLS identity, its SHA-256 fingerprint goes into our SDP; `nil` uses
  /// `DTLSCertificate.shared` (made on first use).
  public var certificate: DTLSCertificate?
  /// SRTP protection profiles offered in DTLS `use_srtp`, preferred first (RFC 5764 §4.1.1).
  public var srtpProfiles: [DTLSSRTPProfile]
  /// Give up (state `.failed`) when DTLS has not connected this long after it started.
  public var dtlsHandshakeTimeout: Duration
  /// When our DTLS role was guessed (an answer without `a=setup`, taken as `active`), turn into
  /// the DTLS client if no ClientHello arrived this long after ICE connected.
  public var dtlsClientFallback: Duration
  /// ICE consent (RFC 7675): without responses for this long the state becomes `.disconnected`.
  public var iceDisconnectedTimeout: Duration
  /// ICE consent lost after this long without responses: `.failed` (RFC 7675: 30 s).
  public var iceConsentTimeout: Duration
  /// Time between ICE consent checks on the selected pair (RFC 7675 §5.1: 5 s, ±20 %
  /// jitter); keep it below `iceDisconnectedTimeout`.
  public var iceConsentInterval: Duration
  /// ICE pacing interval Ta between new checks. RFC 8445 §14.2 recommends 50 ms and
  /// lets it be configured; we default to 20 ms because nomination waits for the next slot, so Ta
  /// bounds how fast ICE completes, and one bundled component sends at most 50 checks/s of about
  /// 100 bytes — well inside the pacing budget the RFC protects. A `Duration` (20 ms by
  /// default), taken to nanoseconds by the agent.
  public var icePacingInterval: Duration
  /// Give up (state `.failed(.iceFailed)`) when the connection is not `.connected` this long
  /// after the remote description was applied. A full agent also fails on its own once every
  /// pair failed; an ICE-lite agent never sends checks, so without this a peer that never
  /// starts ICE would hold the sockets forever. Also the ICE-lite consent limit: once
  /// connected, a lite answerer fails when no authenticated check arrived for
  /// `iceConsentTimeout` seconds.
  public var connectTimeout: Duration
  /// The receive side's latency and wake-up knobs (`ReceiveTuning`: each with its unit,
  /// default, reason and reader). Defaults: `ReceiveTuning()`.
  public var receiveTuning: ReceiveTuning
  /// `receiveTuning.receiveCoalescing` as a `Duration` (there with its reason and cost).
  public var receiveCoalescing: Duration {
    get { receiveTuning.receiveCoalescing.duration }
    set { receiveTuning.receiveCoalescing = MediaDuration(newValue) }
  }
  /// A network to emulate on every datagram of this connection's sockets (ICE, DTLS, SRTP and
  /// TURN alike): loss, delay, jitter, reordering, duplication and a bandwidth cap, `send` on
  /// what we send and `receive` on what we receive (`NetworkEmulation`; `NetworkEmulation(spec:)`
  /// parses `loss=5%,delay=40ms`). Its `counters` total what it did over all the connections
  /// made with it. `nil` (default): the real network only.
  public var networkEmulation: NetworkEmulation?

  /// A configuration with the defaults: no STUN/TURN servers, full ICE, no loopback, every
  /// interface, any port, the shared certificate, `DTLSSRTPProfile.defaultOffer`, a 10 s
  /// DTLS handshake timeout, 1 s client fallback, consent checks every 5 s with 10 s/30 s
  /// timeouts, Ta 20 ms, a 30 s connect timeout, every candidate type (`.all`), a 25 ms
  /// receive coalescing window, no network emulation.
  public init(
    stunServers: [ICETransportAddress] = [], turnServers: [ICETURNServer] = [],
    iceLite: Bool = false, allowLoopback: Bool = false, hostAddresses: [ICEIPAddress]? = nil,
    portRange: ClosedRange<UInt16>? = nil, certificate: DTLSCertificate? = nil,
    srtpProfiles: [DTLSSRTPProfile] = DTLSSRTPProfile.defaultOffer,
    dtlsHandshakeTimeout: Duration = .seconds(10), dtlsClientFallback: Duration = .seconds(1),
    iceDisconnectedTimeout: Duration = .seconds(10), iceConsentTimeout: Duration = .seconds(30),
    iceConsentInterval: Duration = .seconds(5), icePacingInterval: Duration = .milliseconds(20),
    connectTimeout: Duration = .seconds(30), iceTransportPolicy: ICETransportPolicy = .all,
    receiveCoalescing: Duration = .milliseconds(25), networkEmulation: NetworkEmulation? = nil
  ) {
    self.networkEmulation = networkEmulation
    receiveTuning = ReceiveTuning(receiveCoalescing: MediaDuration(receiveCoalescing))
    self.iceTransportPolicy = iceTransportPolicy
    self.stunServers = stunServers
    self.turnServers = turnServers
    self.iceLite = iceLite
    self.allowLoopback = allowLoopback
    self.hostAddresses = hostAddresses
    self.portRange = portRange
    self.certificate = certificate
    self.srtpProfiles = srtpProfiles
    self.dtlsHandshakeTimeout = dtlsHandshakeTimeout
    self.dtlsClientFallback = dtlsClientFallback
    self.iceDisconnectedTimeout = iceDisconnectedTimeout
    self.iceConsentTimeout = iceConsentTimeout
    self.iceConsentInterval = iceConsentInterval
    self.icePacingInterval = icePacingInterval
    self.connectTimeout = connectTimeout
  }

  /// For tests and local use: loopback allowed and only 127.0.0.1 bound.
  public static var loopback: PeerConnectionConfiguration {
    PeerConnectionConfiguration(allowLoopback: true, hostAddresses: [.loopbackV4])
  }
}
