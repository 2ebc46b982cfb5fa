/// Why an SDP offer cannot be answered at all, before any codec is looked at: there is no media
/// section the answerer could accept (RFC 3264 §6: a section offered with port 0 stays rejected
/// in the answer).
public enum SDPOfferError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The offer has no `m=` line (RFC 8866 §5.14), so it negotiates no media.
  case noMediaSections
  /// Every `m=` line has port 0: each stream is rejected or disabled (RFC 3264 §5.1, §8.2).
  case allMediaSectionsRejected

  /// `offer has no media sections` / `every media section is rejected (port 0)`.
  public var description: String {
    switch self {
    case .noMediaSections: return "offer has no media sections"
    case .allMediaSectionsRejected: return "every media section is rejected (port 0)"
    }
  }
}

extension SessionDescription {
  /// Index into `media` of the first section with a non-zero port: the one an answerer takes
  /// its transport (ICE, DTLS) from, the BUNDLE-tagged section when bundled (RFC 8843 §7.3.1).
  ///
  /// - Throws: ``SDPOfferError/noMediaSections`` when there is no `m=` line;
  ///   ``SDPOfferError/allMediaSectionsRejected`` when every section has port 0.
  public func firstAcceptedMediaIndex() throws(SDPOfferError) -> Int {
    guard !media.isEmpty else { throw .noMediaSections }
    guard let index = media.firstIndex(where: { !$0.isRejected }) else {
      throw .allMediaSectionsRejected
    }
    return index
  }
}
