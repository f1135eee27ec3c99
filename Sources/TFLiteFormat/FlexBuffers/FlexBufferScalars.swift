/// Little-endian loads of the 1, 2, 4 and 8 byte scalars FlexBuffers stores. Callers check the
/// bounds first (the verifier, or the accessors of verified references); loads are unaligned.
extension UnsafeRawBufferPointer {
  /// The unsigned integer of `width` bytes at `offset`.
  func flexUnsigned(at offset: Int, width: Int) -> UInt64 {
    switch width {
    case 1: return UInt64(self[offset])
    case 2: return UInt64(UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
    case 4: return UInt64(UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    default: return UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
  }

  /// The two's-complement signed integer of `width` bytes at `offset`, sign-extended.
  func flexSigned(at offset: Int, width: Int) -> Int64 {
    let bits = flexUnsigned(at: offset, width: width)
    let unusedBits = UInt64(64 - 8 * width)
    return Int64(bitPattern: bits << unusedBits) >> unusedBits
  }

  /// The IEEE floating-point number of `width` bytes (2, 4 or 8; the verifier rejects 1) at `offset`.
  func flexFloat(at offset: Int, width: Int) -> Double {
    let bits = flexUnsigned(at: offset, width: width)
    switch width {
    case 2: return Double(HalfPrecision.float(fromBits: UInt16(truncatingIfNeeded: bits)))
    case 4: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
    default: return Double(bitPattern: bits)
    }
  }
}
