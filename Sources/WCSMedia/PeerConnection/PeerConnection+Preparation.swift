import CWebRTCCore
import Dispatch
import Foundation
import Synchronization

extension PeerConnection {
  private static let preparationStarted = Atomic<Bool>(false)
  /// Entered while the preparation runs; the exit handler waits for it.
  private static let preparation = DispatchGroup()

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
    // OpenSSL frees its global state (locks included) in an exit handler registered when it
    // first initializes; a process that exits while the work below still runs (a program that
    // fails at once) would have that work use freed locks and crash in `exit`. Initialize
    // OpenSSL first, then register a handler of our own: exit handlers run in reverse order, so
    // ours waits for the work (bounded) before OpenSSL's cleans up.
    _ = OPENSSL_init_crypto(0, nil)
    preparation.enter()
    atexit { _ = PeerConnection.preparation.wait(timeout: .now() + .seconds(2)) }
    DispatchQueue.global(qos: .userInitiated).async {
      defer { preparation.leave() }
      // Both are once-only: a connection that needs one while this runs waits for it there
      // (pthread_once, the certificate's lock) instead of doing it a second time.
      holdNSSContext()
      _ = try? SRTPLibrary.ensureInitialized()
      guard let certificate = try? DTLSCertificate.shared,
        let context = try? DTLSContext.make(
          certificate: certificate, profiles: DTLSSRTPProfile.defaultOffer)
      else { return }
      SSL_CTX_free(context)
    }
  }

  /// Debian's libsrtp2 does its crypto with NSS and opens an NSS context for every cipher it
  /// allocates, closing it with the cipher: while no other context is open, each open loads
  /// NSS's softoken, freebl and SQLite and each close unloads them again. `srtp_init` runs 13
  /// cipher self-tests that way (30–40 ms on an idle core, 13 `dlopen`/`dlclose` rounds), and
  /// every process's first SRTP session pays one more. One context held for the life of the
  /// process keeps NSS loaded, so those opens only count references: `srtp_init` takes 4–10 ms.
  /// Found by symbol (libnss3 is loaded as libsrtp2's dependency); a libsrtp2 built on OpenSSL
  /// or its own ciphers has no such symbol, and nothing is done.
  private static func holdNSSContext() {
    // RTLD_DEFAULT: the symbol in any library already loaded.
    guard let symbol = dlsym(nil, "NSS_InitContext") else { return }
    typealias InitContext =
      @convention(c) (
        UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
        UnsafePointer<CChar>?, UnsafeMutableRawPointer?, UInt32
      ) -> UnsafeMutableRawPointer?
    let initContext = unsafeBitCast(symbol, to: InitContext.self)
    // No databases, read-only, as libsrtp opens its own (nss.h: READONLY | NOCERTDB | NOMODDB
    // | FORCEOPEN | NOROOTINIT | OPTIMIZESPACE). Never shut down: it is the process's.
    let flags: UInt32 = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20
    _ = initContext("", "", "", "", nil, flags)
  }
}
