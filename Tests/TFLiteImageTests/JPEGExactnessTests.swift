// Decoded JPEG pixels against Pillow's (libjpeg-turbo) for every file of TestModels/images/jpeg,
// written by Scripts/make_jpeg_fixtures.py: each NAME.jpg has NAME.npy with Pillow's pixels.
import Foundation
import TFLiteFormat
import Testing

@testable import TFLiteImage

/// The corpus directory and its files.
enum JPEGCorpus {
  static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("TestModels/images/jpeg")

  /// The corpus file names (without extension), from manifest.txt.
  static func names() throws -> [String] {
    let manifest = try String(contentsOf: directory.appendingPathComponent("manifest.txt"), encoding: .utf8)
    return manifest.split(separator: "\n").compactMap { line in
      line.split(separator: " ").first.map { String($0.dropLast(4)) }
    }
  }

  static func jpeg(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: directory.appendingPathComponent(name + ".jpg")))
  }

  /// Pillow's pixels: shape [H, W, C] and the samples.
  static func expected(_ name: String) throws -> (shape: [Int], pixels: [UInt8]) {
    let array = try NumPyArray(contentsOfFile: directory.appendingPathComponent(name + ".npy").path)
    return (array.shape, array.bytes)
  }
}

@Suite struct JPEGExactnessTests {
  @Test func everyCorpusImageEqualsPillowPixelForPixel() throws {
    let names = try JPEGCorpus.names()
    #expect(names.count >= 80)
    var pixelsCompared = [String: Int]()
    var pixelsDiffering = [String: Int]()
    for name in names {
      let corpus = name.hasPrefix("photo_") ? "photos" : "generated"
      let image = try JPEGDecoder.decode(try JPEGCorpus.jpeg(name))
      let (shape, expected) = try JPEGCorpus.expected(name)
      #expect([image.height, image.width, image.channels] == shape, "\(name): shape")
      guard [image.height, image.width, image.channels] == shape else { continue }
      var differing = 0
      var largest = 0
      for pixel in 0..<(image.width * image.height) {
        var differs = false
        for channel in 0..<image.channels {
          let index = pixel * image.channels + channel
          let difference = abs(Int(image.pixels[index]) - Int(expected[index]))
          largest = max(largest, difference)
          differs = differs || difference != 0
        }
        if differs { differing += 1 }
      }
      pixelsCompared[corpus, default: 0] += image.width * image.height
      pixelsDiffering[corpus, default: 0] += differing
      #expect(differing == 0, "\(name): \(differing) pixels differ from Pillow's, by up to \(largest)")
    }
    for corpus in pixelsCompared.keys.sorted() {
      print(
        "JPEG exactness (\(corpus)): \(names.filter { ($0.hasPrefix("photo_") ? "photos" : "generated") == corpus }.count) "
          + "images, \(pixelsCompared[corpus]!) pixels compared, \(pixelsDiffering[corpus]!) differing")
    }
  }

  @Test func rawOrientationKeepsTheStoredPixels() throws {
    // The eight EXIF files differ only in the orientation value, so the stored pixels of every
    // one are those Pillow shows for orientation 1.
    let upright = try JPEGCorpus.expected("exif_orientation_1")
    for orientation in 1...8 {
      let image = try JPEGDecoder.decode(
        try JPEGCorpus.jpeg("exif_orientation_\(orientation)"), options: JPEGDecodingOptions(appliesOrientation: false))
      #expect([image.height, image.width, image.channels] == upright.shape)
      let same = image.pixels == upright.pixels
      #expect(same, "orientation \(orientation) kept raw")
    }
  }

  @Test func orientationsFiveToEightSwapWidthAndHeight() throws {
    for orientation in 1...8 {
      let image = try Image(jpeg: try JPEGCorpus.jpeg("exif_orientation_\(orientation)"))
      #expect((image.width, image.height) == (orientation >= 5 ? (6, 13) : (13, 6)))
    }
  }

  @Test func recognisesJPEGSignature() throws {
    let photo = try JPEGCorpus.jpeg("photo_china")
    #expect(JPEGDecoder.isJPEG(photo))
    #expect(!JPEGDecoder.isJPEG([0x89, 0x50, 0x4E, 0x47]))
  }
}
