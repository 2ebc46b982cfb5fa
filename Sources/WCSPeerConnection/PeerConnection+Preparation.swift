import COpenSSL
import Dispatch
import Foundation
import Synchronization
import WCSProtocols

extension PeerConnection {
  private static let preparationStarted = Atomic<Bool>(false)

  /// Starts the process-wide set-up every connection's SRTP needs, once and on a background
  /// queue: libsrtp's initialization (`srtp_init` runs the cipher and authentication
  /// self-tests, 35–95 ms on a busy two-core machine, through NSS on Debian). Without it the
  /// first connection of a process pays it on its event loop between DTLS connecting and
  /// `.connected`, so the first PUBLISHING came that much later.
  ///
  /// OpenSSL's part (the shared certificate, the first `SSL_CTX`, 3–8 ms) is left to the first
  /// connection: OpenSSL frees its global state when the process exits, and a program that
  /// exits while such work still ran on a background thread (one that fails at once) crashed
  /// in `exit` with that work holding freed locks.
  ///
  /// Returns at once; safe from any thread; later calls do nothing. A failure is not reported
  /// here: the connection that needs SRTP reports it (`PeerConnectionError.srtp`), as without
  /// preparation. Every `PeerConnection` calls it when created; call it earlier (when the app
  /// starts or a session is created) to take all of it off the first connection's setup.
  public static func prepareSecurity() {
    guard !preparationStarted.exchange(true, ordering: .relaxed) else { return }
    DispatchQueue.global(qos: .userInitiated).async {
      // Once-only: a connection that needs it while this runs waits for it there
      // (pthread_once) instead of doing it a second time.
      holdNSSContext()
      _ = try? SRTPLibrary.ensureInitialized()
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
