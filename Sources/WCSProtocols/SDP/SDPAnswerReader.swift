/// Reads a WCS answer (wcs-protocol.md §4.2–4.3): candidates inline in every m-section followed
/// by `a=end-of-candidates`, no trickle, maybe no BUNDLE, maybe no `a=setup`.
public enum SDPAnswerReader {
  /// Analyzes `answer`, matching its sections to `offer` (by `a=mid`, else by m-line index).
  ///
  /// - Throws: ``SDPAnswerError/noMediaSections`` when there is no `m=` line;
  ///   ``SDPAnswerError/allMediaSectionsRejected`` when every section has port 0;
  ///   ``SDPAnswerError/missingICECredentials(mediaIndex:)`` or
  ///   ``SDPAnswerError/missingFingerprint(mediaIndex:)`` when the first accepted section has no
  ///   ICE credentials or fingerprint at media or session level.
  public static func analyze(answer: SessionDescription, offer: SessionDescription? = nil)
    throws(SDPAnswerError) -> SDPAnswerAnalysis
  {
    var notes: [String] = []
    let bundled = answer.bundleGroup?.mids ?? []
    guard !answer.media.isEmpty else { throw .noMediaSections }
    guard let primaryIndex = answer.media.firstIndex(where: { !$0.isRejected }) else {
      throw .allMediaSectionsRejected
    }
    let primary = try transport(answer, primaryIndex, &notes)
    var sections: [NegotiatedMediaSection] = []
    var bundleCandidates = primary.candidates
    for (i, m) in answer.media.enumerated() {
      let offerIndex = offer.flatMap { matchOffer($0, m, i) }
      let offered = offerIndex.flatMap { offer?.media[$0] }
      var t: RemoteTransportParameters? = nil
      if !m.isRejected {
        if i == primaryIndex {
          t = primary
        } else if let mid = m.mid, bundled.contains(mid) {
          var ignored: [String] = []
          if let own = try? transport(answer, i, &ignored) {
            bundleCandidates = dedupe(bundleCandidates + own.candidates)
          }
          t = primary
        } else {
          do {
            t = try transport(answer, i, &notes)
          } catch {
            notes.append("m-section \(i): no transport parameters of its own")
          }
        }
      }
      sections.append(
        NegotiatedMediaSection(
          index: i, offerIndex: offerIndex, mid: m.mid, kind: m.media, isRejected: m.isRejected,
          direction: m.direction, codecs: m.isRejected ? [] : codecs(m, offered),
          transport: t))
    }
    var main = primary
    if !bundled.isEmpty {
      main.candidates = bundleCandidates
      for i in sections.indices where sections[i].transport != nil {
        if let mid = sections[i].mid, bundled.contains(mid) {
          sections[i].transport = main
        }
      }
    }
    return SDPAnswerAnalysis(
      transport: main, media: sections, bundledMids: bundled, notes: notes)
  }

  private static func matchOffer(_ offer: SessionDescription, _ m: MediaDescription, _ i: Int)
    -> Int?
  {
    if let mid = m.mid, let j = offer.media.firstIndex(where: { $0.mid == mid }) { return j }
    return offer.media.indices.contains(i) ? i : nil
  }

  private static func codecs(_ m: MediaDescription, _ offered: MediaDescription?)
    -> [NegotiatedCodec]
  {
    m.payloadTypes.compactMap { pt in
      guard let map = m.rtpMap(payloadType: pt) else { return nil }
      var offeredPT: Int? = nil
      if let offered {
        let name = map.encodingName.lowercased()
        offeredPT = offered.payloadTypes.first { opt in
          guard let o = offered.rtpMap(payloadType: opt) else { return false }
          return o.encodingName.lowercased() == name && o.clockRate == map.clockRate
        }
        guard offeredPT != nil else { return nil }
      }
      return NegotiatedCodec(
        rtpMap: map, formatParameters: m.formatParameters(payloadType: pt),
        rtcpFeedback: m.rtcpFeedback(payloadType: pt), offeredPayloadType: offeredPT)
    }
  }

  private static func transport(
    _ sdp: SessionDescription, _ index: Int, _ notes: inout [String]
  ) throws(SDPAnswerError) -> RemoteTransportParameters {
    let m = sdp.media[index]
    func first<T>(_ pick: (SDPAttribute) -> T?) -> T? {
      for a in m.attributes { if let v = pick(a) { return v } }
      for a in sdp.attributes { if let v = pick(a) { return v } }
      return nil
    }
    guard
      let ufrag = first({ if case .iceUfrag(let u) = $0 { return u } else { return nil } }),
      let pwd = first({ if case .icePwd(let p) = $0 { return p } else { return nil } })
    else { throw .missingICECredentials(mediaIndex: index) }
    // RFC 8839 §5.4 caps both at 256 characters; the STUN USERNAME built from the ufrag must fit
    // a 16-bit attribute length (RFC 8489 §14). The RFC's minimums (4 and 22) are not enforced:
    // deployed peers send shorter ones and they work.
    guard (1...256).contains(ufrag.utf8.count), (1...256).contains(pwd.utf8.count) else {
      throw .invalidICECredentials(
        mediaIndex: index, ufragLength: ufrag.utf8.count, pwdLength: pwd.utf8.count)
    }
    let fingerprints = SDPAttribute.fingerprints(media: m, session: sdp)
    guard let fingerprint = fingerprints.first else {
      throw .missingFingerprint(mediaIndex: index)
    }
    var setup = first({ if case .setup(let s) = $0 { return s } else { return nil } })
    var defaulted = false
    if setup == nil || setup == .actpass || setup == .holdconn {
      notes.append(
        "m-section \(index): a=setup \(setup?.rawValue ?? "missing"), using the WCS default active"
      )
      setup = .active
      defaulted = true
    }
    let lite = sdp.isICELite || m.attributes.contains(.iceLite)
    let end =
      m.attributes.contains(.endOfCandidates)
      || sdp.attributes.contains(.endOfCandidates)
    var usable: [ICECandidateAttribute] = []
    for c in m.candidates {
      if c.isUDP || c.isTCP {
        usable.append(c)
      } else {
        notes.append("m-section \(index): candidate with transport \(c.transport) ignored")
      }
    }
    return RemoteTransportParameters(
      iceUfrag: ufrag, icePwd: pwd, iceLite: lite, candidates: dedupe(usable),
      endOfCandidates: end, fingerprint: fingerprint,
      additionalFingerprints: Array(fingerprints.dropFirst()), setup: setup ?? .active,
      setupDefaulted: defaulted)
  }

  private struct CandidateKey: Hashable {
    var component: Int
    var transport: String
    var address: String
    var port: Int
  }

  private static func dedupe(_ candidates: [ICECandidateAttribute]) -> [ICECandidateAttribute] {
    var seen = Set<CandidateKey>()
    return candidates.filter {
      seen.insert(
        CandidateKey(
          component: $0.component, transport: $0.transport.lowercased(),
          address: $0.address.lowercased(), port: $0.port)
      ).inserted
    }
  }
}
