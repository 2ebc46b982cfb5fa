import WCSProtocols

/// Builds the answer a `PeerConnection` answerer returns (RFC 3264 §6, RFC 8829 §5.3.1):
/// every offered section mirrored with our transport attributes, under our own `o=` line
/// (`origin`, from the answerer's `SDPLocalOrigin`; never the offer's, RFC 3264 §5).
enum PeerConnectionAnswerBuilder {
  static func answer(
    to offer: SessionDescription, origin: SDPOrigin, local: PeerConnectionTransportDescription,
    candidates: [ICECandidateAttribute]
  ) -> SessionDescription {
    var sessionAttributes: [SDPAttribute] = []
    if let bundle = offer.bundleGroup { sessionAttributes.append(.group(bundle)) }
    if local.iceLite { sessionAttributes.append(.iceLite) }
    let media = offer.media.map { section in
      mirror(section, local: local, candidates: candidates)
    }
    return SessionDescription(origin: origin, attributes: sessionAttributes, media: media)
  }

  private static func mirror(
    _ section: MediaDescription, local: PeerConnectionTransportDescription,
    candidates: [ICECandidateAttribute]
  ) -> MediaDescription {
    guard !section.isRejected else {
      return MediaDescription(
        media: section.media, port: 0, proto: section.proto, formats: section.formats)
    }
    var attributes: [SDPAttribute] = []
    if let mid = section.mid { attributes.append(.mid(mid)) }
    attributes.append(.direction(section.direction.reversed))
    attributes.append(.iceUfrag(local.iceCredentials.ufrag))
    attributes.append(.icePwd(local.iceCredentials.pwd))
    attributes.append(.fingerprint(PeerConnection.sdpFingerprint(local.fingerprint)))
    if let setup = local.setup { attributes.append(.setup(setup)) }
    attributes.append(.rtcpMux)
    for attribute in section.attributes {
      switch attribute {
      case .rtpmap, .fmtp, .rtcpFeedback, .extmap, .rtcpReducedSize: attributes.append(attribute)
      default: continue
      }
    }
    attributes += candidates.map { .candidate($0) }
    if local.endOfCandidates { attributes.append(.endOfCandidates) }
    let address = candidates.first?.address ?? "0.0.0.0"
    return MediaDescription(
      media: section.media, port: candidates.first?.port ?? 9, proto: section.proto,
      formats: section.formats,
      connections: [
        SDPConnection(addressType: address.contains(":") ? "IP6" : "IP4", address: address)
      ],
      attributes: attributes)
  }
}
