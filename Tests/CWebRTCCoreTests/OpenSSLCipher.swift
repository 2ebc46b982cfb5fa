import CWebRTCCore

/// One-shot AES operations through OpenSSL's EVP API, used to check the RFC vectors that are
/// about the AES-CM keystream, the SRTP key derivation and AES-GCM directly.
enum OpenSSLCipher {
  /// AES-ECB of whole 16-byte blocks under a 16, 24 or 32 byte key (no padding).
  static func aesECB(key: [UInt8], blocks: [UInt8]) throws -> [UInt8] {
    let cipher: OpaquePointer?
    switch key.count {
    case 16: cipher = EVP_aes_128_ecb()
    case 24: cipher = EVP_aes_192_ecb()
    case 32: cipher = EVP_aes_256_ecb()
    default: throw BindingTestError.cCall("AES key of \(key.count) octets", code: key.count)
    }
    guard let context = EVP_CIPHER_CTX_new() else {
      throw BindingTestError.openSSL("EVP_CIPHER_CTX_new", reason: openSSLErrors())
    }
    defer { EVP_CIPHER_CTX_free(context) }
    guard EVP_EncryptInit_ex(context, cipher, nil, key, nil) == 1 else {
      throw BindingTestError.openSSL("EVP_EncryptInit_ex", reason: openSSLErrors())
    }
    EVP_CIPHER_CTX_set_padding(context, 0)
    var output = [UInt8](repeating: 0, count: blocks.count + 16)
    var written: Int32 = 0
    guard EVP_EncryptUpdate(context, &output, &written, blocks, Int32(blocks.count)) == 1 else {
      throw BindingTestError.openSSL("EVP_EncryptUpdate", reason: openSSLErrors())
    }
    return Array(output.prefix(Int(written)))
  }

  /// AES-CM keystream (RFC 3711 §4.1.1): AES of `iv` with its last 16 bits replaced by the block
  /// counter 0, 1, 2, ..., truncated to `length` octets.
  static func aesCMKeystream(key: [UInt8], iv: [UInt8], length: Int) throws -> [UInt8] {
    var counterBlocks: [UInt8] = []
    var counter = 0
    while counterBlocks.count < length {
      var block = iv
      block[14] = UInt8(truncatingIfNeeded: counter >> 8)
      block[15] = UInt8(truncatingIfNeeded: counter)
      counterBlocks += block
      counter += 1
    }
    return Array(try aesECB(key: key, blocks: counterBlocks).prefix(length))
  }

  /// AES-GCM encryption with a 12-octet IV; returns ciphertext || 16-octet tag.
  static func aesGCMSeal(key: [UInt8], iv: [UInt8], aad: [UInt8], plaintext: [UInt8]) throws
    -> [UInt8]
  {
    let cipher = key.count == 32 ? EVP_aes_256_gcm() : EVP_aes_128_gcm()
    guard let context = EVP_CIPHER_CTX_new() else {
      throw BindingTestError.openSSL("EVP_CIPHER_CTX_new", reason: openSSLErrors())
    }
    defer { EVP_CIPHER_CTX_free(context) }
    guard EVP_EncryptInit_ex(context, cipher, nil, key, iv) == 1 else {
      throw BindingTestError.openSSL("EVP_EncryptInit_ex(GCM)", reason: openSSLErrors())
    }
    var written: Int32 = 0
    guard EVP_EncryptUpdate(context, nil, &written, aad, Int32(aad.count)) == 1 else {
      throw BindingTestError.openSSL("EVP_EncryptUpdate(AAD)", reason: openSSLErrors())
    }
    var output = [UInt8](repeating: 0, count: plaintext.count + 16)
    guard EVP_EncryptUpdate(context, &output, &written, plaintext, Int32(plaintext.count)) == 1
    else {
      throw BindingTestError.openSSL("EVP_EncryptUpdate", reason: openSSLErrors())
    }
    var total = Int(written)
    let finalStatus = output.withUnsafeMutableBufferPointer { buffer in
      EVP_EncryptFinal_ex(context, buffer.baseAddress.map { $0 + total }, &written)
    }
    guard finalStatus == 1 else {
      throw BindingTestError.openSSL("EVP_EncryptFinal_ex", reason: openSSLErrors())
    }
    total += Int(written)
    var tag = [UInt8](repeating: 0, count: 16)
    guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1 else {
      throw BindingTestError.openSSL("EVP_CTRL_GCM_GET_TAG", reason: openSSLErrors())
    }
    return Array(output.prefix(total)) + tag
  }

  /// SRTP key derivation (RFC 3711 §4.3.1 with key_derivation_rate 0, index 0): the session key
  /// for `label` (0 cipher key, 1 auth key, 2 salt) of `length` octets.
  static func srtpKDF(masterKey: [UInt8], masterSalt: [UInt8], label: UInt8, length: Int) throws
    -> [UInt8]
  {
    try aesCMKeystream(
      key: masterKey, iv: srtpKDFIV(masterSalt: masterSalt, label: label),
      length: length)
  }

  /// The AES-CM IV of the key derivation: (label << 48 XOR master_salt) << 16.
  static func srtpKDFIV(masterSalt: [UInt8], label: UInt8) -> [UInt8] {
    var iv = [UInt8](repeating: 0, count: 16)
    for (index, byte) in masterSalt.prefix(14).enumerated() { iv[index] = byte }
    iv[7] ^= label
    return iv
  }
}
