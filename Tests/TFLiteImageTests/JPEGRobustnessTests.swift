// Hostile and broken JPEG input: every truncation, random byte flips, bad Huffman tables, huge
// declared sizes, unsupported codings and out-of-order progressive scans must give a thrown
// `ImageError`, never a crash, a hang or a giant allocation.
import Testing

@testable import TFLiteImage

/// The offset after the segment whose marker is at `position` (for SOS: after its
/// entropy-coded data, at the next marker that is not RSTn).
private func segmentEnd(at position: Int, in bytes: [UInt8]) -> Int? {
  guard position + 4 <= bytes.count else { return nil }
  var next = position + 2 + (Int(bytes[position + 2]) << 8 | Int(bytes[position + 3]))
  guard bytes[position + 1] == 0xDA else { return next }
  while next + 1 < bytes.count,
    !(bytes[next] == 0xFF && bytes[next + 1] != 0 && !(0xD0...0xD7).contains(bytes[next + 1]))
  {
    next += 1
  }
  return next
}

/// The offset of the `occurrence`-th segment with `marker` in a JPEG file.
private func segmentOffset(of marker: UInt8, in bytes: [UInt8], occurrence: Int = 0) -> Int? {
  var position = 2
  var seen = 0
  while position + 4 <= bytes.count, bytes[position] == 0xFF, bytes[position + 1] != 0xD9 {
    if bytes[position + 1] == marker {
      if seen == occurrence { return position }
      seen += 1
    }
    guard let next = segmentEnd(at: position, in: bytes) else { return nil }
    position = next
  }
  return nil
}

private func decodeError(_ bytes: [UInt8], options: JPEGDecodingOptions = JPEGDecodingOptions()) -> ImageError? {
  do {
    _ = try JPEGDecoder.decode(bytes, options: options)
    return nil
  } catch {
    return error
  }
}

@Suite struct JPEGRobustnessTests {
  static let fuzzedFiles = [
    "progressive_420_33x17_q95", "sampling_420_restart3", "baseline_422_17x33_q75", "gray_progressive_33x17_q100",
  ]

  @Test(arguments: fuzzedFiles)
  func everyTruncationThrows(name: String) throws {
    let bytes = try JPEGCorpus.jpeg(name)
    for length in 0..<bytes.count {
      #expect(decodeError(Array(bytes[0..<length])) != nil, "\(name) cut to \(length) bytes decoded")
    }
  }

  @Test(arguments: fuzzedFiles)
  func randomByteFlipsNeverCrash(name: String) throws {
    let bytes = try JPEGCorpus.jpeg(name)
    var generator = SeededGenerator(seed: 11)
    var thrown = 0
    for _ in 0..<400 {
      var mutated = bytes
      for _ in 0..<Int.random(in: 1...4, using: &generator) {
        mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
      }
      do {
        let image = try JPEGDecoder.decode(mutated)
        #expect(image.pixels.count == image.width * image.height * image.channels)
      } catch {
        thrown += 1
      }
    }
    // Most flips land in entropy-coded data, where they change pixels without breaking the file;
    // some must hit headers and be refused.
    #expect(thrown > 0)
  }

  @Test func overfullHuffmanTableIsRefused() throws {
    var bytes = try JPEGCorpus.jpeg("baseline_444_7x5_q50")
    let dht = try #require(segmentOffset(of: 0xC4, in: bytes))
    // Two more codes of length 1 (taken from the longest length, so the symbol count stays):
    // with them, codes of length 1 alone fill more than the code space.
    let longest = try #require((0..<16).last { bytes[dht + 5 + $0] >= 2 })
    bytes[dht + 5 + longest] -= 2
    bytes[dht + 5] += 2
    let error = try #require(decodeError(bytes))
    #expect("\(error)".contains("Huffman table overflows"), "\(error)")
  }

  @Test func dcTableWithLargeCategoriesIsRefused() throws {
    var bytes = try JPEGCorpus.jpeg("baseline_444_7x5_q50")
    let dht = try #require(segmentOffset(of: 0xC4, in: bytes))
    let counts = (0..<16).map { Int(bytes[dht + 5 + $0]) }
    #expect(bytes[dht + 4] >> 4 == 0, "the first table is a DC table")
    bytes[dht + 5 + 16 + counts.reduce(0, +) - 1] = 16
    let error = try #require(decodeError(bytes))
    #expect("\(error)".contains("magnitude category 16"), "\(error)")
  }

  @Test func hugeDeclaredSizeIsRefusedBeforeAllocating() throws {
    var bytes = try JPEGCorpus.jpeg("baseline_420_33x17_q100_optimized")
    let sof = try #require(segmentOffset(of: 0xC0, in: bytes))
    for index in 5...8 { bytes[sof + index] = 0xFF }
    #expect(decodeError(bytes) == .tooLarge(width: 65535, height: 65535, limit: 100_000_000))
    let small = JPEGDecodingOptions(limits: ImageDecodingLimits(maximumPixelCount: 500))
    #expect(
      decodeError(try JPEGCorpus.jpeg("baseline_420_33x17_q100_optimized"), options: small)
        == .tooLarge(width: 33, height: 17, limit: 500))
  }

  @Test func arithmeticCodingIsUnsupported() throws {
    var bytes = try JPEGCorpus.jpeg("baseline_444_7x5_q50")
    let sof = try #require(segmentOffset(of: 0xC0, in: bytes))
    bytes[sof + 1] = 0xC9
    #expect(decodeError(bytes) == .unsupported(format: "JPEG", message: "arithmetic coding"))
  }

  @Test func twelveBitSamplesAreUnsupported() throws {
    var bytes = try JPEGCorpus.jpeg("baseline_444_7x5_q50")
    let sof = try #require(segmentOffset(of: 0xC0, in: bytes))
    bytes[sof + 4] = 12
    guard case .unsupported(let format, let message) = decodeError(bytes) else {
      Issue.record("12-bit frame was not refused as unsupported")
      return
    }
    #expect(format == "JPEG" && message.contains("12-bit"))
  }

  @Test func progressiveScansOutOfOrderAreRefused() throws {
    let bytes = try JPEGCorpus.jpeg("progressive_444_33x17_q65")
    // Dropping the first scan (the DC scan) leaves AC scans before any DC.
    let first = try #require(segmentOffset(of: 0xDA, in: bytes))
    let firstEnd = try #require(segmentEnd(at: first, in: bytes))
    var error = try #require(decodeError(Array(bytes[0..<first]) + Array(bytes[firstEnd...])))
    #expect("\(error)".contains("out of order"), "\(error)")
    // Repeating a scan refines bits that are already decoded.
    let second = try #require(segmentOffset(of: 0xDA, in: bytes, occurrence: 1))
    let secondEnd = try #require(segmentEnd(at: second, in: bytes))
    let repeated = Array(bytes[0..<secondEnd]) + Array(bytes[second..<secondEnd]) + Array(bytes[secondEnd...])
    error = try #require(decodeError(repeated))
    #expect("\(error)".contains("out of order"), "\(error)")
  }

  @Test func notAJPEGIsMalformed() {
    #expect(decodeError([]) == .malformed(format: "JPEG", message: "no start-of-image marker", offset: 0))
    #expect(decodeError([0xFF, 0xD8, 0xFF, 0xD9]) == .malformed(format: "JPEG", message: "end of image before any frame", offset: nil))
  }
}
