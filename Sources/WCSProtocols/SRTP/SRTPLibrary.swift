import COpenSSL

/// Process-wide libsrtp2 initialization: `srtp_init()` runs once per process, shared with every
/// other module that uses libsrtp (`wcs_srtp_init_once`).
package enum SRTPLibrary {
  /// Initializes libsrtp the first time; later calls return the first result.
  /// Throws `SRTPError.library` when initialization failed.
  package static func ensureInitialized() throws(SRTPError) {
    let result = wcs_srtp_init_once().rawValue
    guard result == srtp_err_status_ok.rawValue else {
      throw .library(SRTPStatus(rawValue: result))
    }
  }
}
