// DEFLATE decompression (RFC 1951) and the zlib wrapper around it (RFC 1950), written for PNG
// image data and ZIP entries. Stored, fixed-Huffman and dynamic-Huffman blocks are decoded; a
// zlib stream's header and Adler-32 trailer are checked. Every malformed or truncated stream
// throws `ImageError.malformed` (format "DEFLATE" or "zlib") naming the problem; the output never
// grows past the caller's `maximumSize`, so a small hostile stream cannot claim a huge buffer.
//
// Huffman codes decode through two-level tables: the first `primaryBits` bits of the stream index
// a primary table whose entry is either a symbol with its code length or a pointer to a subtable
// indexed by the code's remaining bits.

/// zlib and raw DEFLATE decompression.
public enum Inflate {
  /// Decompresses the zlib stream `bytes` (header, DEFLATE data, Adler-32), which must produce at
  /// most `maximumSize` bytes. `expectedSize`, when known, sizes the output buffer up front.
  public static func zlib(_ bytes: [UInt8], maximumSize: Int, expectedSize: Int? = nil) throws(ImageError) -> [UInt8] {
    try bytes.withBuffer { (input) throws(ImageError) in
      try decompressZlib(UnsafeRawBufferPointer(input), maximumSize: maximumSize, expectedSize: expectedSize).array
    }
  }

  /// Decompresses raw DEFLATE data (no header or trailer) from the start of `bytes`; returns the
  /// output and how many input bytes the stream used.
  public static func raw(_ bytes: [UInt8], maximumSize: Int, expectedSize: Int? = nil) throws(ImageError) -> (
    output: [UInt8], consumedBytes: Int
  ) {
    try bytes.withBuffer { (input) throws(ImageError) in
      let (buffer, consumed) = try decompressRaw(UnsafeRawBufferPointer(input), maximumSize: maximumSize, expectedSize: expectedSize)
      return (buffer.array, consumed)
    }
  }

  /// Decompresses a zlib stream into an owned buffer (no copy to an array).
  static func decompressZlib(_ input: UnsafeRawBufferPointer, maximumSize: Int, expectedSize: Int?) throws(ImageError)
    -> OwnedBytes
  {
    var inflater = Inflater(input: try zlibBody(input), maximumSize: maximumSize, expectedSize: expectedSize)
    try inflater.run()
    let consumed = inflater.consumedBytes
    let output = inflater.finish()
    try checkAdler32(input, consumed: consumed, output: UnsafeRawBufferPointer(start: output.pointer, count: output.count))
    return output
  }

  /// Decompresses a zlib stream into `buffer`, which bounds the output; returns the bytes written.
  /// (A decoder that knows its output size inflates straight into its result this way.)
  static func decompressZlib(_ input: UnsafeRawBufferPointer, into buffer: UnsafeMutableBufferPointer<UInt8>)
    throws(ImageError) -> Int
  {
    var inflater = Inflater(input: try zlibBody(input), into: buffer)
    try inflater.run()
    let produced = inflater.producedCount
    try checkAdler32(input, consumed: inflater.consumedBytes, output: UnsafeRawBufferPointer(start: buffer.baseAddress, count: produced))
    return produced
  }

  /// The DEFLATE data after a valid 2-byte zlib header.
  private static func zlibBody(_ input: UnsafeRawBufferPointer) throws(ImageError) -> UnsafeRawBufferPointer {
    guard input.count >= 2 else { throw zlibError("the stream is shorter than its 2-byte header", at: 0) }
    let method = input[0], flags = input[1]
    guard method & 0x0F == 8, method >> 4 <= 7 else {
      throw zlibError("compression method \(method & 0x0F) with window \(method >> 4) is not DEFLATE", at: 0)
    }
    guard (UInt16(method) << 8 | UInt16(flags)) % 31 == 0 else { throw zlibError("the header check bits are wrong", at: 1) }
    guard flags & 0x20 == 0 else { throw zlibError("the stream needs a preset dictionary", at: 1) }
    return UnsafeRawBufferPointer(rebasing: input[2...])
  }

  /// Checks the Adler-32 trailer after the `consumed` DEFLATE bytes against `output`.
  private static func checkAdler32(_ input: UnsafeRawBufferPointer, consumed: Int, output: UnsafeRawBufferPointer)
    throws(ImageError)
  {
    let end = 2 + consumed
    guard end + 4 <= input.count else { throw zlibError("the Adler-32 trailer is missing", at: end) }
    let stored = UInt32(input[end]) << 24 | UInt32(input[end + 1]) << 16 | UInt32(input[end + 2]) << 8 | UInt32(input[end + 3])
    let computed = Adler32.checksum(output)
    guard stored == computed else {
      throw zlibError("Adler-32 mismatch: stored \(hex(stored)), computed \(hex(computed))", at: end)
    }
  }

  /// Decompresses raw DEFLATE data into an owned buffer; also returns the input bytes used.
  static func decompressRaw(_ input: UnsafeRawBufferPointer, maximumSize: Int, expectedSize: Int?) throws(ImageError)
    -> (OwnedBytes, Int)
  {
    var inflater = Inflater(input: input, maximumSize: maximumSize, expectedSize: expectedSize)
    try inflater.run()
    let consumed = inflater.consumedBytes
    return (inflater.finish(), consumed)
  }

  private static func zlibError(_ message: String, at offset: Int) -> ImageError {
    .malformed(format: "zlib", message: message, offset: offset)
  }
}

/// `0x` and eight hex digits.
func hex(_ value: UInt32) -> String {
  let digits = String(value, radix: 16)
  return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}

/// A heap buffer of bytes this module filled, freed when the last reference goes.
final class OwnedBytes {
  /// Start of the bytes.
  let pointer: UnsafeMutablePointer<UInt8>
  /// Bytes written.
  let count: Int

  init(taking pointer: UnsafeMutablePointer<UInt8>, count: Int) {
    self.pointer = pointer
    self.count = count
  }

  deinit { pointer.deallocate() }

  /// The bytes, copied into an array.
  var array: [UInt8] { Array(UnsafeBufferPointer(start: pointer, count: count)) }
}

/// Lookup tables of one canonical Huffman code, as DEFLATE transmits it (code lengths per symbol).
struct HuffmanTable {
  /// Entry bits: 0–7 the bits to consume (0 marks an unused code), 15 set for a subtable pointer,
  /// 8–11 the subtable's index bits, 16–31 the symbol (or the subtable's start).
  private(set) var entries: [UInt32] = []
  /// Bits that index the primary table.
  let primaryBits: Int

  private static let subtableFlag: UInt32 = 0x8000

  /// A table for symbols `0..<lengths.count` with those code lengths (0 = unused); throws when the
  /// lengths over-subscribe the code space or leave it incomplete (except a lone 1-bit code, which
  /// DEFLATE allows). All lengths 0 give a table that decodes nothing.
  init(lengths: UnsafeBufferPointer<UInt8>, primaryBits: Int, what: String) throws(ImageError) {
    self.primaryBits = primaryBits
    var countsByLength = [Int](repeating: 0, count: 16)
    for length in lengths { countsByLength[Int(length)] += 1 }
    countsByLength[0] = 0
    var unused = 1
    var longest = 0
    for length in 1...15 {
      unused = unused * 2 - countsByLength[length]
      guard unused >= 0 else { throw ImageError.malformed(format: "DEFLATE", message: "the \(what) code lengths over-subscribe the code", offset: nil) }
      if countsByLength[length] > 0 { longest = length }
    }
    if longest == 0 {
      entries = [UInt32](repeating: 0, count: 1 << primaryBits)
      return
    }
    guard unused == 0 || (longest == 1 && countsByLength[1] == 1) else {
      throw ImageError.malformed(format: "DEFLATE", message: "the \(what) code lengths leave the code incomplete", offset: nil)
    }
    var nextCode = [Int](repeating: 0, count: 16)
    var code = 0
    for length in 1...15 {
      code = (code + countsByLength[length - 1]) << 1
      nextCode[length] = code
    }
    // Canonical codes, reversed because DEFLATE sends Huffman codes most significant bit first
    // while the bit reader takes bits from the least significant end.
    var reversedCodes = [Int](repeating: 0, count: lengths.count)
    for symbol in lengths.indices where lengths[symbol] > 0 {
      let length = Int(lengths[symbol])
      var forward = nextCode[length]
      nextCode[length] += 1
      var reversed = 0
      for _ in 0..<length {
        reversed = reversed << 1 | (forward & 1)
        forward >>= 1
      }
      reversedCodes[symbol] = reversed
    }
    let primarySize = 1 << primaryBits
    let primaryMask = primarySize - 1
    var subtableBits = [Int](repeating: 0, count: primarySize)
    for symbol in lengths.indices where Int(lengths[symbol]) > primaryBits {
      let prefix = reversedCodes[symbol] & primaryMask
      subtableBits[prefix] = max(subtableBits[prefix], Int(lengths[symbol]) - primaryBits)
    }
    var subtableStart = [Int](repeating: 0, count: primarySize)
    var size = primarySize
    for prefix in 0..<primarySize where subtableBits[prefix] > 0 {
      subtableStart[prefix] = size
      size += 1 << subtableBits[prefix]
    }
    var table = [UInt32](repeating: 0, count: size)
    for prefix in 0..<primarySize where subtableBits[prefix] > 0 {
      table[prefix] = UInt32(subtableStart[prefix]) << 16 | Self.subtableFlag | UInt32(subtableBits[prefix]) << 8
        | UInt32(primaryBits)
    }
    for symbol in lengths.indices where lengths[symbol] > 0 {
      let length = Int(lengths[symbol])
      let reversed = reversedCodes[symbol]
      if length <= primaryBits {
        for index in stride(from: reversed, to: primarySize, by: 1 << length) {
          table[index] = UInt32(symbol) << 16 | UInt32(length)
        }
      } else {
        let prefix = reversed & primaryMask
        let remaining = length - primaryBits
        for index in stride(from: reversed >> primaryBits, to: 1 << subtableBits[prefix], by: 1 << remaining) {
          table[subtableStart[prefix] + index] = UInt32(symbol) << 16 | UInt32(remaining)
        }
      }
    }
    entries = table
  }

  /// Resolves the entry for the low bits of `bits`: returns the symbol and the bits its code used
  /// (0 when the bits are not a code of this table).
  @inline(__always)
  func decode(_ bits: UInt64, in table: UnsafeBufferPointer<UInt32>) -> (symbol: Int, length: Int) {
    let entry = table[Int(truncatingIfNeeded: bits) & ((1 << primaryBits) - 1)]
    if entry & Self.subtableFlag == 0 { return (Int(entry >> 16), Int(entry & 0xFF)) }
    let indexBits = Int((entry >> 8) & 0xF)
    let subEntry = table[Int(entry >> 16) + (Int(truncatingIfNeeded: bits >> UInt64(primaryBits)) & ((1 << indexBits) - 1))]
    let remaining = Int(subEntry & 0xFF)
    return (Int(subEntry >> 16), remaining == 0 ? 0 : primaryBits + remaining)
  }
}

/// The state of one DEFLATE decompression: the bit reader over the input and the output buffer.
struct Inflater {
  private let input: UnsafeRawBufferPointer
  /// Next input byte to load into `bitBuffer`.
  private var position = 0
  /// Unconsumed input bits, least significant first; `bitCount` of them are valid.
  private var bitBuffer: UInt64 = 0
  private var bitCount = 0
  /// Zero bytes added to `bitBuffer` past the end of the input (a truncated stream reads them).
  private var paddingBytes = 0

  private var output: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  private var count = 0
  private let maximumSize: Int

  /// Lengths 3–258: base and extra bits of symbols 257–285.
  private static let lengthBase: [UInt16] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
  ]
  private static let lengthExtra: [UInt8] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
  ]
  /// Distances 1–32768: base and extra bits of distance symbols 0–29.
  private static let distanceBase: [UInt16] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
    8193, 12289, 16385, 24577,
  ]
  private static let distanceExtra: [UInt8] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
  ]
  /// Order in which a dynamic block sends the code-length code's lengths.
  private static let codeLengthOrder: [Int] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

  private static let fixedLiteralTable: HuffmanTable = {
    var lengths = [UInt8](repeating: 8, count: 288)
    for symbol in 144..<256 { lengths[symbol] = 9 }
    for symbol in 256..<280 { lengths[symbol] = 7 }
    return lengths.withUnsafeBufferPointer { try! HuffmanTable(lengths: $0, primaryBits: 9, what: "fixed literal") }
  }()
  private static let fixedDistanceTable: HuffmanTable = {
    let lengths = [UInt8](repeating: 5, count: 32)
    return lengths.withUnsafeBufferPointer { try! HuffmanTable(lengths: $0, primaryBits: 5, what: "fixed distance") }
  }()

  init(input: UnsafeRawBufferPointer, maximumSize: Int, expectedSize: Int?) {
    self.input = input
    self.maximumSize = max(0, maximumSize)
    // DEFLATE expands at most 1032:1 (258-byte matches in under two bits each), so the first
    // buffer never exceeds what the input could really produce, whatever a header claims.
    let possible = input.count > Int.max / 2048 ? Int.max : input.count * 1032 + 1024
    capacity = max(1, min(self.maximumSize, possible, expectedSize ?? max(input.count * 4, 1 << 16)))
    output = .allocate(capacity: capacity)
  }

  /// An inflater writing into `buffer` (not owned; never reallocated: the output may not exceed it).
  init(input: UnsafeRawBufferPointer, into buffer: UnsafeMutableBufferPointer<UInt8>) {
    self.input = input
    maximumSize = buffer.count
    capacity = buffer.count
    output = buffer.baseAddress ?? .allocate(capacity: 0)
  }

  /// Output bytes written so far.
  var producedCount: Int { count }

  /// Input bytes the stream used, up to the end of its last block's final byte.
  var consumedBytes: Int { position - bitCount / 8 }

  /// Hands over the output; the inflater must not be used afterwards.
  consuming func finish() -> OwnedBytes { OwnedBytes(taking: output, count: count) }

  private func error(_ message: String) -> ImageError {
    .malformed(format: "DEFLATE", message: message, offset: min(consumedBytes, input.count))
  }

  /// Tops the bit buffer up to at least 56 bits; past the end of the input it adds zero bytes,
  /// and throws once more than 16 of them would be needed (the stream is truncated).
  @inline(__always)
  private mutating func refill() throws(ImageError) {
    if position + 8 <= input.count {
      bitBuffer |= input.loadUnaligned(fromByteOffset: position, as: UInt64.self).littleEndian << UInt64(bitCount)
      position += (63 - bitCount) >> 3
      bitCount |= 56
      return
    }
    while bitCount <= 56 {
      if position < input.count {
        bitBuffer |= UInt64(input[position]) << UInt64(bitCount)
      } else {
        guard paddingBytes < 16 else { throw truncated() }
        paddingBytes += 1
      }
      position += 1
      bitCount += 8
    }
  }

  private func truncated() -> ImageError {
    .malformed(format: "DEFLATE", message: "the compressed data ends early", offset: input.count)
  }

  /// Throws when the bits consumed so far reach into the padding past the input's end.
  private func checkNotPastEnd() throws(ImageError) {
    if bitCount < paddingBytes * 8 { throw truncated() }
  }

  @inline(__always)
  private mutating func take(_ bits: Int) -> Int {
    let value = Int(truncatingIfNeeded: bitBuffer & ((1 << UInt64(bits)) - 1))
    bitBuffer >>= UInt64(bits)
    bitCount -= bits
    return value
  }

  /// Decodes blocks until the final one ends.
  mutating func run() throws(ImageError) {
    var literalTable = HuffmanTable.placeholder(primaryBits: 10)
    var distanceTable = HuffmanTable.placeholder(primaryBits: 8)
    while true {
      try refill()
      let isFinal = take(1) == 1
      switch take(2) {
      case 0: try copyStoredBlock()
      case 1: try decodeHuffmanBlock(literals: Self.fixedLiteralTable, distances: Self.fixedDistanceTable)
      case 2:
        try readDynamicTables(literals: &literalTable, distances: &distanceTable)
        try decodeHuffmanBlock(literals: literalTable, distances: distanceTable)
      default: throw error("block type 3 is reserved")
      }
      try checkNotPastEnd()
      if isFinal { break }
    }
    // Give back whole unread bytes so `consumedBytes` ends at the final block's last byte.
    _ = take(bitCount % 8)
  }

  /// Makes room for `extra` more output bytes, doubling the buffer up to `maximumSize`.
  @inline(__always)
  private mutating func reserve(_ extra: Int) throws(ImageError) {
    if count + extra <= capacity { return }
    guard count + extra <= maximumSize else {
      throw error("the data decompresses to more than the \(maximumSize) bytes expected")
    }
    let newCapacity = min(maximumSize, max(count + extra, capacity * 2))
    let newOutput = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
    newOutput.update(from: output, count: count)
    output.deallocate()
    output = newOutput
    capacity = newCapacity
  }

  private mutating func copyStoredBlock() throws(ImageError) {
    _ = take(bitCount % 8)
    // Hand the whole bytes still in the bit buffer back to the input.
    let buffered = bitCount / 8 - paddingBytes
    guard buffered >= 0 else { throw truncated() }
    position -= bitCount / 8
    bitBuffer = 0
    bitCount = 0
    paddingBytes = 0
    guard position + 4 <= input.count else { throw truncated() }
    let length = Int(input[position]) | Int(input[position + 1]) << 8
    let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
    guard length ^ 0xFFFF == complement else { throw error("a stored block's length \(length) does not match its complement") }
    position += 4
    guard position + length <= input.count else { throw truncated() }
    try reserve(length)
    (output + count).update(from: input.baseAddress!.assumingMemoryBound(to: UInt8.self) + position, count: length)
    count += length
    position += length
  }

  private mutating func readDynamicTables(literals: inout HuffmanTable, distances: inout HuffmanTable) throws(ImageError) {
    let literalCount = take(5) + 257
    let distanceCount = take(5) + 1
    let codeLengthCount = take(4) + 4
    guard literalCount <= 286, distanceCount <= 30 else {
      throw error("a dynamic block declares \(literalCount) literal/length and \(distanceCount) distance codes (at most 286 and 30)")
    }
    var codeLengthLengths = [UInt8](repeating: 0, count: 19)
    for index in 0..<codeLengthCount {
      // 19 lengths of 3 bits are more than one refill holds.
      if bitCount < 3 { try refill() }
      codeLengthLengths[Self.codeLengthOrder[index]] = UInt8(take(3))
    }
    let codeLengthTable = try codeLengthLengths.withBuffer { (lengths) throws(ImageError) in
      try HuffmanTable(lengths: lengths, primaryBits: 7, what: "code length")
    }
    var lengths = [UInt8](repeating: 0, count: literalCount + distanceCount)
    var index = 0
    try codeLengthTable.entries.withBuffer { (table) throws(ImageError) in
      while index < lengths.count {
        try refill()
        let (symbol, used) = codeLengthTable.decode(bitBuffer, in: table)
        guard used > 0 else { throw error("a code length is not a code of the code-length code") }
        _ = take(used)
        switch symbol {
        case 0...15:
          lengths[index] = UInt8(symbol)
          index += 1
        default:
          let (value, repeats): (UInt8, Int)
          switch symbol {
          case 16:
            guard index > 0 else { throw error("a code length repeat has no previous length") }
            (value, repeats) = (lengths[index - 1], 3 + take(2))
          case 17: (value, repeats) = (0, 3 + take(3))
          default: (value, repeats) = (0, 11 + take(7))
          }
          guard index + repeats <= lengths.count else { throw error("code length repeats run past the declared codes") }
          for offset in 0..<repeats { lengths[index + offset] = value }
          index += repeats
        }
      }
    }
    guard lengths[256] > 0 else { throw error("the block has no end-of-block code") }
    try lengths.withBuffer { (all) throws(ImageError) in
      literals = try HuffmanTable(
        lengths: UnsafeBufferPointer(rebasing: all[0..<literalCount]), primaryBits: 10, what: "literal/length")
      distances = try HuffmanTable(
        lengths: UnsafeBufferPointer(rebasing: all[literalCount...]), primaryBits: 8, what: "distance")
    }
  }

  private mutating func decodeHuffmanBlock(literals: HuffmanTable, distances: HuffmanTable) throws(ImageError) {
    try literals.entries.withBuffer { (literalEntries) throws(ImageError) in
      try distances.entries.withBuffer { (distanceEntries) throws(ImageError) in
        try Self.lengthBase.withBuffer { (lengthBase) throws(ImageError) in
          try Self.lengthExtra.withBuffer { (lengthExtra) throws(ImageError) in
            try Self.distanceBase.withBuffer { (distanceBase) throws(ImageError) in
              try Self.distanceExtra.withBuffer { (distanceExtra) throws(ImageError) in
                while true {
                  // 56 bits cover the longest length/distance pair (15 + 5 + 15 + 13 bits).
                  if bitCount < 48 { try refill() }
                  let (symbol, used) = literals.decode(bitBuffer, in: literalEntries)
                  guard used > 0 else { throw error("invalid literal/length code") }
                  bitBuffer >>= UInt64(used)
                  bitCount -= used
                  if symbol < 256 {
                    if count == capacity { try reserve(1) }
                    output[count] = UInt8(truncatingIfNeeded: symbol)
                    count += 1
                    continue
                  }
                  if symbol == 256 { return }
                  let lengthIndex = symbol - 257
                  guard lengthIndex < 29 else { throw error("literal/length symbol \(symbol) is reserved") }
                  let length = Int(lengthBase[lengthIndex]) + take(Int(lengthExtra[lengthIndex]))
                  let (distanceSymbol, distanceUsed) = distances.decode(bitBuffer, in: distanceEntries)
                  guard distanceUsed > 0 else { throw error("invalid distance code") }
                  bitBuffer >>= UInt64(distanceUsed)
                  bitCount -= distanceUsed
                  guard distanceSymbol < 30 else { throw error("distance symbol \(distanceSymbol) is reserved") }
                  let distance = Int(distanceBase[distanceSymbol]) + take(Int(distanceExtra[distanceSymbol]))
                  guard distance <= count else {
                    throw error("a match reaches \(distance) bytes back with only \(count) bytes written")
                  }
                  if count + length > capacity { try reserve(length) }
                  let destination = output + count
                  let source = destination - distance
                  if distance >= length {
                    destination.update(from: source, count: length)
                  } else {
                    for offset in 0..<length { destination[offset] = source[offset] }
                  }
                  count += length
                }
              }
            }
          }
        }
      }
    }
  }
}

extension HuffmanTable {
  /// An empty table, replaced before use.
  static func placeholder(primaryBits: Int) -> HuffmanTable {
    let none = [UInt8](repeating: 0, count: 1)
    return none.withUnsafeBufferPointer { try! HuffmanTable(lengths: $0, primaryBits: primaryBits, what: "empty") }
  }
}
