// BMP reading against the pixels Pillow reads from the same files (bmp_cases() in
// Scripts/make_image_fixtures.py), writing against Pillow's own files byte for byte, and hostile input.
import Testing
@testable import TFLiteImage

@Suite struct BMPTests {
  static let names = [
    "pillow_photo", "pillow_photo_gray", "pillow_photo_palette", "pillow_1bit", "pillow_rgba", "palette_4bit", "rgb555",
    "rgb565_bitfields", "bgra_v5", "top_down_24bit", "os2_core_8bit",
  ]

  @Test(arguments: names) func decodesLikePillow(name: String) throws {
    let image = try decodeImage(try ImageFixtures.bytes("bmp/\(name).bmp"))
    let expected = try #require(try ImageFixtures.array("bmp/\(name).npy"))
    #expect(expected.shape == [image.height, image.width, image.channels])
    #expect(image.pixels == expected.bytes)
  }

  @Test func encodesRGBAndGrayAsPillowDoes() throws {
    let photo = try BMP.decode(try ImageFixtures.bytes("bmp/pillow_photo.bmp"))
    let photoBMP = try ImageFixtures.bytes("bmp/pillow_photo.bmp")
    #expect(BMP.encode(photo) == photoBMP)
    let gray = try PNG.decode(try ImageFixtures.bytes("png/pillow_photo_gray_level9.png"))
    let grayBMP = try ImageFixtures.bytes("bmp/pillow_photo_gray.bmp")
    #expect(BMP.encode(gray) == grayBMP)
  }

  @Test func alphaRoundTrips() throws {
    var generator = SeededGenerator(seed: 5)
    for channels in [2, 4] {
      let pixels = (0..<(7 * 3 * channels)).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let image = try Image(width: 7, height: 3, channels: channels, pixels: pixels)
      let decoded = try BMP.decode(BMP.encode(image))
      #expect(decoded.channels == 4)
      for pixel in 0..<21 {
        let gray = channels == 2 ? [pixels[2 * pixel], pixels[2 * pixel], pixels[2 * pixel], pixels[2 * pixel + 1]]
          : Array(pixels[(4 * pixel)..<(4 * pixel + 4)])
        #expect(Array(decoded.pixels[(4 * pixel)..<(4 * pixel + 4)]) == gray)
      }
    }
  }

  @Test func everyTruncationAndByteFlipThrowsOrDecodes() throws {
    let file = try ImageFixtures.bytes("bmp/palette_4bit.bmp")
    for length in 0..<file.count {
      #expect(throws: ImageError.self) { try BMP.decode(Array(file[..<length])) }
    }
    var generator = SeededGenerator(seed: 9)
    for name in Self.names where name != "pillow_photo" && name != "pillow_photo_gray" && name != "pillow_photo_palette" {
      let original = try ImageFixtures.bytes("bmp/\(name).bmp")
      for _ in 0..<200 {
        var bytes = original
        bytes[Int.random(in: 0..<min(bytes.count, 80), using: &generator)] = UInt8.random(in: 0...255, using: &generator)
        _ = try? BMP.decode(bytes, limits: ImageDecodingLimits(maximumPixelCount: 1 << 20))
      }
    }
  }

  @Test func hostileHeadersGiveNamedErrors() throws {
    var file = try ImageFixtures.bytes("bmp/top_down_24bit.bmp")
    func patched(_ offset: Int, _ value: UInt32) -> [UInt8] {
      var bytes = file
      for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
      return bytes
    }
    #expect(throws: ImageError.tooLarge(width: 100_000, height: 5, limit: 1000)) {
      try BMP.decode(patched(18, 100_000), limits: ImageDecodingLimits(maximumPixelCount: 1000))
    }
    #expect(throws: ImageError.self) { try BMP.decode(patched(18, 0x7FFF_FFFF)) }  // rows far past the end
    #expect(throws: ImageError.unsupported(format: "BMP", message: "RLE-compressed bitmaps")) {
      try BMP.decode(patched(30, 1))
    }
    #expect(throws: ImageError.self) { try BMP.decode(patched(14, 77)) }  // unknown header size
    file[28] = 7  // 7 bits per pixel
    #expect(throws: ImageError.self) { try BMP.decode(file) }
  }
}
