import Testing
@testable import TFLiteImage

@Suite struct ModelInputTests {
  @Test func grayscaleEqualsPillowConvertL() throws {
    // The generator saved photo.convert("L") of the same photo as pillow_photo_gray_level9.
    let rgb = try PNG.decode(try ImageFixtures.bytes("png/pillow_photo_rgb.png"))
    let gray = try PNG.decode(try ImageFixtures.bytes("png/pillow_photo_gray_level9.png"))
    #expect(try rgb.grayscale() == gray)
  }

  @Test func swapsRedAndBlueKeepingAlpha() throws {
    let image = try Image(width: 1, height: 1, channels: 4, pixels: [1, 2, 3, 4])
    #expect(try image.swappingRedAndBlue().pixels == [3, 2, 1, 4])
    #expect(throws: ImageError.self) { try Image(width: 1, height: 1, channels: 1, pixels: [1]).swappingRedAndBlue() }
  }

  @Test func quantizesAsTFLiteRoundsHalfAwayFromZero() throws {
    let image = try FloatImage(width: 6, height: 1, channels: 1, samples: [0.25, -0.25, 0.75, 1000, -1000, .nan])
    var uint8 = [UInt8](repeating: 0, count: 6)
    try uint8.withUnsafeMutableBytes { try image.write(into: $0, as: .uint8(scale: 0.5, zeroPoint: 3)) }
    // 0.5 → 1, −0.5 → −1, 1.5 → 2 (each + 3); ±2000 clamp; NaN gives the zero point.
    #expect(uint8 == [4, 2, 5, 255, 0, 3])
    var int8 = [Int8](repeating: 0, count: 6)
    try int8.withUnsafeMutableBytes { try image.write(into: $0, as: .int8(scale: 0.5, zeroPoint: -1)) }
    #expect(int8 == [0, -2, 1, 127, -128, -1])
    var floats = [Float](repeating: 0, count: 5)
    #expect(throws: ImageError.self) {
      try floats.withUnsafeMutableBytes { try image.write(into: $0, as: .float32) }
    }
  }

  @Test func normalizesPerChannel() throws {
    let image = try FloatImage(width: 1, height: 2, channels: 2, samples: [10, 20, 30, 40])
    #expect(try image.normalized(mean: [10, 20], std: [2, 4]).samples == [0, 0, 10, 5])
    #expect(try image.normalized(mean: [127.5], std: [127.5]).samples.first == (10 - 127.5) / 127.5)
    #expect(throws: ImageError.self) { try image.normalized(mean: [1, 2, 3], std: [1]) }
  }

  @Test func fitsToModelInputs() throws {
    // A 4×2 image with columns 0, 10, 20, 30.
    let image = try Image(width: 4, height: 2, channels: 1, pixels: [0, 10, 20, 30, 0, 10, 20, 30])
    let letterboxed = try image.fitted(width: 4, height: 4, fit: .letterbox(fill: -1))
    #expect(letterboxed.samples == [-1, -1, -1, -1, 0, 10, 20, 30, 0, 10, 20, 30, -1, -1, -1, -1])
    // Centre crop keeps the middle 2×2 (10, 20), then bilinear 2×2 → 2×2 is the identity.
    #expect(try image.fitted(width: 2, height: 2, fit: .centerCrop).samples == [10, 20, 10, 20])
    #expect(try image.fitted(width: 2, height: 2, fit: .stretch) == image.resizedBilinear(width: 2, height: 2))
  }
}
