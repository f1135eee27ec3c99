// Checksums of the formats this module reads: CRC-32 (ISO 3309 / ITU-T V.42, the polynomial
// 0xEDB88320 in reflected form, as PNG chunks and ZIP entries use it) and Adler-32 (RFC 1950, the
// trailer of a zlib stream). Both are incremental: pass the previous value to continue a sum.

/// CRC-32 as PNG and ZIP define it (reflected polynomial 0xEDB88320, initial and final XOR 0xFFFFFFFF).
public enum CRC32 {
  /// Eight 256-entry tables for slice-by-8: `tables[k][b]` is the CRC of byte `b` followed by `k` zero bytes.
  private static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for byte in 0..<256 {
      var crc = UInt32(byte)
      for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
      tables[byte] = crc
    }
    for slice in 1..<8 {
      for byte in 0..<256 {
        let previous = tables[(slice - 1) * 256 + byte]
        tables[slice * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
      }
    }
    return tables
  }()

  /// The CRC-32 of `bytes`, continuing from `crc` (the CRC of the bytes before them; 0 to start).
  public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    var value = ~crc
    tables.withUnsafeBufferPointer { (table: UnsafeBufferPointer<UInt32>) in
      var index = 0
      let count = bytes.count
      while index + 8 <= count {
        let low = value ^ UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self))
        let fromLow = table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
          ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
        let fromHigh = table[3 * 256 + Int(bytes[index + 4])] ^ table[2 * 256 + Int(bytes[index + 5])]
          ^ table[1 * 256 + Int(bytes[index + 6])] ^ table[Int(bytes[index + 7])]
        value = fromLow ^ fromHigh
        index += 8
      }
      while index < count {
        value = (value >> 8) ^ table[Int((value ^ UInt32(bytes[index])) & 0xFF)]
        index += 1
      }
    }
    return ~value
  }

  /// The CRC-32 of `bytes`, continuing from `crc`.
  public static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0, continuing: crc) }
  }
}

/// Adler-32 as zlib defines it (RFC 1950 §8.2): two sums modulo 65521, starting from 1.
public enum Adler32 {
  /// The Adler-32 of `bytes`, continuing from `adler` (1 to start).
  public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing adler: UInt32 = 1) -> UInt32 {
    let modulus: UInt32 = 65521
    // 5552 is the most bytes whose sums cannot overflow 32 bits before the next reduction.
    let blockLength = 5552
    var low = adler & 0xFFFF
    var high = adler >> 16
    var index = 0
    while index < bytes.count {
      let end = min(index + blockLength, bytes.count)
      while index < end {
        low &+= UInt32(bytes[index])
        high &+= low
        index += 1
      }
      low %= modulus
      high %= modulus
    }
    return high << 16 | low
  }

  /// The Adler-32 of `bytes`, continuing from `adler`.
  public static func checksum(_ bytes: [UInt8], continuing adler: UInt32 = 1) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0, continuing: adler) }
  }
}
