import CWebRTCCore
import Dispatch
import Synchronization

extension PeerConnection {
  private static let preparationStarted = Atomic<Bool>(false)

  /// Starts the process-wide set-up every connection's security needs, once and on a
  /// background queue: libsrtp's initialization (`srtp_init` runs the cipher and
  /// authentication self-tests, 35–95 ms on a busy two-core machine), the shared DTLS
  /// certificate (`DTLSCertificate.shared`, a P-256 key pair) and OpenSSL's own first-use
  /// set-up behind the first `SSL_CTX` (3–8 ms). Without it the first connection of a process
  /// pays all of it on its event loop, the libsrtp part between DTLS connecting and
  /// `.connected`, so the first PUBLISHING came that much later.
  ///
  /// Returns at once; safe from any thread; later calls do nothing. A failure is not reported
  /// here: the connection that needs the part reports it (`PeerConnectionError.srtp` or
  /// `.dtls`), as without preparation. Every `PeerConnection` calls it when created; call it
  /// earlier (when the app starts or a session is created) to take all of it off the first
  /// connection's setup.
  public static func prepareSecurity() {
    guard !preparationStarted.exchange(true, ordering: .relaxed) else { return }
    DispatchQueue.global(qos: .userInitiated).async {
      // Both are once-only: a connection that needs one while this runs waits for it there
      // (pthread_once, the certificate's lock) instead of doing it a second time.
      _ = try? SRTPLibrary.ensureInitialized()
      guard let certificate = try? DTLSCertificate.shared,
        let context = try? DTLSContext.make(
          certificate: certificate, profiles: DTLSSRTPProfile.defaultOffer)
      else { return }
      SSL_CTX_free(context)
    }
  }
}
