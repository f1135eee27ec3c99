/// Incremental SHA-256 (FIPS 180-4), written here because CryptoKit does not exist on Linux.
package struct SHA256: Sendable {
  /// Length of a digest in bytes.
  static let digestByteCount = 32
  /// Bytes consumed by one run of the compression function.
  private static let blockByteCount = 64

  /// The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
  private static let roundConstants: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
    0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
    0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
    0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
    0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
    0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
    0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
  ]

  /// The running hash value H0…H7, starting from the square roots of the first 8 primes.
  private var state: [UInt32] = [
    0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
  ]
  /// Input bytes not yet forming a whole block (fewer than 64).
  private var pendingBytes: [UInt8] = []
  /// Total message length in bytes so far (wraps like the standard's 64-bit bit counter).
  private var messageByteCount: UInt64 = 0

  /// Creates a hasher for an empty message.
  package init() { pendingBytes.reserveCapacity(Self.blockByteCount) }

  /// The digest of `bytes` as lowercase hexadecimal.
  package static func hexDigest(of bytes: [UInt8]) -> String {
    var hasher = SHA256()
    hasher.update(bytes)
    return hasher.finalizeHex()
  }

  /// Appends `bytes` to the message.
  package mutating func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  /// Appends the bytes in `buffer` to the message.
  package mutating func update(_ buffer: UnsafeRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    messageByteCount &+= UInt64(buffer.count)
    var offset = 0
    if !pendingBytes.isEmpty {
      let taken = min(Self.blockByteCount - pendingBytes.count, buffer.count)
      pendingBytes.append(contentsOf: UnsafeRawBufferPointer(start: base, count: taken))
      offset = taken
      guard pendingBytes.count == Self.blockByteCount else { return }
      let block = pendingBytes
      block.withUnsafeBytes { compressBlocks($0) }
      pendingBytes.removeAll(keepingCapacity: true)
    }
    let wholeBlockBytes = (buffer.count - offset) / Self.blockByteCount * Self.blockByteCount
    if wholeBlockBytes > 0 {
      compressBlocks(UnsafeRawBufferPointer(start: base + offset, count: wholeBlockBytes))
      offset += wholeBlockBytes
    }
    pendingBytes.append(contentsOf: UnsafeRawBufferPointer(start: base + offset, count: buffer.count - offset))
  }

  /// Pads the message and returns its 32-byte digest; the hasher must not be used afterwards.
  mutating func finalize() -> [UInt8] {
    let bitCount = messageByteCount &* 8
    let usedInLastBlock = (pendingBytes.count + 1) % Self.blockByteCount
    let zeroCount = (2 * Self.blockByteCount - 8 - usedInLastBlock) % Self.blockByteCount
    var padding: [UInt8] = [0x80] + repeatElement(0, count: zeroCount)
    for shift in stride(from: 56, through: 0, by: -8) {
      padding.append(UInt8(truncatingIfNeeded: bitCount >> UInt64(shift)))
    }
    update(padding)
    var digest = [UInt8]()
    digest.reserveCapacity(Self.digestByteCount)
    for word in state {
      for shift in stride(from: 24, through: 0, by: -8) {
        digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
      }
    }
    return digest
  }

  /// ``finalize()`` spelled as lowercase hexadecimal.
  mutating func finalizeHex() -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text = [UInt8]()
    for byte in finalize() {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// Runs the compression function over every 64-byte block of `blocks` (a whole number of blocks).
  private mutating func compressBlocks(_ blocks: UnsafeRawBufferPointer) {
    guard let base = blocks.baseAddress else { return }
    Self.roundConstants.withUnsafeBufferPointer { constants in
      state.withUnsafeMutableBufferPointer { hash in
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
          guard let constants = constants.baseAddress, let hash = hash.baseAddress, let schedule = schedule.baseAddress else { return }
          var blockStart = 0
          while blockStart < blocks.count {
            Self.compress(base + blockStart, hash: hash, schedule: schedule, constants: constants)
            blockStart &+= Self.blockByteCount
          }
        }
      }
    }
  }

  /// One application of the SHA-256 compression function to the 64 bytes at `block`. Written
  /// with `while` loops, masking shifts and raw pointers so that unoptimized (debug) builds also
  /// hash at a usable speed.
  @inline(__always)
  private static func compress(
    _ block: UnsafeRawPointer, hash: UnsafeMutablePointer<UInt32>, schedule: UnsafeMutablePointer<UInt32>,
    constants: UnsafePointer<UInt32>
  ) {
    var index = 0
    while index < 16 {
      schedule[index] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: index &* 4, as: UInt32.self))
      index &+= 1
    }
    while index < 64 {
      let early = schedule[index &- 15]
      let late = schedule[index &- 2]
      let sigma0 = ((early &>> 7) | (early &<< 25)) ^ ((early &>> 18) | (early &<< 14)) ^ (early &>> 3)
      let sigma1 = ((late &>> 17) | (late &<< 15)) ^ ((late &>> 19) | (late &<< 13)) ^ (late &>> 10)
      schedule[index] = schedule[index &- 16] &+ sigma0 &+ schedule[index &- 7] &+ sigma1
      index &+= 1
    }
    var a = hash[0], b = hash[1], c = hash[2], d = hash[3]
    var e = hash[4], f = hash[5], g = hash[6], h = hash[7]
    // Eight rounds per pass with the roles of the working variables rotated, instead of moving
    // all eight values after every round.
    index = 0
    while index < 64 {
      round(a, b, c, &d, e, f, g, &h, constants[index] &+ schedule[index])
      round(h, a, b, &c, d, e, f, &g, constants[index &+ 1] &+ schedule[index &+ 1])
      round(g, h, a, &b, c, d, e, &f, constants[index &+ 2] &+ schedule[index &+ 2])
      round(f, g, h, &a, b, c, d, &e, constants[index &+ 3] &+ schedule[index &+ 3])
      round(e, f, g, &h, a, b, c, &d, constants[index &+ 4] &+ schedule[index &+ 4])
      round(d, e, f, &g, h, a, b, &c, constants[index &+ 5] &+ schedule[index &+ 5])
      round(c, d, e, &f, g, h, a, &b, constants[index &+ 6] &+ schedule[index &+ 6])
      round(b, c, d, &e, f, g, h, &a, constants[index &+ 7] &+ schedule[index &+ 7])
      index &+= 8
    }
    hash[0] &+= a
    hash[1] &+= b
    hash[2] &+= c
    hash[3] &+= d
    hash[4] &+= e
    hash[5] &+= f
    hash[6] &+= g
    hash[7] &+= h
  }

  /// One SHA-256 round on working variables a…h (FIPS 180-4 §6.2.2 step 3): `d` gains T1 and
  /// `h` becomes T1 + T2; the caller rotates the roles for the next round.
  @inline(__always)
  private static func round(
    _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32, _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32,
    _ constantPlusWord: UInt32
  ) {
    let bigSigma1 = ((e &>> 6) | (e &<< 26)) ^ ((e &>> 11) | (e &<< 21)) ^ ((e &>> 25) | (e &<< 7))
    let choice = g ^ (e & (f ^ g))
    let temporary1 = h &+ bigSigma1 &+ choice &+ constantPlusWord
    let bigSigma0 = ((a &>> 2) | (a &<< 30)) ^ ((a &>> 13) | (a &<< 19)) ^ ((a &>> 22) | (a &<< 10))
    let majority = (a & (b | c)) | (b & c)
    d &+= temporary1
    h = temporary1 &+ bigSigma0 &+ majority
  }
}
