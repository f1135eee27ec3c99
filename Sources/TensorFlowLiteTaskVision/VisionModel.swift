// What detectors and classifiers share: loading a model (its bytes, its TFLite Support metadata and
// associated files, an interpreter), writing an image into its input as ``ImageTensorFormat``
// prepares it, and reading outputs as real values (quantized outputs dequantized).

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
  /// How images become the input.
  let format: ImageTensorFormat
  /// The input's name in the graph.
  let inputName: String

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
    guard interpreter.inputTensorCount == 1 else {
      throw TaskVisionError("\(path) is not an image model: it has \(interpreter.inputTensorCount) inputs")
    }
    let elementType: ImageTensorFormat.ElementType
    switch input.dataType {
    case .uInt8: elementType = .uint8
    case .float32: elementType = .float32
    case .int8:
      guard let quantization = input.quantizationParameters else {
        throw TaskVisionError("\(path): the int8 input has no quantization parameters")
      }
      elementType = .int8(scale: quantization.scale, zeroPoint: quantization.zeroPoint)
    default:
      throw TaskVisionError("\(path): image input of type \(input.dataType.schemaName) (uint8, int8 or float32 are read)")
    }
    inputName = input.name
    format = try ImageTensorFormat(
      shape: input.shape.dimensions, elementType: elementType, metadata: metadata?.subgraphs.first?.inputTensors.first,
      options: inputOptions)
  }

  /// The metadata of the main subgraph's outputs (empty without metadata).
  var outputMetadata: [TensorMetadata] { metadata?.subgraphs.first?.outputTensors ?? [] }

  /// Writes `image` into the input tensor and runs the model.
  func run(_ image: Image) throws(TaskVisionError) {
    /// Writes the prepared image straight into the input tensor's memory, seen as `Element`s.
    func fillInput<Element: TensorElement>(as type: Element.Type) throws {
      try interpreter.withUnsafeMutableInputBuffer(at: 0, as: type) { try format.write(image, into: UnsafeMutableRawBufferPointer($0)) }
    }
    do {
      switch format.elementType {
      case .uint8: try fillInput(as: UInt8.self)
      case .int8: try fillInput(as: Int8.self)
      case .float32: try fillInput(as: Float.self)
      }
      try interpreter.invoke()
    } catch let error as TaskVisionError {
      throw error
    } catch {
      throw TaskVisionError("running the model failed: \(error)\(interpreter.lastErrorMessage.map { " (\($0))" } ?? "")")
    }
  }

  /// Output `index` as real values (quantized outputs dequantized), with its shape and name.
  func output(_ index: Int) throws(TaskVisionError) -> (values: [Float], shape: [Int], name: String) {
    do {
      let tensor = try interpreter.output(at: index)
      /// scale · (q − zero point) for each stored integer (scale 1, zero point 0 without parameters).
      func dequantized<Element: TensorElement & BinaryInteger>(_ type: Element.Type) throws -> [Float] {
        let scale = tensor.quantizationParameters?.scale ?? 1, zeroPoint = tensor.quantizationParameters?.zeroPoint ?? 0
        return try [Element](tensor).map { scale * Float(Int($0) - zeroPoint) }
      }
      let values: [Float]
      switch tensor.dataType {
      case .float32: values = try [Float](tensor)
      case .uInt8: values = try dequantized(UInt8.self)
      case .int8: values = try dequantized(Int8.self)
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
