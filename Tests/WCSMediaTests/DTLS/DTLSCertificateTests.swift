import CWebRTCCore
import Foundation
import Synchronization
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class DTLSCertificateTests: XCTestCase {
  func testFingerprintIsUppercaseColonSeparatedSHA256OfTheDER() throws {
    let certificate = try DTLSCertificate()
    let value = certificate.fingerprint.sdpValue
    XCTAssertTrue(value.hasPrefix("sha-256 "))
    let groups = value.dropFirst(8).split(separator: ":")
    XCTAssertEqual(groups.count, 32)
    XCTAssertTrue(
      groups.allSatisfy { $0.count == 2 && $0.uppercased() == $0 && UInt8($0, radix: 16) != nil })
    XCTAssertEqual(
      certificate.fingerprint,
      try DTLSFingerprint(algorithm: .sha256, derCertificate: certificate.derBytes))

    // OpenSSL's own X509_digest over the certificate object agrees.
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    XCTAssertEqual(X509_digest(certificate.x509, EVP_sha256(), &digest, &length), 1)
    XCTAssertEqual(digest, certificate.fingerprint.bytes)
  }

  func testCertificateFieldsAreWhatWebRTCPeersExpect() throws {
    let certificate = try DTLSCertificate()
    var cursor: UnsafePointer<UInt8>? = nil
    let parsed = certificate.derBytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
      cursor = buffer.baseAddress
      return d2i_X509(nil, &cursor, buffer.count)
    }
    let x509 = try XCTUnwrap(parsed)
    defer { X509_free(x509) }

    var name = [CChar](repeating: 0, count: 64)
    XCTAssertEqual(
      X509_NAME_get_text_by_NID(X509_get_subject_name(x509), NID_commonName, &name, 64), 7)
    XCTAssertEqual(
      String(
        decoding: name.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self),
      "WCSApi2")
    XCTAssertEqual(X509_NAME_cmp(X509_get_subject_name(x509), X509_get_issuer_name(x509)), 0)
    XCTAssertEqual(X509_get_version(x509), 2)
    XCTAssertEqual(X509_get_signature_nid(x509), NID_ecdsa_with_SHA256)

    let key = try XCTUnwrap(X509_get0_pubkey(x509))
    XCTAssertEqual(EVP_PKEY_get_base_id(key), EVP_PKEY_EC)
    XCTAssertEqual(EVP_PKEY_get_bits(key), 256)
    XCTAssertEqual(X509_verify(x509, key), 1)

    // Validity: from one day ago for 30 days.
    var days: Int32 = 0
    var seconds: Int32 = 0
    XCTAssertEqual(ASN1_TIME_diff(&days, &seconds, nil, X509_get0_notBefore(x509)), 1)
    XCTAssertEqual(Double(days) * 86_400 + Double(seconds), -86_400, accuracy: 120)
    XCTAssertEqual(ASN1_TIME_diff(&days, &seconds, nil, X509_get0_notAfter(x509)), 1)
    XCTAssertEqual(Double(days) * 86_400 + Double(seconds), 30 * 86_400, accuracy: 120)
  }

  func testEachCertificateHasItsOwnKeyAndSerial() throws {
    let first = try DTLSCertificate()
    let second = try DTLSCertificate()
    XCTAssertNotEqual(first.fingerprint, second.fingerprint)
    let serials = [first, second].map { certificate -> Int in
      let serial = X509_get_serialNumber(certificate.x509)
      return Int(ASN1_INTEGER_get(serial))
    }
    XCTAssertNotEqual(serials[0], serials[1])
    XCTAssertTrue(serials.allSatisfy { $0 > 0 })
  }

  func testSharedCertificateIsMadeOnceAcrossThreads() throws {
    let identities = Mutex<Set<ObjectIdentifier>>([])
    DispatchQueue.concurrentPerform(iterations: 8) { _ in
      if let certificate = try? DTLSCertificate.shared {
        identities.withLock { _ = $0.insert(ObjectIdentifier(certificate)) }
      }
    }
    XCTAssertEqual(identities.withLock { $0.count }, 1)
    XCTAssertTrue(try DTLSCertificate.shared === DTLSCertificate.shared)
  }

  func testOtherAlgorithmsHashTheSameDER() throws {
    let certificate = try DTLSCertificate.shared
    let sha1 = try certificate.fingerprint(using: .sha1)
    XCTAssertEqual(sha1.bytes.count, 20)
    XCTAssertEqual(
      sha1, try DTLSFingerprint(algorithm: .sha1, derCertificate: certificate.derBytes))
  }
}
