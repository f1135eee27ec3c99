import Foundation
import TFLiteFormat
import Testing
@testable import TFLiteImage

@Suite struct PNGDecoderTests {
  @Test func corpusMatchesPillowBitForBit() throws {
    let names = ImageFixtures.pngNames
    #expect(names.count >= 40)
    var sixteenBitFiles = 0
    for name in names {
      let image = try PNG.decode(try ImageFixtures.bytes("png/\(name).png"))
      let expected = try #require(try ImageFixtures.array("png/\(name).npy"))
      #expect(expected.shape == [image.height, image.width, image.channels], "\(name)")
      #expect(image.pixels == expected.bytes, "\(name)")
      if let wide = try ImageFixtures.array("png/\(name).16.npy") {
        sixteenBitFiles += 1
        let decoded = try PNG.decodeSixteenBit(try ImageFixtures.bytes("png/\(name).png"))
        let expectedSamples = try wide.values(as: UInt16.self)
        #expect(decoded.samples == expectedSamples, "\(name)")
      }
    }
    #expect(sixteenBitFiles >= 8)
  }

  @Test func lowDepthsScaleToTheFullSixteenBitRange() throws {
    // A 1-bit gray file: samples 0 and 1 become 0 and 65535.
    let image = try PNG.decodeSixteenBit(try ImageFixtures.bytes("png/ct0_d1.png"))
    #expect(Set(image.samples).isSubset(of: [0, 65535]))
    #expect(Set(image.samples).count == 2)
  }

  @Test func wrongChunkCRCIsNamed() throws {
    var bytes = try ImageFixtures.bytes("png/ct2_d8.png")
    bytes[20] ^= 0x01  // inside IHDR's data
    #expect {
      try PNG.decode(bytes)
    } throws: { error in
      "\(error)".contains("IHDR has CRC")
    }
  }

  @Test func wrongAdlerIsNamed() throws {
    // The last IDAT chunk ends with the Adler-32 trailer; change it and refresh the chunk CRCs.
    var bytes = try ImageFixtures.bytes("png/ct2_d8.png")
    let iend = bytes.count - 12
    bytes[iend - 5] ^= 0x40
    bytes = refreshingChunkCRCs(bytes)
    #expect {
      try PNG.decode(bytes)
    } throws: { error in
      "\(error)".contains("Adler-32 mismatch")
    }
  }

  @Test func pixelLimitIsCheckedBeforeDecoding() throws {
    let bytes = try ImageFixtures.bytes("png/pillow_photo_rgb.png")  // 160×107
    #expect(throws: ImageError.tooLarge(width: 160, height: 107, limit: 17_000)) {
      try PNG.decode(bytes, limits: ImageDecodingLimits(maximumPixelCount: 17_000))
    }
    #expect(throws: Never.self) { try PNG.decode(bytes, limits: ImageDecodingLimits(maximumPixelCount: 17_120)) }
    // A header claiming 2^31 − 1 × 2^31 − 1 pixels is refused without allocating.
    var huge = bytes
    for index in 16..<24 { huge[index] = index % 4 == 0 ? 0x7F : 0xFF }
    huge = refreshingChunkCRCs(huge)
    #expect(throws: ImageError.tooLarge(width: 0x7FFF_FFFF, height: 0x7FFF_FFFF, limit: 100_000_000)) {
      try PNG.decode(huge)
    }
  }

  @Test func hugeHeaderOverTinyDataThrowsQuickly() throws {
    // 10000×10000 RGBA at 16 bits (800 MB of pixels, within the default limit) over a small IDAT.
    var bytes = try ImageFixtures.bytes("png/ct6_d16.png")
    for index in 16..<24 { bytes[index] = [0, 0, 0x27, 0x10][index % 4] }
    bytes = refreshingChunkCRCs(bytes)
    #expect {
      try PNG.decode(bytes)
    } throws: { error in
      "\(error)".contains("the image data ends early")
    }
  }

  @Test func everyTruncationThrows() throws {
    for name in ["ct3_d4_trns_adam7", "ct6_d16", "pillow_rgba_level1"] {
      let bytes = try ImageFixtures.bytes("png/\(name).png")
      for length in 0..<bytes.count {
        #expect(throws: ImageError.self, "\(name) cut at \(length)") { try PNG.decode(Array(bytes[0..<length])) }
      }
    }
  }

  @Test func randomByteFlipsThrowOrDecode() throws {
    var generator = SeededGenerator(seed: 11)
    for name in ["ct0_d4_trns_adam7", "ct2_d16_adam7", "ct3_d8_trns", "pillow_photo_palette", "ct6_d8"] {
      let original = try ImageFixtures.bytes("png/\(name).png")
      for round in 0..<300 {
        var bytes = original
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
          bytes[Int.random(in: 8..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
        }
        // Half the cases get valid CRCs again, so the flips reach the inflater and the filters.
        if round % 2 == 0 { bytes = refreshingChunkCRCs(bytes) }
        do {
          let image = try PNG.decode(bytes, limits: ImageDecodingLimits(maximumPixelCount: 1 << 20))
          #expect(image.pixels.count == image.width * image.height * image.channels)
        } catch {
          #expect(!"\(error)".isEmpty)
        }
      }
    }
  }

  @Test func unknownCriticalChunkIsRefused() throws {
    var bytes = try ImageFixtures.bytes("png/ct2_d8.png")
    // Rename the ancillary tEXt chunk after IHDR to the critical "TEXt".
    bytes[33 + 4] = UInt8(ascii: "T")
    bytes = refreshingChunkCRCs(bytes)
    #expect(throws: ImageError.unsupported(format: "PNG", message: "critical chunk TEXt is not part of PNG 1.2")) {
      try PNG.decode(bytes)
    }
  }
}
