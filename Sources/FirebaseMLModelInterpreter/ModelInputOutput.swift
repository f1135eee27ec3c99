// ML Kit's description of a model's inputs and outputs: element types and dimensions declared by
// the caller (`ModelInputOutputOptions`), the input values (`ModelInputs`: raw `Data` or nested
// arrays of numbers) and the results (`ModelOutputs`: nested arrays of `NSNumber` shaped by the
// declared output dimensions). Declarations are checked against the model when the model runs.
import Foundation
import TensorFlowLite

/// The element type of a model input or output (ML Kit's `FIRModelElementType`).
public enum ModelElementType: UInt, Sendable {
  /// Not a valid type; formats with it are refused.
  case unknown = 0
  /// 32-bit floating point.
  case float32 = 1
  /// Signed 32-bit integer.
  case int32 = 2
  /// Unsigned 8-bit integer (also the usual type of quantized image inputs).
  case uInt8 = 3
  /// Signed 64-bit integer.
  case int64 = 4

  /// The matching tensor type, nil for ``unknown``.
  var tensorDataType: Tensor.DataType? {
    switch self {
    case .unknown: nil
    case .float32: .float32
    case .int32: .int32
    case .uInt8: .uInt8
    case .int64: .int64
    }
  }
}

/// The declared element type and dimensions of one input or output.
struct TensorFormat: Equatable {
  /// The element type (never ``ModelElementType/unknown``).
  var type: Tensor.DataType
  /// The dimensions, each at least 1.
  var dimensions: [Int]
  /// Bytes of a buffer holding every element.
  var byteCount: Int

  /// Validates a declaration; `what` names it in errors ("input 0").
  init(type elementType: ModelElementType, dimensions numbers: [NSNumber], what: String) throws {
    guard let type = elementType.tensorDataType else {
      throw MachineLearningError.invalidArgument("The type of \(what) is not a valid ModelElementType.")
    }
    guard !numbers.isEmpty else { throw MachineLearningError.invalidArgument("The dimensions of \(what) are empty.") }
    var dimensions: [Int] = []
    var elementCount = 1
    for number in numbers {
      let value = number.doubleValue
      guard value >= 1, value.rounded() == value, value <= Double(Int32.max) else {
        throw MachineLearningError.invalidArgument("The dimensions of \(what) must be positive integers, got \(numbers).")
      }
      let (product, overflow) = elementCount.multipliedReportingOverflow(by: Int(value))
      guard !overflow, product <= Int.max / 8 else {
        throw MachineLearningError.invalidArgument("The dimensions \(numbers) of \(what) describe too many elements.")
      }
      dimensions.append(Int(value))
      elementCount = product
    }
    self.type = type
    self.dimensions = dimensions
    self.byteCount = elementCount * type.byteCount
  }

  /// `FLOAT32[1, 224, 224, 3]`.
  var description: String { "\(type.schemaName)\(dimensions)" }
}

/// The declared formats of a model's inputs and outputs (ML Kit's `FIRModelInputOutputOptions`).
public final class ModelInputOutputOptions: NSObject, @unchecked Sendable {  // state behind a lock
  /// Declared formats by index.
  private let formats = Locked<(inputs: [Int: TensorFormat], outputs: [Int: TensorFormat])>(([:], [:]))

  /// Creates options with no formats.
  public override init() {}

  /// Declares input `index` as `dimensions` elements of `type`.
  ///
  /// - Throws: an `NSError` with code ``MachineLearningErrorDomainCode/invalidArgument`` when
  ///   `type` is ``ModelElementType/unknown``, `dimensions` is empty or a dimension is not a
  ///   positive integer.
  public func setInputFormat(index: UInt, type: ModelElementType, dimensions: [NSNumber]) throws {
    let format = try TensorFormat(type: type, dimensions: dimensions, what: "input \(index)")
    formats.withLock { $0.inputs[Int(clamping: index)] = format }
  }

  /// Declares output `index` as `dimensions` elements of `type`; errors as ``setInputFormat(index:type:dimensions:)``.
  public func setOutputFormat(index: UInt, type: ModelElementType, dimensions: [NSNumber]) throws {
    let format = try TensorFormat(type: type, dimensions: dimensions, what: "output \(index)")
    formats.withLock { $0.outputs[Int(clamping: index)] = format }
  }

  /// A copy of the declared formats.
  var snapshot: (inputs: [Int: TensorFormat], outputs: [Int: TensorFormat]) { formats.withLock { $0 } }
}

/// The input values of one run (ML Kit's `FIRModelInputs`).
public final class ModelInputs: NSObject, @unchecked Sendable {  // state behind a lock
  /// The inputs in index order.
  private let inputs = Locked<[Any]>([])

  /// Creates empty inputs.
  public override init() {}

  /// Appends the input of the next index (0, 1, 2, …): `Data` with the elements' little-endian
  /// bytes, or an array (nested to the declared rank) of numbers.
  ///
  /// - Throws: an `NSError` with code ``MachineLearningErrorDomainCode/invalidArgument`` when
  ///   `input` is nil or neither `Data` nor an array.
  public func addInput(_ input: Any) throws {
    let value = try Self.unwrapped(input)
    guard value is Data || value is [Any] else {
      throw MachineLearningError.invalidArgument(
        "An input must be Data or an array of numbers, got a value of type \(type(of: value)).")
    }
    inputs.withLock { $0.append(value) }
  }

  /// A copy of the inputs.
  var values: [Any] { inputs.withLock { $0 } }

  /// `input` without optional wrapping; throws for nil.
  private static func unwrapped(_ input: Any) throws -> Any {
    let mirror = Mirror(reflecting: input)
    guard mirror.displayStyle == .optional else { return input }
    guard let wrapped = mirror.children.first?.value else { throw MachineLearningError.invalidArgument("An input is nil.") }
    return try unwrapped(wrapped)
  }
}

/// The results of one run (ML Kit's `FIRModelOutputs`).
public final class ModelOutputs: NSObject, @unchecked Sendable {  // immutable
  /// Outputs by index, each nested arrays of `NSNumber`.
  private let outputs: [Int: Any]

  /// Wraps the results.
  init(outputs: [Int: Any]) {
    self.outputs = outputs
  }

  /// Output `index` as nested arrays of `NSNumber` shaped as the declared dimensions: a
  /// `[1, 1000]` float output is a `[[NSNumber]]`, and casts to `[[Float]]` as well (uint8
  /// outputs to `[[UInt8]]`, int32 to `[[Int32]]`, int64 to `[[Int64]]`).
  ///
  /// - Throws: an `NSError` with code ``MachineLearningErrorDomainCode/invalidArgument`` when no
  ///   output format was declared for `index`.
  public func output(index: UInt) throws -> Any {
    guard let output = outputs[Int(clamping: index)] else {
      throw MachineLearningError.invalidArgument("There is no output at index \(index); declare its format with setOutputFormat.")
    }
    return output
  }
}
