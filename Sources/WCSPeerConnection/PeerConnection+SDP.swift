import Foundation
import WCSProtocols

extension PeerConnection {
  /// Which directions `createOffer` writes.
  public enum OfferMode: Sendable, Equatable {
    /// Publish to WCS: every section `sendonly` (`SDPOfferBuilder.publishOffer`).
    case publish
    /// Play from WCS: every section `recvonly`, no SSRC lines (`SDPOfferBuilder.playOffer`).
    case play
    /// The directions given in the audio/video parameters.
    case asGiven
  }

  /// Makes our SDP offer (JSEP, RFC 8829 §5.2.1): binds the sockets and starts ICE, then
  /// writes the sections with our ICE credentials, the certificate's SHA-256 fingerprint,
  /// `a=setup:actpass`, BUNDLE, rtcp-mux and our host candidates inline with
  /// `a=end-of-candidates` (the transport is complete at once). Under
  /// `ICETransportPolicy.relay` no candidate is known yet: the relayed ones come as
  /// `.localCandidate` events, and `a=end-of-candidates` is left out. Call on the loop, once.
  ///
  /// - Parameters:
  ///   - audio: the audio section (Opus/48000/2 ...), `nil` for none.
  ///   - video: the video section (VP8/90000 ...), `nil` for none.
  ///   - mode: publish (`sendonly`), play (`recvonly`) or the given directions.
  ///   - cname: RTCP CNAME; random when `nil`.
  ///   - streamId: `a=msid` stream id; random when `nil`.
  ///   - includeCandidates: write our host candidates and `a=end-of-candidates`; without them
  ///     an ICE-lite peer (WCS) learns our address from our checks (peer-reflexive).
  /// - Returns: the SDP text, CRLF line ends.
  /// - Throws: `PeerConnectionError.invalidState`, `.socket` (see `localDescriptionForOffer`).
  public func createOffer(
    audio: SDPOfferParameters.Audio?, video: SDPOfferParameters.Video?,
    mode: OfferMode = .asGiven, cname: String? = nil, streamId: String? = nil,
    includeCandidates: Bool = true
  ) throws(PeerConnectionError) -> String {
    let local = try localDescriptionForOffer()
    var generator = SystemRandomNumberGenerator()
    let parameters = SDPOfferParameters(
      audio: audio, video: video,
      sessionId: UInt64.random(in: 1...(1 << 62), using: &generator),
      cname: cname ?? Self.randomToken(16), streamId: streamId ?? Self.randomToken(16),
      iceUfrag: local.iceCredentials.ufrag, icePwd: local.iceCredentials.pwd,
      fingerprint: Self.sdpFingerprint(local.fingerprint), setup: .actpass,
      candidates: includeCandidates ? local.candidates.compactMap(Self.sdpCandidate) : [],
      endOfCandidates: includeCandidates && local.endOfCandidates)
    let offer: SessionDescription
    switch mode {
    case .publish: offer = SDPOfferBuilder.publishOffer(parameters)
    case .play: offer = SDPOfferBuilder.playOffer(parameters)
    case .asGiven: offer = SDPOfferBuilder.offer(parameters)
    }
    localSessionDescription = offer
    return SDPWriter.write(offer)
  }

  /// Applies the peer's SDP answer: reads its transport (`SDPAnswerReader`: ICE credentials,
  /// candidates, `a=ice-lite`, fingerprint, `a=setup` — a missing one is taken as `active`
  /// with a DTLS client fallback) and starts connectivity checks. The negotiated sections are
  /// kept in `remoteAnswer`. Call on the loop after `createOffer`.
  ///
  /// - Throws: `PeerConnectionError.sdp` when the text does not parse or lacks ICE
  ///   credentials or a usable fingerprint; errors of `setRemoteAnswer(_:)`.
  public func setRemoteDescription(answer text: String) throws(PeerConnectionError) {
    loop.assertInEventLoop()
    let answer = try Self.parse(text)
    let analysis: SDPAnswerAnalysis
    do {
      analysis = try SDPAnswerReader.analyze(answer: answer, offer: localSessionDescription)
    } catch {
      throw .sdp(reason: "answer: \(error)")
    }
    let transport = analysis.transport
    let fingerprints = try Self.dtlsFingerprints(transport.fingerprints)
    let description = PeerConnectionTransportDescription(
      iceCredentials: ICECredentials(ufrag: transport.iceUfrag, pwd: transport.icePwd),
      iceLite: transport.iceLite, candidates: transport.candidates.compactMap(Self.iceCandidate),
      endOfCandidates: transport.endOfCandidates,
      fingerprint: fingerprints[0], additionalFingerprints: Array(fingerprints.dropFirst()),
      setup: transport.setupDefaulted ? nil : transport.setup)
    try setRemoteAnswer(description)
    remoteAnswer = analysis
  }

  /// Applies the peer's SDP offer (answerer side): ICE credentials, candidates, fingerprint
  /// and `a=setup` of its first accepted section (the BUNDLE transport). Binds our sockets and
  /// starts ICE (lite when `configuration.iceLite`). Call on the loop, once; then
  /// `createAnswer()`.
  ///
  /// - Throws: `PeerConnectionError.unanswerableOffer` for an offer without an `m=` line or
  ///   with every section at port 0; `.sdp` for one that does not parse or lacks ICE
  ///   credentials or a fingerprint; errors of `setRemoteOffer(_:)`.
  public func setRemoteDescription(offer text: String) throws(PeerConnectionError) {
    loop.assertInEventLoop()
    let offer = try Self.parse(text)
    let section: MediaDescription
    do {
      section = offer.media[try offer.firstAcceptedMediaIndex()]
    } catch {
      throw .unanswerableOffer(error)
    }
    func attribute<Value>(_ pick: (SDPAttribute) -> Value?) -> Value? {
      section.attributes.lazy.compactMap(pick).first ?? offer.attributes.lazy.compactMap(pick).first
    }
    guard let ufrag = attribute({ if case .iceUfrag(let v) = $0 { v } else { nil } }),
      let pwd = attribute({ if case .icePwd(let v) = $0 { v } else { nil } })
    else { throw .sdp(reason: "offer: no a=ice-ufrag/a=ice-pwd") }
    let offered = SDPAttribute.fingerprints(media: section, session: offer)
    guard !offered.isEmpty else { throw .sdp(reason: "offer: no a=fingerprint") }
    let fingerprints = try Self.dtlsFingerprints(offered)
    let candidates = section.attributes.compactMap {
      if case .candidate(let candidate) = $0 { Self.iceCandidate(candidate) } else { nil }
    }
    let description = PeerConnectionTransportDescription(
      iceCredentials: ICECredentials(ufrag: ufrag, pwd: pwd),
      iceLite: offer.attributes.contains(.iceLite) || section.attributes.contains(.iceLite),
      candidates: candidates,
      endOfCandidates: section.attributes.contains(.endOfCandidates),
      fingerprint: fingerprints[0], additionalFingerprints: Array(fingerprints.dropFirst()),
      setup: attribute({ if case .setup(let v) = $0 { v } else { nil } }))
    _ = try setRemoteOffer(description)
    remoteOffer = offer
  }

  /// Our SDP answer to the offer given to `setRemoteDescription(offer:)`: every offered
  /// section accepted with its formats, rtpmap/fmtp/rtcp-fb/extmap as offered, the direction
  /// reversed (RFC 3264 §6.1), rtcp-mux, the offer's BUNDLE group, our ICE credentials,
  /// fingerprint, `a=setup` (`active` to an `actpass` offer), `a=ice-lite` when lite, and our
  /// host candidates with `a=end-of-candidates` (under `ICETransportPolicy.relay`: the
  /// relayed candidates so far, the end only once gathering finished — see
  /// `localDescriptionWithCandidates`). The `o=` line is ours (RFC 3264 §5): a random session id
  /// in 1...2^62 on the first answer, kept by later ones, whose version goes up by one each time
  /// (`answerOrigin`). Call on the loop.
  ///
  /// - Throws: `PeerConnectionError.invalidState` before `setRemoteDescription(offer:)`.
  public func createAnswer() throws(PeerConnectionError) -> String {
    loop.assertInEventLoop()
    guard let offer = remoteOffer, signalingRole == .answerer else {
      throw .invalidState(reason: "createAnswer needs setRemoteDescription(offer:) first")
    }
    let local = try localDescription()
    var generator = SystemRandomNumberGenerator()
    var origin = answerOrigin ?? SDPLocalOrigin(using: &generator)
    let answer = PeerConnectionAnswerBuilder.answer(
      to: offer, origin: origin.next(), local: local,
      candidates: local.candidates.compactMap(Self.sdpCandidate))
    answerOrigin = origin
    localSessionDescription = answer
    return SDPWriter.write(answer)
  }

  /// Our last offer or answer (`createOffer`/`createAnswer`) with every local candidate
  /// gathered so far in each section, and `a=end-of-candidates` once gathering finished; the
  /// first candidate becomes the section's default address (`c=` and port, RFC 8829
  /// §5.2.1). For a peer that takes no trickled candidates when server-reflexive or relayed
  /// ones (`ICETransportPolicy.relay`) come after the description: wait for
  /// `.gatheringComplete`, then send this instead. The origin's version stays (the session is
  /// the same). `nil` before a description was made. Call on the loop.
  public func localDescriptionWithCandidates() -> String? {
    loop.assertInEventLoop()
    guard var description = localSessionDescription else { return nil }
    let candidates = localCandidates.compactMap(Self.sdpCandidate)
    var transport: [SDPAttribute] = candidates.map { .candidate($0) }
    if endOfLocalCandidates { transport.append(.endOfCandidates) }
    for index in description.media.indices where !description.media[index].isRejected {
      var section = description.media[index]
      section.attributes.removeAll {
        switch $0 {
        case .candidate, .endOfCandidates: return true
        default: return false
        }
      }
      let position =
        section.attributes.firstIndex {
          if case .iceUfrag = $0 { return true }
          return false
        } ?? section.attributes.endIndex
      section.attributes.insert(contentsOf: transport, at: position)
      if let first = candidates.first {
        section.port = first.port
        section.connections = [
          SDPConnection(
            addressType: first.address.contains(":") ? "IP6" : "IP4", address: first.address)
        ]
      }
      description.media[index] = section
    }
    return SDPWriter.write(description)
  }

  // MARK: - Conversions between SDP and the cores

  static func parse(_ text: String) throws(PeerConnectionError) -> SessionDescription {
    do {
      return try SDPParser.parse(text).description
    } catch {
      throw .sdp(reason: "\(error)")
    }
  }

  static func sdpFingerprint(_ fingerprint: DTLSFingerprint) -> CertificateFingerprint {
    CertificateFingerprint(hashFunction: fingerprint.algorithm.rawValue, bytes: fingerprint.bytes)
  }

  /// The SDP fingerprints with a supported hash function and a digest of the right length,
  /// in order; the others are skipped (RFC 8122 §5: the certificate may match any one).
  /// Throws the first one's error when none is usable; `list` must not be empty.
  static func dtlsFingerprints(_ list: [CertificateFingerprint])
    throws(PeerConnectionError) -> [DTLSFingerprint]
  {
    var usable: [DTLSFingerprint] = []
    var firstError: PeerConnectionError?
    for fingerprint in list {
      do {
        usable.append(try dtlsFingerprint(fingerprint))
      } catch {
        firstError = firstError ?? error
      }
    }
    guard !usable.isEmpty else {
      throw firstError ?? .sdp(reason: "no a=fingerprint")
    }
    return usable
  }

  static func dtlsFingerprint(_ fingerprint: CertificateFingerprint)
    throws(PeerConnectionError) -> DTLSFingerprint
  {
    guard let algorithm = DTLSFingerprint.Algorithm(rawValue: fingerprint.hashFunction.lowercased())
    else { throw .sdp(reason: "unsupported fingerprint hash \(fingerprint.hashFunction)") }
    do {
      return try DTLSFingerprint(algorithm: algorithm, bytes: fingerprint.bytes)
    } catch {
      throw .sdp(reason: "fingerprint: \(error)")
    }
  }

  /// An SDP candidate as the ICE agent's; `nil` for transports other than UDP and TCP, a TCP
  /// candidate without a known `tcptype` (RFC 6544 §4.5), RTCP-component, or name (mDNS)
  /// addresses. The text form avoids depending on how either module spells candidate types.
  static func iceCandidate(_ attribute: ICECandidateAttribute) -> ICECandidate? {
    let tcpType = attribute.tcpType.flatMap { ICETCPType(rawValue: $0.lowercased()) }
    guard attribute.isUDP || (attribute.isTCP && tcpType != nil), attribute.component == 1,
      let ip = ICEIPAddress(attribute.address),
      let port = UInt16(exactly: attribute.port),
      let type = ICECandidateType(rawValue: attribute.type.token)
    else { return nil }
    let related: ICETransportAddress? = attribute.relatedAddress.flatMap { address in
      attribute.relatedPort.flatMap { port in
        UInt16(exactly: port).flatMap { ICETransportAddress(address, port: $0) }
      }
    }
    return ICECandidate(
      foundation: attribute.foundation, priority: attribute.priority,
      address: ICETransportAddress(ip: ip, port: port), type: type, relatedAddress: related,
      transport: attribute.isTCP ? .tcp : .udp, tcpType: tcpType)
  }

  static func sdpCandidate(_ candidate: ICECandidate) -> ICECandidateAttribute? {
    ICECandidateAttribute(attributeValue: candidate.description)
  }

  package static func randomToken(_ length: Int) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    var generator = SystemRandomNumberGenerator()
    return String(
      (0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
  }
}
