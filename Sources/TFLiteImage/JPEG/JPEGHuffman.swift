// Huffman decoding for JPEG entropy-coded segments (ITU T.81 annex C and F.2.2).
//
// A table is built from a DHT segment's 16 code-length counts and its symbols. Codes of up to
// `fastBits` bits decode with one table look-up; longer ones walk the per-length `maxCode`
// bounds. A table whose codes do not fit their lengths (libjpeg's rule: after the codes of each
// length the next code must still fit in that many bits, so no code is all ones) is refused.
//
// `JPEGBitReader` reads the bits of one scan MSB first, removes the 0x00 stuffed after each
// 0xFF data byte, and stops at a marker: from then on it supplies zero bits, as libjpeg does, so
// a scan cut short by a marker still decodes. Reaching the end of the file inside a scan is an
// error (the file is truncated).

/// One Huffman table, ready for decoding.
final class JPEGHuffmanTable {
  /// Codes of at most this many bits decode with one look-up.
  static let fastBits = 9

  /// `(length << 8) | symbol` for each `fastBits`-bit prefix that starts a short code, else 0.
  let fastLookup: UnsafeMutablePointer<UInt16>
  /// Largest code of each length 0...16 (-1 when there is none), for codes longer than `fastBits`.
  let maxCode: UnsafeMutablePointer<Int32>
  /// `symbolIndex - code` for the codes of each length.
  let valueOffset: UnsafeMutablePointer<Int32>
  /// The symbols in code order.
  let symbols: UnsafeMutablePointer<UInt8>
  /// AC tables: for each `fastBits`-bit prefix that holds a whole nonzero coefficient (code and
  /// magnitude bits), `value << 16 | run << 8 | bits used`; else 0.
  let fastCoefficients: UnsafeMutablePointer<Int32>

  /// Builds a table from `counts[i]` = number of codes of length `i + 1` and the symbols in
  /// code order. `isDC` tables may only hold magnitude categories 0...15.
  init(counts: [Int], symbols symbolList: [UInt8], isDC: Bool, offset: Int) throws(ImageError) {
    fastLookup = .allocate(capacity: 1 << Self.fastBits)
    fastLookup.initialize(repeating: 0, count: 1 << Self.fastBits)
    maxCode = .allocate(capacity: 18)
    maxCode.initialize(repeating: -1, count: 18)
    valueOffset = .allocate(capacity: 18)
    valueOffset.initialize(repeating: 0, count: 18)
    symbols = .allocate(capacity: 256)
    symbols.initialize(repeating: 0, count: 256)
    fastCoefficients = .allocate(capacity: 1 << Self.fastBits)
    fastCoefficients.initialize(repeating: 0, count: 1 << Self.fastBits)
    guard symbolList.count <= 256, counts.count == 16, counts.reduce(0, +) == symbolList.count else {
      throw ImageError.malformed(format: "JPEG", message: "Huffman table with \(symbolList.count) symbols", offset: offset)
    }
    for (index, symbol) in symbolList.enumerated() {
      if isDC && symbol > 15 {
        throw ImageError.malformed(
          format: "JPEG", message: "DC Huffman table holds magnitude category \(symbol) (at most 15)", offset: offset)
      }
      symbols[index] = symbol
    }
    var code = 0
    var symbolIndex = 0
    for length in 1...16 {
      let count = counts[length - 1]
      valueOffset[length] = Int32(symbolIndex - code)
      for _ in 0..<count {
        if length <= Self.fastBits {
          let shift = Self.fastBits - length
          let entry = UInt16(length << 8) | UInt16(symbolList[symbolIndex])
          for prefix in (code << shift)..<((code + 1) << shift) { fastLookup[prefix] = entry }
        }
        code += 1
        symbolIndex += 1
      }
      if count > 0 { maxCode[length] = Int32(code - 1) }
      guard code < (1 << length) else {
        throw ImageError.malformed(
          format: "JPEG", message: "Huffman table overflows: too many codes of length \(length) or shorter",
          offset: offset)
      }
      code <<= 1
    }
    maxCode[17] = Int32.max
    guard !isDC else { return }
    for prefix in 0..<(1 << Self.fastBits) {
      let entry = Int(fastLookup[prefix])
      let (length, run, size) = (entry >> 8, (entry >> 4) & 15, entry & 15)
      guard entry != 0, size != 0, length + size <= Self.fastBits else { continue }
      let magnitude = Int32((prefix >> (Self.fastBits - length - size)) & ((1 << size) - 1))
      let value = JPEGBitReader.extend(magnitude, size: size)
      fastCoefficients[prefix] = value << 16 | Int32(run << 8 | (length + size))
    }
  }

  deinit {
    fastLookup.deallocate()
    maxCode.deallocate()
    valueOffset.deallocate()
    symbols.deallocate()
    fastCoefficients.deallocate()
  }
}

/// Reads the entropy-coded bits of a scan.
struct JPEGBitReader {
  /// The whole file.
  let bytes: UnsafeBufferPointer<UInt8>
  /// The next byte to read.
  var position: Int
  /// Unread bits, most significant first.
  var buffer: UInt64 = 0
  /// How many bits of `buffer` are valid.
  var bitCount = 0
  /// Whether a marker ended the data (zero bits are supplied since).
  var reachedMarker = false

  init(bytes: UnsafeBufferPointer<UInt8>, position: Int) {
    self.bytes = bytes
    self.position = position
  }

  /// Tops `buffer` up to more than 56 valid bits: when the next 8 bytes hold no 0xFF (no stuffing,
  /// no marker), as many whole bytes as fit are added with one big-endian load; otherwise byte by
  /// byte.
  @inline(__always)
  mutating func fill() throws(ImageError) {
    if !reachedMarker && bitCount <= 56 && position + 8 <= bytes.count {
      let word = UInt64(bigEndian: UnsafeRawPointer(bytes.baseAddress! + position).loadUnaligned(as: UInt64.self))
      let inverted = ~word
      let hasFFByte = (inverted &- 0x0101_0101_0101_0101) & ~inverted & 0x8080_8080_8080_8080 != 0
      if !hasFFByte {
        let byteCount = (64 - bitCount) / 8
        buffer |= (word >> UInt64(64 - 8 * byteCount)) << UInt64(64 - bitCount - 8 * byteCount)
        position += byteCount
        bitCount += 8 * byteCount
        return
      }
    }
    while bitCount <= 56 {
      var byte: UInt64 = 0
      if !reachedMarker {
        guard position < bytes.count else { throw truncated() }
        let value = bytes[position]
        if value == 0xFF {
          guard position + 1 < bytes.count else { throw truncated() }
          let next = bytes[position + 1]
          if next == 0x00 {
            byte = 0xFF
            position += 2
          } else if next == 0xFF {
            position += 1  // a fill byte before a marker
            continue
          } else {
            reachedMarker = true
          }
        } else {
          byte = UInt64(value)
          position += 1
        }
      }
      buffer |= byte << UInt64(56 - bitCount)
      bitCount += 8
    }
  }

  private func truncated() -> ImageError {
    ImageError.malformed(format: "JPEG", message: "file ends inside entropy-coded data", offset: position)
  }

  /// Removes and returns the next `count` bits (0...16) as an unsigned number.
  @inline(__always)
  mutating func bits(_ count: Int) throws(ImageError) -> Int {
    if count == 0 { return 0 }
    if bitCount < count { try fill() }
    let value = Int(truncatingIfNeeded: buffer >> UInt64(64 - count))
    buffer <<= UInt64(count)
    bitCount -= count
    return value
  }

  /// Removes one bit.
  @inline(__always)
  mutating func bit() throws(ImageError) -> Bool {
    try bits(1) != 0
  }

  /// Reads a `count`-bit magnitude and gives it its sign (T.81 F.2.2.1 EXTEND).
  @inline(__always)
  mutating func signedValue(_ count: Int) throws(ImageError) -> Int32 {
    if count == 0 { return 0 }
    return Self.extend(Int32(try bits(count)), size: count)
  }

  /// A `size`-bit magnitude with its sign (T.81 F.2.2.1 EXTEND).
  @inline(__always)
  static func extend(_ value: Int32, size: Int) -> Int32 {
    value < (1 << (size - 1)) ? value - (1 << size) + 1 : value
  }

  /// The next nonzero AC coefficient when the table's `fastCoefficients` holds it (`value << 16 |
  /// run << 8 | bits`, its bits removed), else 0 with nothing removed.
  @inline(__always)
  mutating func fastCoefficient(_ table: JPEGHuffmanTable) throws(ImageError) -> Int32 {
    if bitCount < 16 { try fill() }
    let entry = table.fastCoefficients[Int(truncatingIfNeeded: buffer >> UInt64(64 - JPEGHuffmanTable.fastBits))]
    let used = Int(entry & 0xFF)
    buffer <<= UInt64(used)
    bitCount -= used
    return entry
  }

  /// Decodes one Huffman symbol.
  @inline(__always)
  mutating func decode(_ table: JPEGHuffmanTable) throws(ImageError) -> Int {
    if bitCount < 16 { try fill() }
    let entry = table.fastLookup[Int(truncatingIfNeeded: buffer >> UInt64(64 - JPEGHuffmanTable.fastBits))]
    if entry != 0 {
      let length = Int(entry >> 8)
      buffer <<= UInt64(length)
      bitCount -= length
      return Int(entry & 0xFF)
    }
    var length = JPEGHuffmanTable.fastBits + 1
    while length <= 16 {
      let code = Int32(truncatingIfNeeded: buffer >> UInt64(64 - length))
      if code <= table.maxCode[length] {
        buffer <<= UInt64(length)
        bitCount -= length
        return Int(table.symbols[Int(code + table.valueOffset[length])])
      }
      length += 1
    }
    throw ImageError.malformed(format: "JPEG", message: "bits that are no code of the Huffman table", offset: position)
  }

  /// Drops the bits read ahead. Reading ahead stops at markers, so whatever the buffer held
  /// belonged to the segment that just ended; `position` is at or before the next marker.
  mutating func discardBufferedBits() {
    buffer = 0
    bitCount = 0
    reachedMarker = false
  }
}
