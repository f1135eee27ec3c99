import Foundation

/// Incremental MD5 (RFC 1321), for Cloud Storage's `md5Hash` (base64 of the 16-byte digest).
/// MD5 only detects accidents here (the transfer and the store); it is no defence against a
/// hostile server, which controls the metadata too.
struct MD5: Sendable {
  /// Per-round left-rotation amounts.
  private static let shifts: [UInt32] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
  ]
  /// `floor(abs(sin(i + 1)) * 2^32)`.
  private static let constants: [UInt32] = (0..<64).map { UInt32(truncatingIfNeeded: Int64((abs(sin(Double($0 + 1))) * 4_294_967_296).rounded(.down))) }

  /// The state A, B, C, D.
  private var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
  /// Input not yet forming a 64-byte block.
  private var pending: [UInt8] = []
  /// Message length in bytes.
  private var length: UInt64 = 0

  /// Starts the digest of an empty message.
  init() {}

  /// Appends `bytes`.
  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    length &+= UInt64(bytes.count)
    var index = 0
    if !pending.isEmpty {
      let take = min(64 - pending.count, bytes.count)
      pending.append(contentsOf: bytes[0..<take])
      index = take
      guard pending.count == 64 else { return }
      let block = pending
      block.withUnsafeBytes { compress($0) }
      pending.removeAll(keepingCapacity: true)
    }
    while index + 64 <= bytes.count {
      compress(UnsafeRawBufferPointer(rebasing: bytes[index..<index + 64]))
      index += 64
    }
    pending.append(contentsOf: bytes[index...])
  }

  /// Runs the compression function on one 64-byte block.
  private mutating func compress(_ block: UnsafeRawBufferPointer) {
    var (a, b, c, d) = state
    for round in 0..<64 {
      let mixed: UInt32
      let wordIndex: Int
      switch round {
      case 0..<16: (mixed, wordIndex) = ((b & c) | (~b & d), round)
      case 16..<32: (mixed, wordIndex) = ((d & b) | (~d & c), (5 * round + 1) % 16)
      case 32..<48: (mixed, wordIndex) = (b ^ c ^ d, (3 * round + 5) % 16)
      default: (mixed, wordIndex) = (c ^ (b | ~d), (7 * round) % 16)
      }
      let word = UInt32(littleEndian: block.loadUnaligned(fromByteOffset: 4 * wordIndex, as: UInt32.self))
      let sum = a &+ mixed &+ Self.constants[round] &+ word
      let shift = Self.shifts[round]
      (a, d, c) = (d, c, b)
      b = b &+ ((sum << shift) | (sum >> (32 - shift)))
    }
    state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
  }

  /// The 16-byte digest; the hasher is spent afterwards.
  mutating func finalize() -> [UInt8] {
    let bitLength = length &* 8
    var padding: [UInt8] = [0x80] + [UInt8](repeating: 0, count: (119 - Int(length % 64)) % 64)
    for byte in 0..<8 { padding.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(byte)))) }
    padding.withUnsafeBytes { update($0) }
    return [state.0, state.1, state.2, state.3].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
  }
}
