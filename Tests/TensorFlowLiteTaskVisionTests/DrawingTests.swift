import Foundation
import TFLiteImage
import Testing
@testable import TensorFlowLiteTaskVision

@Suite struct DrawingTests {
  /// The pixels of `image` as rows of "#" (equal to `ink`) and "." (anything else).
  func picture(_ image: Image, ink: (UInt8, UInt8, UInt8)) -> [String] {
    (0..<image.height).map { y in
      String((0..<image.width).map { x in
        let offset = (y * image.width + x) * 3
        return image.pixels[offset..<(offset + 3)].elementsEqual([ink.0, ink.1, ink.2]) ? "#" : "."
      })
    }
  }

  func blank(width: Int, height: Int) throws -> ImageCanvas {
    try ImageCanvas(Image(width: width, height: height, channels: 1, pixels: [UInt8](repeating: 0, count: width * height)))
  }

  @Test func textIsDrawnPixelForPixel() throws {
    var canvas = try blank(width: 13, height: 9)
    canvas.drawText("H1", x: 1, y: 1, color: (255, 255, 255))
    #expect(
      picture(canvas.image, ink: (255, 255, 255)) == [
        ".............",
        ".#...#...#...",
        ".#...#..##...",
        ".#...#...#...",
        ".#####...#...",
        ".#...#...#...",
        ".#...#...#...",
        ".#...#..###..",
        ".............",
      ])
  }

  @Test func scaledTextDoublesEveryPixel() throws {
    var canvas = try blank(width: 10, height: 14)
    canvas.drawText("-", x: 0, y: 0, scale: 2, color: (9, 9, 9))
    let rows = picture(canvas.image, ink: (9, 9, 9))
    #expect(rows[6] == "##########" && rows[7] == "##########")
    #expect(rows.enumerated().allSatisfy { [6, 7].contains($0.offset) || $0.element == ".........." })
  }

  @Test func glyphFallbacks() {
    #expect(BitmapFont.glyph("a") == BitmapFont.glyph("A"))
    #expect(BitmapFont.glyph("é") == BitmapFont.glyph("E"))
    #expect(BitmapFont.glyph("€") == BitmapFont.glyph("?"))
    #expect(BitmapFont.glyph("0") != BitmapFont.glyph("O"))
  }

  @Test func rectanglesAreClippedToTheImage() throws {
    var canvas = try blank(width: 6, height: 6)
    canvas.strokeRectangle(left: -5, top: -5, right: 3, bottom: 3, color: (1, 2, 3))
    canvas.strokeRectangle(left: 4, top: 4, right: 1000, bottom: 1000, thickness: 2, color: (1, 2, 3))
    #expect(
      picture(canvas.image, ink: (1, 2, 3)) == [
        "...#..",
        "...#..",
        "...#..",
        "####..",
        "....##",
        "....##",
      ])
  }

  @Test func annotationDrawsBoxAndCaption() throws {
    let black = try Image(width: 64, height: 64, channels: 3, pixels: [UInt8](repeating: 0, count: 64 * 64 * 3))
    let detection = Detection(
      boundingBox: CGRect(x: 10, y: 20, width: 30, height: 30),
      categories: [ClassificationCategory(index: 1, score: 0.5, label: "a", displayName: nil)])
    let drawn = try annotated(black, detections: [detection])
    #expect(try annotated(black, detections: [detection]) == drawn)
    let color = annotationPalette[1]
    let boxRows = picture(drawn, ink: color)
    // Two-pixel outline from (10, 20) to (40, 50).
    #expect(boxRows[35].dropFirst(10).prefix(31) == "##" + String(repeating: ".", count: 27) + "##")
    #expect(boxRows[50].dropFirst(10).prefix(31) == String(repeating: "#", count: 31))
    // The caption "A 0.50" sits on a filled band of the box colour just above the box (rows 10-19),
    // white text starting one pixel in: the top row of "A" is .###.
    let white = picture(drawn, ink: (255, 255, 255))
    #expect(white[11].dropFirst(11).prefix(5) == ".###.")
    #expect(boxRows[11].dropFirst(10).prefix(2) == "##")
    // The band is 6 characters × 6 pixels − 1 spacing column + 1 pixel of padding each side = 37 wide.
    #expect(boxRows[19].dropFirst(10).prefix(38) == String(repeating: "#", count: 37) + ".")
  }
}
