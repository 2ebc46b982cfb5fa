import Foundation
import WCSProtocols

extension PeerConnection {
  // MARK: - Incoming datagrams (RFC 7983)

  /// One datagram from a socket, demultiplexed by its first byte. The bytes live in the
  /// loop's shared receive buffer, so SRTP is unprotected in place there.
  func receive(_ bytes: UnsafeRawBufferPointer, from source: ICETransportAddress, socket: Int) {
    // One access for the state, the keys and the accepted addresses.
    let reception = reception
    guard !reception.isFinal else { return }
    switch RFC7983Demultiplexer.classify(bytes) {
    case .stun, .turnChannel:
      // ChannelData is from a TURN server: the agent's relay unwraps it as a Data indication.
      receiveSTUN(Array(bytes), from: source, socket: socket)
    case .dtls:
      // Only an address that proved the ICE credentials may talk DTLS: otherwise one spoofed
      // alert or ClientHello from anywhere fails the handshake or steers its replies.
      guard agent?.isValidated(source, socket: socket) == true else {
        counters.unexpectedDatagrams += 1
        return
      }
      receiveDTLS(Array(bytes), from: source, socket: socket)
    case .rtp:
      receiveSRTP(bytes, from: source, isRTCP: false, reception: reception)
    case .rtcp:
      receiveSRTP(bytes, from: source, isRTCP: true, reception: reception)
    case .zrtp, .drop:
      counters.unexpectedDatagrams += 1
    }
  }

  private func receiveSTUN(_ bytes: [UInt8], from source: ICETransportAddress, socket: Int) {
    guard let agent else { return }
    let result = agent.receive(bytes, from: source, socket: socket, now: loop.mediaNow())
    if case .relayedData(let data, let peer, let relay) = result {
      // Data unwrapped from a TURN relay: DTLS or SRTP from the peer behind it. It is handled
      // as arriving on the relay's pseudo socket, so DTLS replies go back through the relay;
      // `peer` is the pair's remote address, which is what receiveSRTP accepts.
      switch RFC7983Demultiplexer.classify(data) {
      case .dtls:
        if agent.isValidated(peer, socket: relay) {
          receiveDTLS(data, from: peer, socket: relay)
        } else {
          counters.unexpectedDatagrams += 1
        }
      case .rtp, .rtcp:
        let reception = reception
        data.withUnsafeBytes {
          receiveSRTP(
            $0, from: peer, isRTCP: RFC7983Demultiplexer.classify($0) == .rtcp,
            reception: reception)
        }
      default: counters.unexpectedDatagrams += 1
      }
    }
    serviceICE()
  }

  /// DTLS from an address ICE has validated (the callers check); `socket` is the relay's pseudo
  /// socket for data that came through TURN.
  private func receiveDTLS(_ bytes: [UInt8], from source: ICETransportAddress, socket: Int) {
    guard let dtls else {
      counters.unexpectedDatagrams += 1
      return
    }
    if selectedPair == nil { dtlsFallbackDestination = (socket, source) }
    if dtls.state == .new { tuneDTLSTimer(dtls) }
    handleDTLS(dtls.receive(bytes, now: loop.mediaNow()))
  }

  /// SRTP or SRTCP from `source`, checked against `reception` (the connection's, read once for
  /// the datagram).
  private func receiveSRTP(
    _ bytes: UnsafeRawBufferPointer, from source: ICETransportAddress, isRTCP: Bool,
    reception: Reception
  ) {
    // Media is accepted from the selected pair or, before our nomination completes, from the
    // address the verified DTLS handshake ran with: a controlled peer (a browser answering our
    // offer) starts DTLS and media on its own valid pair first, and dropping those packets loses
    // its first key frame. SRTP authentication still guards every packet.
    guard reception.acceptsMedia(from: source), let inbound = srtpInbound,
      !reception.peerClosedDTLS, !reception.isFinal
    else {
      counters.unexpectedDatagrams += 1
      return
    }
    guard let base = bytes.baseAddress else { return }
    // The bytes are the loop's receive buffer, free for in-place work during this call.
    let buffer = UnsafeMutableRawBufferPointer(
      mutating: UnsafeRawBufferPointer(start: base, count: bytes.count))
    if isRTCP {
      let length: Int
      do {
        length = try inbound.unprotectRTCP(buffer, length: bytes.count)
      } catch {
        counters.srtpDrops += 1
        return
      }
      let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
      counters.rtcpPacketsReceived += 1
      updateRoundTripTime(packet)
      onRTCP?(packet)
    } else {
      let length: Int
      do {
        length = try inbound.unprotectRTP(buffer, length: bytes.count)
      } catch {
        counters.srtpDrops += 1
        return
      }
      guard length >= RTPHeader.fixedHeaderLength else {
        counters.srtpDrops += 1
        return
      }
      let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
      Self.countRTP(length, in: &counters)
      onRTP?(Self.ssrc(ofRTP: packet), packet)
    }
  }

  /// Counts one unprotected RTP packet of `length` octets (one access to the counters).
  private static func countRTP(_ length: Int, in counters: inout PeerConnectionStats) {
    counters.rtpPacketsReceived += 1
    counters.rtpBytesReceived += length
  }

  /// Bytes 8..<12 of an RTP packet at least 12 bytes long (RFC 3550 §5.1).
  static func ssrc(ofRTP packet: UnsafeRawBufferPointer) -> UInt32 {
    packet.count >= 12
      ? UInt32(bigEndian: packet.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) : 0
  }

  // MARK: - ICE

  /// Sends what the agent produced, reports its events, moves DTLS along and re-arms the timer.
  func serviceICE() {
    guard let agent else { return }
    for output in agent.takeOutputs() {
      switch output {
      case .send(let datagram):
        send(datagram.bytes, socket: datagram.socket, to: datagram.destination)
      case .stateChanged:
        updateState()
      case .localCandidate(let candidate):
        onEvent?(.localCandidate(candidate))
      case .gatheringComplete:
        onEvent?(.gatheringComplete)
      case .selectedPair(let pair):
        selectedPair = pair
        onEvent?(.selectedPair(pair))
        startDTLSIfNeeded()
      case .roleChanged:
        break
      }
      if state.isFinal { return }
    }
    updateState()
    rearmTimer()
  }

  // MARK: - DTLS

  private func startDTLSIfNeeded() {
    guard let dtls, dtls.state == .new else { return }
    tuneDTLSTimer(dtls)
    handleDTLS(dtls.start(now: loop.mediaNow()))
  }

  /// Before the handshake starts: the first retransmission timeout from ICE's round-trip time
  /// (`DTLSEndpoint.initialRetransmissionTimeout(roundTripTime:)`), so a long path gets no
  /// spurious retransmissions of the certificate flights; the endpoint's 50 ms when ICE has
  /// none (a lite agent never measures one).
  private func tuneDTLSTimer(_ dtls: DTLSEndpoint) {
    guard let roundTripTime = agent?.roundTripTime else { return }
    dtls.setInitialRetransmissionTimeout(
      DTLSEndpoint.initialRetransmissionTimeout(
        roundTripTime: min(roundTripTime, .seconds(60)).duration))
  }

  func handleDTLS(_ output: DTLSOutput) {
    sendDTLS(output.datagrams)
    for event in output.events {
      switch event {
      case .connected(let profile, let keyingMaterial):
        installSRTP(profile: profile, keyingMaterial: keyingMaterial)
      case .failed(let error):
        fail(.dtls(error))
      case .closed:
        peerClosedDTLS = true
        srtpInbound = nil
        srtpOutbound = nil
        onEvent?(.remoteClosed)
        updateState()
      case .applicationData:
        // No data channels on this transport; SCTP records are dropped.
        break
      }
      if state.isFinal { return }
    }
    rearmTimer()
  }

  func sendDTLS(_ datagrams: [[UInt8]]) {
    guard !datagrams.isEmpty else { return }
    let target: (socket: ICESocketID, address: ICETransportAddress)? =
      selectedPair.map { ($0.socket, $0.remote.address) } ?? dtlsFallbackDestination
    guard let target else { return }
    for datagram in datagrams {
      // Not fatal: DTLS retransmits, and ICE consent decides about the path.
      _ = datagram.withUnsafeBytes { bytes in
        try? sendApplicationDatagram(bytes, socket: target.socket, to: target.address)
      }
    }
  }

  /// Keys SRTP from the exporter output (RFC 5764 §4.2), split by our DTLS role.
  private func installSRTP(profile: DTLSSRTPProfile, keyingMaterial: [UInt8]) {
    guard let role = dtls?.role else { return }
    let srtpProfile = profile.srtpProfile
    do {
      let material = try DTLSSRTPKeyingMaterial(profile: profile, bytes: keyingMaterial)
      let outbound = material.outbound(for: role)
      let inbound = material.inbound(for: role)
      srtpOutbound = try SRTPSession(
        profile: srtpProfile, masterKey: SRTPMasterKey(key: outbound.key, salt: outbound.salt),
        direction: .outbound)
      srtpInbound = try SRTPSession(
        profile: srtpProfile, masterKey: SRTPMasterKey(key: inbound.key, salt: inbound.salt),
        direction: .inbound)
    } catch let error as SRTPError {
      fail(.srtp(error))
      return
    } catch {
      fail(
        .srtp(
          .invalidKeyingMaterialLength(
            expected: profile.keyingMaterialLength, actual: keyingMaterial.count)))
      return
    }
    dtlsRole = role
    onEvent?(.dtlsConnected(role: role, profile: profile))
    updateState()
  }

  // MARK: - Sending

  /// Sends one datagram the ICE agent produced (already wrapped for TURN) from driver socket
  /// `socket`; a full send buffer drops it (UDP), other errors are not fatal to the connection
  /// (ICE consent decides about the path). Application data goes through
  /// `sendApplicationDatagram` instead.
  func send(_ bytes: [UInt8], socket: ICESocketID, to destination: ICETransportAddress) {
    if ICEAgent.isTCPConnection(socket) {
      sendICETCP(bytes, socket: socket, to: destination)
      return
    }
    if let stream = turnStream(socket: socket, to: destination) {
      _ = stream.send(bytes)
      return
    }
    guard sockets.indices.contains(socket) else { return }
    _ = try? sockets[socket].send(bytes, to: destination)
  }

  // MARK: - Timer

  /// Keeps one loop timer at the earliest deadline of ICE and DTLS; a later deadline waits for
  /// the armed timer, which re-arms.
  func rearmTimer() {
    guard !state.isFinal else { return }
    var deadline = agent?.nextDeadline
    if let dtlsDeadline = dtls?.nextDeadline {
      deadline = deadline.map { min($0, dtlsDeadline) } ?? dtlsDeadline
    }
    guard let deadline else { return }
    if let armed = timerDeadline, armed <= deadline, timer != nil { return }
    if let timer { loop.cancel(timer) }
    timerDeadline = deadline
    timer = loop.schedule(at: deadline, leeway: .zero) { [weak self] in self?.timerFired() }
  }

  private func timerFired() {
    timer = nil
    timerDeadline = nil
    guard !state.isFinal else { return }
    let now = loop.mediaNow()
    if let dtls, let deadline = dtls.nextDeadline, deadline <= now {
      handleDTLS(dtls.handleTimeout(now: now))
      if state.isFinal { return }
    }
    if let agent {
      agent.handleTimeout(now: now)
      serviceICE()
    }
    rearmTimer()
  }
}
