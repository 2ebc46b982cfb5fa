import CWebRTCCore
import Synchronization
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class DTLSCertificateRenewalTests: XCTestCase {
  func testSharedCertificateIsReplacedOneDayBeforeItExpires() throws {
    let day = 86_400.0
    let start = 1_800_000_000.0
    let now = Mutex(start)
    let store = DTLSCertificateStore(validity: 30 * day, clock: { now.withLock { $0 } })
    let first = try store.certificate()
    XCTAssertEqual(first.notAfter, start + 30 * day)

    now.withLock { $0 = start + 29 * day - 1 }
    XCTAssertTrue(try store.certificate() === first, "still more than a day to go")

    now.withLock { $0 = start + 29 * day }
    let second = try store.certificate()
    XCTAssertFalse(second === first)
    XCTAssertNotEqual(second.fingerprint, first.fingerprint)
    XCTAssertEqual(second.notAfter, start + 59 * day)
    XCTAssertTrue(try store.certificate() === second)

    // A month later than that, still never an expired one.
    now.withLock { $0 = start + 365 * day }
    XCTAssertGreaterThan(try store.certificate().notAfter, start + 365 * day + day)
  }

  func testCertificateValidityIsAnchoredOnItsCreationTime() throws {
    let created = 1_800_000_000.0
    let certificate = try DTLSCertificate(validity: 3_600, createdAt: created)
    var before = time_t(created) + 3_600 - 1
    var after = time_t(created) + 3_600 + 1
    // X509_cmp_time: -1 when the field is earlier than the time given, 1 when later.
    XCTAssertEqual(X509_cmp_time(X509_get0_notAfter(certificate.x509), &before), 1)
    XCTAssertEqual(X509_cmp_time(X509_get0_notAfter(certificate.x509), &after), -1)
    var dayBefore = time_t(created) - 86_400 + 1
    XCTAssertEqual(X509_cmp_time(X509_get0_notBefore(certificate.x509), &dayBefore), -1)
    XCTAssertEqual(certificate.notAfter, created + 3_600)
  }
}
