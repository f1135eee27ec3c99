// What detectors and classifiers share: loading a model (its bytes, its TFLite Support metadata and
// associated files, an interpreter), preparing an image as its input says, and reading outputs as
// real values.
// Input preparation, as the Task Library does it: the image is made RGB (gray repeated, alpha
// dropped) or gray (Pillow's luma) to match the input's channel count, brought to the input size
// (stretched by default) with TensorFlow's half-pixel bilinear resize, then
// - uint8 input: the resized values rounded half away from zero (the raw pixels the model was
//   trained on; normalization metadata is not applied, as in the Task Library);
// - int8 input: normalized, then quantized with the tensor's scale and zero point;
// - float32 input: normalized by (x − mean) / std from the options or the metadata, which are
//   required (a float model without them is refused, as the Task Library refuses it).
// Box coordinates relative to the model input are mapped back through the same fit.

import Foundation
import TFLiteFormat
import TFLiteImage
import TensorFlowLite

/// A loaded vision model with its metadata and input geometry.
final class VisionModel {
  /// The interpreter, allocated.
  let interpreter: Interpreter
  /// The model's TFLite Support metadata, if any.
  let metadata: ModelMetadata?
  /// The files appended to the model.
  let files: ModelAssociatedFiles
  /// The input's element type.
  let inputType: TensorFlowLite.Tensor.DataType
  /// The input's quantization (int8 inputs).
  let inputQuantization: TensorFlowLite.QuantizationParameters?
  /// The input's [1, height, width, channels] sizes.
  let inputHeight: Int, inputWidth: Int, inputChannels: Int
  /// The input's name in the graph.
  let inputName: String
  /// Normalization for float and int8 inputs.
  let normalization: NormalizationOptions?
  /// How images are fitted to the input.
  let fit: ImageFit

  /// Loads the model file at `path`.
  init(path: String, threads: Int, inputOptions: ModelInputOptions) throws(TaskVisionError) {
    guard let data = FileManager.default.contents(atPath: path) else { throw TaskVisionError("cannot read the model \(path)") }
    let bytes = [UInt8](data)
    do {
      metadata = try TFLiteModel(bytes: bytes).modelMetadata()
    } catch {
      throw TaskVisionError("\(path) is not a valid model or its metadata is broken: \(error)")
    }
    files = try ModelAssociatedFiles(modelBytes: bytes)
    guard (1...256).contains(threads) else { throw TaskVisionError("numThreads \(threads) is not 1-256") }
    var options = Interpreter.Options()
    options.threadCount = threads
    let interpreter: Interpreter
    let input: TensorFlowLite.Tensor
    do {
      interpreter = try Interpreter(modelData: data, options: options)
      try interpreter.allocateTensors()
      input = try interpreter.input(at: 0)
    } catch {
      throw TaskVisionError("cannot run \(path): \(error)")
    }
    self.interpreter = interpreter
    let shape = input.shape.dimensions
    guard interpreter.inputTensorCount == 1, shape.count == 4, shape[0] == 1, [1, 3].contains(shape[3]) else {
      throw TaskVisionError("\(path) is not an image model: it needs one [1, height, width, 1 or 3] input, it has \(interpreter.inputTensorCount) inputs, the first of shape \(shape)")
    }
    guard [.uInt8, .int8, .float32].contains(input.dataType) else {
      throw TaskVisionError("\(path): image input of type \(input.dataType.schemaName) (uint8, int8 or float32 are read)")
    }
    inputType = input.dataType
    inputQuantization = input.quantizationParameters
    (inputHeight, inputWidth, inputChannels) = (shape[1], shape[2], shape[3])
    inputName = input.name
    fit = inputOptions.imageFit
    let inputMetadata = metadata?.subgraphs.first?.inputTensors.first
    normalization = inputOptions.normalization ?? inputMetadata?.normalization
    if let normalization {
      guard [1, inputChannels].contains(normalization.mean.count), [1, inputChannels].contains(normalization.std.count),
        !normalization.std.contains(0), (normalization.mean + normalization.std).allSatisfy(\.isFinite)
      else {
        throw TaskVisionError(
          "normalization mean \(normalization.mean) / std \(normalization.std) does not fit a \(inputChannels)-channel input (1 or \(inputChannels) finite values, std ≠ 0)")
      }
    } else if inputType == .float32 {
      throw TaskVisionError("\(path) takes float input but neither its metadata nor the options give NormalizationOptions (mean and std)")
    }
    if inputType == .int8, inputQuantization == nil {
      throw TaskVisionError("\(path): the int8 input has no quantization parameters")
    }
  }

  /// The metadata of the main subgraph's outputs (empty without metadata).
  var outputMetadata: [TensorMetadata] { metadata?.subgraphs.first?.outputTensors ?? [] }

  /// Writes `image` into the input tensor and runs the model.
  func run(_ image: Image) throws(TaskVisionError) {
    do {
      let fitted = try matchingChannels(image).fitted(width: inputWidth, height: inputHeight, fit: fit)
      switch inputType {
      case .uInt8:
        try interpreter.withUnsafeMutableInputBuffer(at: 0, as: UInt8.self) { buffer in
          try fitted.write(into: UnsafeMutableRawBufferPointer(buffer), as: .uint8(scale: 1, zeroPoint: 0))
        }
      case .int8:
        let quantization = inputQuantization!
        try interpreter.withUnsafeMutableInputBuffer(at: 0, as: Int8.self) { buffer in
          try normalized(fitted).write(
            into: UnsafeMutableRawBufferPointer(buffer), as: .int8(scale: quantization.scale, zeroPoint: quantization.zeroPoint))
        }
      default:
        try interpreter.withUnsafeMutableInputBuffer(at: 0, as: Float.self) { buffer in
          try normalized(fitted).write(into: UnsafeMutableRawBufferPointer(buffer), as: .float32)
        }
      }
      try interpreter.invoke()
    } catch {
      throw TaskVisionError("running the model failed: \(error)\(interpreter.lastErrorMessage.map { " (\($0))" } ?? "")")
    }
  }

  /// The input normalized, when normalization is known.
  private func normalized(_ image: FloatImage) throws(ImageError) -> FloatImage {
    guard let normalization else { return image }
    return try image.normalized(mean: normalization.mean, std: normalization.std)
  }

  /// `image` with the input's channel count: RGB (gray repeated, alpha dropped) or gray.
  private func matchingChannels(_ image: Image) throws(ImageError) -> Image {
    if inputChannels == 1 { return image.channels == 1 ? image : try image.grayscale() }
    if image.channels == 3 { return image }
    let colorChannels = image.channels >= 3 ? 3 : 1
    var rgb = [UInt8]()
    rgb.reserveCapacity(image.width * image.height * 3)
    for pixel in stride(from: 0, to: image.pixels.count, by: image.channels) {
      for channel in 0..<3 { rgb.append(image.pixels[pixel + (colorChannels == 3 ? channel : 0)]) }
    }
    return try Image(width: image.width, height: image.height, channels: 3, pixels: rgb)
  }

  /// Output `index` as real values (quantized outputs dequantized), with its shape and name.
  func output(_ index: Int) throws(TaskVisionError) -> (values: [Float], shape: [Int], name: String) {
    do {
      let tensor = try interpreter.output(at: index)
      let values: [Float]
      switch tensor.dataType {
      case .float32: values = try [Float](tensor)
      case .uInt8:
        let scale = tensor.quantizationParameters?.scale ?? 1, zeroPoint = tensor.quantizationParameters?.zeroPoint ?? 0
        values = try [UInt8](tensor).map { scale * Float(Int($0) - zeroPoint) }
      case .int8:
        let scale = tensor.quantizationParameters?.scale ?? 1, zeroPoint = tensor.quantizationParameters?.zeroPoint ?? 0
        values = try [Int8](tensor).map { scale * Float(Int($0) - zeroPoint) }
      default:
        throw TaskVisionError("output \(index) (\(tensor.name)) has type \(tensor.dataType.schemaName); float32, uint8 or int8 are read")
      }
      return (values, tensor.shape.dimensions, tensor.name)
    } catch let error as TaskVisionError {
      throw error
    } catch {
      throw TaskVisionError("cannot read output \(index): \(error)")
    }
  }

  /// Maps a point given as fractions (`x`, `y`) of the model input back to pixels of a
  /// `width × height` image, undoing the fit.
  func imagePoint(x: Float, y: Float, imageWidth width: Int, imageHeight height: Int) -> (x: Double, y: Double) {
    let (x, y) = (Double(x), Double(y))
    switch fit {
    case .stretch:
      return (x * Double(width), y * Double(height))
    case .centerCrop:
      let cropWidth = max(1, min(width, (height * inputWidth) / inputHeight))
      let cropHeight = max(1, min(height, (width * inputHeight) / inputWidth))
      return (Double((width - cropWidth) / 2) + x * Double(cropWidth), Double((height - cropHeight) / 2) + y * Double(cropHeight))
    case .letterbox:
      let scaledWidth: Int, scaledHeight: Int
      if width * inputHeight >= height * inputWidth {
        scaledWidth = inputWidth
        scaledHeight = max(1, (height * inputWidth + width / 2) / width)
      } else {
        scaledHeight = inputHeight
        scaledWidth = max(1, (width * inputHeight + height / 2) / height)
      }
      let left = Double((inputWidth - scaledWidth) / 2), top = Double((inputHeight - scaledHeight) / 2)
      return (
        (x * Double(inputWidth) - left) * Double(width) / Double(scaledWidth),
        (y * Double(inputHeight) - top) * Double(height) / Double(scaledHeight)
      )
    }
  }
}

extension ClassificationOptions {
  /// Throws when the options contradict each other.
  func validate() throws(TaskVisionError) {
    guard labelAllowList.isEmpty || labelDenyList.isEmpty else {
      throw TaskVisionError("labelAllowList and labelDenyList are mutually exclusive")
    }
    guard maxResults != 0 else { throw TaskVisionError("maxResults 0 would report nothing; use a negative value for all") }
    if let scoreThreshold, !scoreThreshold.isFinite { throw TaskVisionError("scoreThreshold \(scoreThreshold) is not finite") }
  }

  /// Whether a class named `label` passes the allow and deny lists.
  func admits(label: String?) -> Bool {
    if !labelAllowList.isEmpty { return label.map(labelAllowList.contains) ?? false }
    return !(label.map(labelDenyList.contains) ?? false)
  }
}
