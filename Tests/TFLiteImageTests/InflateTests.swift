import Testing
@testable import TFLiteImage

@Suite struct InflateTests {
  @Test func checksumsMatchPublishedValues() {
    #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    #expect(Adler32.checksum(Array("Wikipedia".utf8)) == 0x11E6_0398)
    // Incremental sums equal one-shot sums, across the slice-by-8 boundary.
    let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    #expect(CRC32.checksum(Array(bytes[13...]), continuing: CRC32.checksum(Array(bytes[..<13]))) == CRC32.checksum(bytes))
    #expect(Adler32.checksum(Array(bytes[13...]), continuing: Adler32.checksum(Array(bytes[..<13]))) == Adler32.checksum(bytes))
  }

  /// `zlib.compress(b"hello hello hello hello", 9)` from Python's zlib (a fixed-Huffman block with a match).
  static let helloStream: [UInt8] = [120, 218, 203, 72, 205, 201, 201, 87, 200, 64, 39, 1, 104, 3, 8, 177]

  @Test func decodesZlibStream() throws {
    #expect(try Inflate.zlib(Self.helloStream, maximumSize: 100) == Array("hello hello hello hello".utf8))
  }

  @Test func decodesStoredBlock() throws {
    // BFINAL=1, BTYPE=00, LEN=3, NLEN=~3, "abc".
    let raw: [UInt8] = [0x01, 0x03, 0x00, 0xFC, 0xFF, 0x61, 0x62, 0x63, 0xEE]
    let (output, consumed) = try Inflate.raw(raw, maximumSize: 10)
    #expect(output == Array("abc".utf8))
    #expect(consumed == 8)
  }

  @Test func outputBeyondMaximumThrows() {
    #expect(throws: ImageError.self) { try Inflate.zlib(Self.helloStream, maximumSize: 10) }
  }

  @Test func malformedStreamsNameTheProblem() {
    func message(_ bytes: [UInt8]) -> String {
      do {
        _ = try Inflate.raw(bytes, maximumSize: 1000)
        return "decoded"
      } catch { return "\(error)" }
    }
    #expect(message([0x07]).contains("block type 3 is reserved"))
    #expect(message([0x01, 0x03, 0x00, 0x00, 0x00]).contains("does not match its complement"))
    // Fixed block whose first symbol is a match (length 3, distance 1) with nothing written yet.
    #expect(message([0x03, 0x02, 0x00]).contains("reaches 1 bytes back"))
    // Dynamic block: HLIT 257, HDIST 1, HCLEN 4, then four 1-bit code-length codes (over-subscribed).
    #expect(message([0x05, 0x00, 0x92, 0x04]).contains("code length code lengths over-subscribe"))
    #expect(message([]).contains("ends early"))
    // 19 code-length code lengths (57 bits, more than one refill of the bit buffer), all zero.
    #expect(message([0x05, 0xE0, 0x01] + [UInt8](repeating: 0, count: 12)).contains("not a code of the code-length code"))
  }

  @Test func everyTruncationOfAStreamThrows() {
    for length in 0..<Self.helloStream.count {
      #expect(throws: ImageError.self) { try Inflate.zlib(Array(Self.helloStream[..<length]), maximumSize: 100) }
    }
  }
}
