import WCSEventLoop
import WCSProtocols

extension PeerConnection {
  /// What changes in a connection, used on its loop only (`PeerConnection.loopState`).
  struct LoopState {
    var state: PeerConnectionState = .new {
      didSet { reception.isFinal = state.isFinal }
    }
    var signalingRole: SignalingRole?
    var localSetup: DTLSSetup?
    var remoteDescription: PeerConnectionTransportDescription?
    var onEvent: EventHandler?
    var onRTP: RTPHandler?
    var onRTCP: RTCPHandler?
    var remoteAnswer: SDPAnswerAnalysis?
    var remoteOffer: SessionDescription?
    var localSessionDescription: SessionDescription?
    var answerOrigin: SDPLocalOrigin?

    var sockets: [EventLoopUDPSocket] = []
    /// Connections to TURN servers reached over TCP (`PeerConnection+TURNStream.swift`).
    var turnStreams: [PeerConnectionTURNStream] = []
    /// ICE-TCP listeners and connections (`PeerConnection+ICETCP.swift`).
    let iceTCP = PeerConnectionICETCP()
    var certificate: DTLSCertificate?
    var agent: ICEAgent?
    var dtls: DTLSEndpoint?
    var dtlsRole: DTLSRole?
    var srtpOutbound: SRTPSession?
    var srtpInbound: SRTPSession?
    var selectedPair: ICECandidatePair? {
      didSet { reception.selectedRemoteAddress = selectedPair?.remote.address }
    }
    /// Where DTLS goes before ICE selected a pair: the source of the last DTLS datagram,
    /// always an address ICE validated (`ICEAgent.isValidated`).
    var dtlsFallbackDestination: (socket: ICESocketID, address: ICETransportAddress)? {
      didSet { reception.dtlsFallbackAddress = dtlsFallbackDestination?.address }
    }
    /// What every received datagram looks at, in one value: one access of the connection per
    /// datagram instead of one per property. Kept by the properties above and `state`.
    private(set) var reception = Reception()
    var counters = PeerConnectionStats()
    var localSendSSRCs: Set<UInt32> = []
    /// Scratch space for protecting outgoing packets in place (allocated once, freed by the
    /// connection's `deinit`).
    let sendBuffer: UnsafeMutableRawBufferPointer
    var timer: EventLoopTimer?
    var timerDeadline: MediaInstant?
    /// Connect timeout and ICE-lite consent expiry (see `PeerConnection+Watchdog.swift`).
    var watchdog: EventLoopTimer?
    /// When the connection must be `.connected` by, set with the remote description.
    var connectDeadline: MediaInstant?
    var hasConnected = false

    init(sendBuffer: UnsafeMutableRawBufferPointer) {
      self.sendBuffer = sendBuffer
    }

    /// Sets `reception.peerClosedDTLS` (the rest of `reception` follows its properties).
    mutating func setPeerClosedDTLS(_ closed: Bool) {
      reception.peerClosedDTLS = closed
    }
  }

  /// What every received datagram looks at (`LoopState.reception`). Plain values only, so
  /// reading it copies no reference.
  struct Reception {
    /// `state.isFinal`.
    var isFinal = false
    /// `selectedPair?.remote.address`.
    var selectedRemoteAddress: ICETransportAddress?
    /// `dtlsFallbackDestination?.address`.
    var dtlsFallbackAddress: ICETransportAddress?
    /// Whether the peer sent a DTLS close_notify.
    var peerClosedDTLS = false

    /// Whether SRTP from `source` is taken: from the selected pair or, before our nomination
    /// completes, from the address the verified DTLS handshake ran with (see `receiveSRTP`).
    func acceptsMedia(from source: ICETransportAddress) -> Bool {
      if let selected = selectedRemoteAddress { return selected == source }
      return dtlsFallbackAddress == source
    }
  }
}
