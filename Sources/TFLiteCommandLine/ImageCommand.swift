import Foundation
import TFLiteFormat
import TFLiteImage

/// `tflite image IMAGE --output pixels.npy`: decodes an image and writes its pixels as `.npy`.
enum ImageCommand: Subcommand {
  /// Name, options and help.
  static let specification = CommandSpecification(
    name: "image",
    abstract: "Decode a PNG, JPEG or PPM/PGM image and write its pixels as a uint8 .npy array.",
    positionals: ["IMAGE"],
    options: [
      .option("output", value: "FILE.npy", help: "Where to write the pixels (uint8, shape [H, W, C])."),
      .option("resize", value: "WxH", help: "Resize bilinearly (as tf.image.resize) first, rounding to uint8."),
      .flag("raw-orientation", help: "Keep a JPEG's stored pixel order instead of applying its EXIF orientation."),
    ],
    discussion: """
      C is 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA) as the file stores it; a PNG tRNS chunk
      adds alpha; a JPEG is gray or RGB, turned upright by its EXIF orientation unless --raw-orientation. Compare with Python: numpy.asarray(PIL.Image.open(IMAGE)). With --resize, the
      values are tf.image.resize(pixels, [H, W], "bilinear") rounded half away from zero.
      """)

  /// Runs the command.
  static func run(_ arguments: ParsedArguments, output: inout any TextSink) throws -> Int32 {
    let path = try arguments.singlePositional("IMAGE")
    guard let destination = arguments.value("output") else { throw UsageError("--output FILE.npy is required") }
    guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("cannot read \(path)") }
    var image = try decodeImage([UInt8](data), appliesOrientation: !arguments.flag("raw-orientation"))
    if let size = arguments.value("resize") {
      let parts = size.split(separator: "x").compactMap { Int($0) }
      guard parts.count == 2, parts.allSatisfy({ (1...65535).contains($0) }) else {
        throw UsageError("--resize wants WxH with sizes 1-65535, got '\(size)'")
      }
      let resized = try image.resizedBilinear(width: parts[0], height: parts[1])
      var pixels = [UInt8](repeating: 0, count: resized.samples.count)
      try pixels.withUnsafeMutableBytes { try resized.write(into: $0, as: .uint8(scale: 1, zeroPoint: 0)) }
      image = try Image(width: resized.width, height: resized.height, channels: resized.channels, pixels: pixels)
    }
    try NumPyArray(shape: [image.height, image.width, image.channels], values: image.pixels).write(toFile: destination)
    output.write("\(path): \(image.width)×\(image.height), \(image.channels) channels -> \(destination)\n")
    return ExitCode.success
  }
}
