import Testing
@testable import TFLiteImage

@Suite struct ImageTests {
  @Test func acceptsMatchingSampleCount() throws {
    let image = try Image(width: 3, height: 2, channels: 3, pixels: Array(repeating: 7, count: 18))
    #expect(image.pixels.count == 18)
  }

  @Test func rejectsWrongSampleCountAndChannels() {
    #expect(throws: ImageError.self) { try Image(width: 3, height: 2, channels: 3, pixels: [0]) }
    #expect(throws: ImageError.self) { try Image(width: 1, height: 1, channels: 5, pixels: [0, 0, 0, 0, 0]) }
    #expect(throws: ImageError.self) { try Image(width: Int.max, height: 2, channels: 1, pixels: []) }
  }

  @Test func limitsRefuseLargeImages() {
    let limits = ImageDecodingLimits(maximumPixelCount: 100)
    #expect(throws: ImageError.tooLarge(width: 11, height: 10, limit: 100)) { try limits.check(width: 11, height: 10) }
    #expect(throws: Never.self) { try limits.check(width: 10, height: 10) }
  }
}
