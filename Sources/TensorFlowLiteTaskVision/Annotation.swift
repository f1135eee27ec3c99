// Drawing results onto an image: rectangle outlines and text in the built-in ``BitmapFont``, clipped
// to the image (boxes may extend past it), and ``annotated(_:detections:)``, which draws each
// detection's box with "label score" above it (inside the box when there is no room above) in a
// colour chosen by class index. Drawing works on RGB images; others are converted first (gray
// repeated, alpha dropped).

import Foundation
import TFLiteImage

/// An RGB image being drawn on.
public struct ImageCanvas: Sendable {
  /// The pixels (3 channels).
  public private(set) var image: Image

  /// A canvas over `image` made RGB.
  public init(_ image: Image) throws(TaskVisionError) {
    do {
      self.image = try image.matchingChannels(3)
    } catch {
      throw TaskVisionError("cannot draw on the image: \(error)")
    }
  }

  /// Sets pixel (`x`, `y`) to `color` when it lies inside the image.
  public mutating func setPixel(x: Int, y: Int, color: (UInt8, UInt8, UInt8)) {
    guard (0..<image.width).contains(x), (0..<image.height).contains(y) else { return }
    let offset = (y * image.width + x) * 3
    image.pixels[offset] = color.0
    image.pixels[offset + 1] = color.1
    image.pixels[offset + 2] = color.2
  }

  /// Fills the rectangle of columns `left..<right` and rows `top..<bottom` (clipped).
  public mutating func fill(left: Int, top: Int, right: Int, bottom: Int, color: (UInt8, UInt8, UInt8)) {
    for y in max(top, 0)..<max(min(bottom, image.height), max(top, 0)) {
      for x in max(left, 0)..<max(min(right, image.width), max(left, 0)) { setPixel(x: x, y: y, color: color) }
    }
  }

  /// Draws the outline of the rectangle with corners (`left`, `top`) and (`right`, `bottom`)
  /// (inclusive), `thickness` pixels wide, growing inwards.
  public mutating func strokeRectangle(
    left: Int, top: Int, right: Int, bottom: Int, thickness: Int = 1, color: (UInt8, UInt8, UInt8)
  ) {
    guard right >= left, bottom >= top, thickness > 0 else { return }
    fill(left: left, top: top, right: right + 1, bottom: top + thickness, color: color)
    fill(left: left, top: bottom + 1 - thickness, right: right + 1, bottom: bottom + 1, color: color)
    fill(left: left, top: top, right: left + thickness, bottom: bottom + 1, color: color)
    fill(left: right + 1 - thickness, top: top, right: right + 1, bottom: bottom + 1, color: color)
  }

  /// Draws `text` with its top-left corner at (`x`, `y`), each font pixel a `scale × scale` square.
  public mutating func drawText(_ text: String, x: Int, y: Int, scale: Int = 1, color: (UInt8, UInt8, UInt8)) {
    for (position, character) in text.enumerated() {
      let originX = x + position * BitmapFont.advance * scale
      for row in 0..<BitmapFont.glyphHeight {
        for column in 0..<BitmapFont.glyphWidth where BitmapFont.isSet(character, column: column, row: row) {
          fill(
            left: originX + column * scale, top: y + row * scale, right: originX + (column + 1) * scale,
            bottom: y + (row + 1) * scale, color: color)
        }
      }
    }
  }

  /// The width in pixels of `text` drawn at `scale` (without the trailing spacing column).
  public static func textWidth(_ text: String, scale: Int = 1) -> Int {
    text.isEmpty ? 0 : (text.count * BitmapFont.advance - 1) * scale
  }
}

/// Colours for boxes, by class index modulo their count.
public let annotationPalette: [(UInt8, UInt8, UInt8)] = [
  (230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240), (240, 50, 230), (128, 128, 0),
]

/// `image` with each detection's box and "label score" drawn on it.
public func annotated(_ image: Image, detections: [Detection]) throws(TaskVisionError) -> Image {
  var canvas = try ImageCanvas(image)
  let scale = max(1, min(image.width, image.height) / 320)
  for detection in detections {
    let box = detection.boundingBox.standardized
    guard box.minX.isFinite, box.minY.isFinite, box.maxX.isFinite, box.maxY.isFinite else { continue }
    let clamp = { (value: CGFloat) in Int(max(-1e6, min(1e6, value.rounded(.down)))) }
    let (left, top, right, bottom) = (clamp(box.minX), clamp(box.minY), clamp(box.maxX), clamp(box.maxY))
    let category = detection.categories.first
    let color = annotationPalette[(category?.index ?? 0) % annotationPalette.count]
    canvas.strokeRectangle(left: left, top: top, right: right, bottom: bottom, thickness: scale * 2, color: color)
    guard let category else { continue }
    let caption = "\(category.displayName ?? category.label ?? "class \(category.index)") \(String(format: "%.2f", category.score))"
    let captionHeight = (BitmapFont.lineHeight + 2) * scale
    let captionTop = max(top, 0) >= captionHeight ? max(top, 0) - captionHeight : max(top, 0)
    let captionLeft = max(left, 0)
    canvas.fill(
      left: captionLeft, top: captionTop, right: captionLeft + ImageCanvas.textWidth(caption, scale: scale) + 2 * scale,
      bottom: captionTop + captionHeight, color: color)
    canvas.drawText(caption, x: captionLeft + scale, y: captionTop + scale, scale: scale, color: (255, 255, 255))
  }
  return canvas.image
}
