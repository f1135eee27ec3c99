import Foundation
import TFLiteCommandLine
import TFLiteFormat
import XCTest

/// `tflite image`: the .npy it writes holds the pixels Pillow decodes from the same file.
final class ImageCommandTests: CommandTestCase {
  let images = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("TestModels/images")

  func testWritesThePixelsPillowDecodes() throws {
    for (file, expected) in [
      ("png/ct3_d4_trns_adam7.png", "png/ct3_d4_trns_adam7.npy"), ("ppm/pillow_photo.ppm", "ppm/pillow_photo.npy"),
      ("jpeg/exif_orientation_6.jpg", "jpeg/exif_orientation_6.npy"),
    ] {
      let output = path("pixels.npy")
      let (code, captured) = run("image", images.appendingPathComponent(file).path, "--output", output)
      XCTAssertEqual(code, ExitCode.success, captured.standardError)
      let written = try NumPyArray(contentsOfFile: output)
      let reference = try NumPyArray(contentsOfFile: images.appendingPathComponent(expected).path)
      XCTAssertEqual(written.elementType, .uint8)
      XCTAssertEqual(written.shape, reference.shape)
      XCTAssertEqual(written.bytes, reference.bytes)
    }
  }

  func testRawOrientationKeepsTheStoredPixelOrder() throws {
    // Orientation 6 is a quarter turn: Pillow's upright pixels are [H, W, 3] and the stored ones [W, H, 3].
    let upright = try NumPyArray(contentsOfFile: images.appendingPathComponent("jpeg/exif_orientation_6.npy").path)
    let output = path("raw.npy")
    let (code, captured) = run(
      "image", images.appendingPathComponent("jpeg/exif_orientation_6.jpg").path, "--output", output, "--raw-orientation")
    XCTAssertEqual(code, ExitCode.success, captured.standardError)
    XCTAssertEqual(try NumPyArray(contentsOfFile: output).shape, [upright.shape[1], upright.shape[0], upright.shape[2]])
  }

  func testResizeRoundsTensorFlowsBilinearValues() throws {
    // The generator's bilinear_23x17.npy is tf.image.resize of the 40×30 crop at (50, 40) of this photo.
    let crop = path("crop.ppm")
    let photo = try NumPyArray(contentsOfFile: images.appendingPathComponent("png/pillow_photo_rgb.npy").path).bytes
    var cropped: [UInt8] = []
    for row in 40..<70 {
      let start: Int = (row * 160 + 50) * 3
      cropped += photo[start..<(start + 120)]
    }
    try Data(Array("P6\n40 30\n255\n".utf8) + cropped).write(to: URL(fileURLWithPath: crop))
    let output = path("resized.npy")
    let (code, captured) = run("image", crop, "--output", output, "--resize", "23x17")
    XCTAssertEqual(code, ExitCode.success, captured.standardError)
    let written = try NumPyArray(contentsOfFile: output)
    XCTAssertEqual(written.shape, [17, 23, 3])
    let reference = try NumPyArray(contentsOfFile: images.appendingPathComponent("resize/bilinear_23x17.npy").path)
      .values(as: Float.self)
    XCTAssertEqual(written.bytes, reference.map { UInt8($0.rounded(.toNearestOrAwayFromZero)) })
    XCTAssertEqual(run("image", crop, "--output", output, "--resize", "23").code, ExitCode.usage)
  }

  func testReportsBadImagesAndMissingOutput() throws {
    let bogus = path("bogus.png")
    try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]).write(to: URL(fileURLWithPath: bogus))
    let (code, captured) = run("image", bogus, "--output", path("x.npy"))
    XCTAssertEqual(code, ExitCode.failure)
    XCTAssertTrue(captured.standardError.contains("malformed PNG"), captured.standardError)
    XCTAssertEqual(run("image", bogus).code, ExitCode.usage)
  }
}
