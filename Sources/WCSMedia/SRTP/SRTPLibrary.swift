import CWebRTCCore
import Synchronization

/// Process-wide libsrtp2 initialization: `srtp_init()` runs once, on first use.
enum SRTPLibrary {
  /// nil until initialized; then the status `srtp_init` returned.
  private static let status = Mutex<UInt32?>(nil)

  /// Calls `srtp_init()` the first time; later calls return its remembered result.
  /// Throws `SRTPError.library` when initialization failed.
  static func ensureInitialized() throws(SRTPError) {
    let result = status.withLock { status -> UInt32 in
      if let status { return status }
      let value = srtp_init().rawValue
      status = value
      return value
    }
    guard result == srtp_err_status_ok.rawValue else {
      throw .library(SRTPStatus(rawValue: result))
    }
  }
}
