import Foundation

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum Cloud Storage reports as
/// `crc32c`: base64 of the four bytes in big-endian order. Slicing-by-8 tables, computed once.
struct CRC32C: Sendable {
  /// `tables[k][b]`: the CRC of byte `b` followed by `k` zero bytes.
  private static let tables: [[UInt32]] = {
    var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
    for byte in 0..<256 {
      var crc = UInt32(byte)
      for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
      tables[0][byte] = crc
    }
    for byte in 0..<256 {
      for slice in 1..<8 { tables[slice][byte] = (tables[slice - 1][byte] >> 8) ^ tables[0][Int(tables[slice - 1][byte] & 0xFF)] }
    }
    return tables
  }()

  /// The running register (inverted).
  private var register: UInt32 = 0xFFFF_FFFF

  /// Starts a checksum of an empty message.
  init() {}

  /// Appends `bytes`.
  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    var crc = register
    var index = 0
    Self.tables.withUnsafeBufferPointer { tables in
      let t0 = tables[0], t1 = tables[1], t2 = tables[2], t3 = tables[3]
      let t4 = tables[4], t5 = tables[5], t6 = tables[6], t7 = tables[7]
      while index + 8 <= bytes.count {
        let low = crc ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
        crc = t7[Int(low & 0xFF)] ^ t6[Int((low >> 8) & 0xFF)] ^ t5[Int((low >> 16) & 0xFF)] ^ t4[Int(low >> 24)]
          ^ t3[Int(bytes[index + 4])] ^ t2[Int(bytes[index + 5])] ^ t1[Int(bytes[index + 6])] ^ t0[Int(bytes[index + 7])]
        index += 8
      }
      while index < bytes.count {
        crc = (crc >> 8) ^ t0[Int((crc ^ UInt32(bytes[index])) & 0xFF)]
        index += 1
      }
    }
    register = crc
  }

  /// The checksum of everything appended.
  var value: UInt32 { ~register }

  /// The checksum as Cloud Storage spells it: base64 of its big-endian bytes.
  var base64: String {
    let checksum = value
    return [UInt8(checksum >> 24), UInt8((checksum >> 16) & 0xFF), UInt8((checksum >> 8) & 0xFF), UInt8(checksum & 0xFF)]
      .withUnsafeBytes { Data($0) }.base64EncodedString()
  }
}
