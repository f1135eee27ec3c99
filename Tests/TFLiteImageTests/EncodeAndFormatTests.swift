import Testing
@testable import TFLiteImage

@Suite struct EncodeAndFormatTests {
  @Test func pngEncodeRoundTripsEveryChannelCount() throws {
    let photo = try PNG.decode(try ImageFixtures.bytes("png/pillow_photo_rgb.png"))
    let rgba = try PNG.decode(try ImageFixtures.bytes("png/pillow_rgba_level1.png"))
    let gray = try PNG.decode(try ImageFixtures.bytes("png/pillow_photo_gray_level9.png"))
    let grayAlpha = try PNG.decode(try ImageFixtures.bytes("png/ct4_d8_adam7.png"))
    for image in [photo, rgba, gray, grayAlpha] {
      let file = PNG.encode(image)
      #expect(try PNG.decode(file) == image)
      #expect(ImageFormat(sniffing: file) == .png)
    }
  }

  @Test func ppmAndPgmMatchPillow() throws {
    for name in ["pillow_photo.ppm", "pillow_photo_gray.pgm"] {
      let image = try decodeImage(try ImageFixtures.bytes("ppm/\(name)"))
      let expected = try #require(try ImageFixtures.array("ppm/\(name.split(separator: ".")[0]).npy"))
      #expect(expected.shape == [image.height, image.width, image.channels])
      #expect(image.pixels == expected.bytes)
      #expect(try PPM.decode(PPM.encode(image)) == image)
    }
  }

  @Test func ppmScalesOtherMaximumsAndReadsComments() throws {
    // 16-bit samples of maximum 1000: 1000 → 255, 500 → round(127.5) = 128, 0 → 0.
    let bytes = Array("P5 # gray\n3 1\n1000\n".utf8) + [0x03, 0xE8, 0x01, 0xF4, 0x00, 0x00]
    #expect(try PPM.decode(bytes).pixels == [255, 128, 0])
    #expect(throws: ImageError.self) { try PPM.decode(Array(bytes.dropLast())) }
    #expect(throws: ImageError.tooLarge(width: 3, height: 1, limit: 2)) {
      try PPM.decode(bytes, limits: ImageDecodingLimits(maximumPixelCount: 2))
    }
  }

  @Test func decodeImageReadsJPEGUprightOrAsStored() throws {
    let bytes = try ImageFixtures.bytes("jpeg/exif_orientation_6.jpg")
    let upright = try decodeImage(bytes)
    let expected = try #require(try ImageFixtures.array("jpeg/exif_orientation_6.npy"))  // Pillow, exif_transpose
    #expect(expected.shape == [upright.height, upright.width, upright.channels])
    #expect(upright.pixels == expected.bytes)
    let stored = try decodeImage(bytes, appliesOrientation: false)
    #expect(stored.width == upright.height && stored.height == upright.width)  // orientation 6 turns by 90°
  }

  @Test func sniffingDispatchesAndRefusesOtherBytes() {
    #expect(ImageFormat(sniffing: [0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
    #expect(ImageFormat(sniffing: Array("P6".utf8)) == .ppm)
    #expect(throws: ImageError.unknownFormat) { try decodeImage(Array("GIF89a".utf8)) }
    #expect(throws: ImageError.unknownFormat) { try decodeImage([]) }
  }
}
