import Testing
@testable import TFLiteImage

@Suite struct ResizeTests {
  /// The 40×30 crop at (50, 40) of the decoded photo that `resize_cases()` in the generator resizes.
  func crop() throws -> Image {
    try PNG.decode(try ImageFixtures.bytes("png/pillow_photo_rgb.png")).cropped(x: 50, y: 40, width: 40, height: 30)
  }

  @Test func bilinearMatchesTensorFlowBitForBit() throws {
    let source = try crop()
    for (width, height) in [(57, 43), (23, 17)] {
      let resized = try source.resizedBilinear(width: width, height: height)
      let expected = try #require(try ImageFixtures.array("resize/bilinear_\(width)x\(height).npy"))
      #expect(expected.shape == [height, width, 3])
      let reference = try expected.values(as: Float.self)
      // Same Float32 operations in the same order: equal bit for bit.
      #expect(resized.samples == reference)
    }
  }

  @Test func antialiasedBilinearMatchesTensorFlowBitForBit() throws {
    let source = try crop()
    for (width, height) in [(57, 43), (23, 17), (9, 7), (40, 11)] {
      let resized = try source.resizedBilinearAntialiased(width: width, height: height)
      let expected = try #require(try ImageFixtures.array("resize/bilinear_antialias_\(width)x\(height).npy"))
      #expect(expected.shape == [height, width, 3])
      let expectedSamples = try expected.values(as: Float.self)
      #expect(resized.samples == expectedSamples, "\(width)×\(height)")
    }
  }

  @Test func antialiasingAveragesWhatPlainBilinearSkips() throws {
    // Shrinking 255, 0, 255, 0 by two. Plain bilinear samples halfway between two pixels: 127.5
    // twice. The antialiased triangle, stretched to radius 2 around input positions 1 and 3, weighs
    // three pixels 0.75, 0.75, 0.25 (and 0.25, 0.75, 0.75), normalized by their sum 1.75.
    let stripes = try Image(width: 4, height: 1, channels: 1, pixels: [255, 0, 255, 0])
    #expect(try stripes.resizedBilinear(width: 2, height: 1).samples == [127.5, 127.5])
    let smoothed = try stripes.resizedBilinearAntialiased(width: 2, height: 1).samples
    let expected: [Float] = [255 / 1.75, 0.75 * 255 / 1.75]
    #expect(zip(smoothed, expected).allSatisfy { abs($0 - $1) < 1e-3 }, "\(smoothed)")
  }

  @Test func nearestMatchesTensorFlowExactly() throws {
    let source = try crop()
    for (width, height) in [(57, 43), (23, 17)] {
      let resized = try source.resizedNearest(width: width, height: height)
      let expected = try #require(try ImageFixtures.array("resize/nearest_\(width)x\(height).npy"))
      #expect(expected.shape == [height, width, 3])
      #expect(resized.pixels == expected.bytes)
    }
  }

  @Test func cropChecksItsRectangle() throws {
    let image = try Image(width: 3, height: 2, channels: 1, pixels: [1, 2, 3, 4, 5, 6])
    #expect(try image.cropped(x: 1, y: 1, width: 2, height: 1).pixels == [5, 6])
    #expect(throws: ImageError.self) { try image.cropped(x: 2, y: 0, width: 2, height: 1) }
    #expect(throws: ImageError.self) { try image.cropped(x: 0, y: 0, width: 0, height: 1) }
  }
}
