import TFLiteFormat
import TFLiteRuntime

/// A loaded model plus the facts `tflite inspect` reports about it, shared by the text and JSON reports.
struct InspectedModel {
  /// The path the model was loaded from.
  let path: String
  /// The verified model.
  let file: TFLiteModel
  /// The decoded schema root.
  var model: Model { file.model }

  /// Constant data of one tensor type: elements and bytes, each buffer counted once.
  struct ParameterTotal {
    var type: TensorType
    var count: Int
    var bytes: Int
  }

  /// One row of the operator histogram.
  struct HistogramRow {
    var name: String
    var version: Int32
    var count: Int
    var isSupported: Bool
  }

  /// The schema name of the operator (`CONV_2D`), or its custom code.
  func name(of op: Operator) -> String {
    name(of: code(of: op))
  }

  /// The schema name of an operator code (`CONV_2D`), or its custom code.
  func name(of code: OperatorCode) -> String {
    code.resolvedBuiltinCode == .custom ? (code.customCode ?? "CUSTOM") : code.resolvedBuiltinCode.name
  }

  /// The operator code `op` refers to (indices were validated at load).
  func code(of op: Operator) -> OperatorCode {
    model.operatorCodes[Int(op.opcodeIndex)]
  }

  /// Whether this package's runtime has a kernel for the operator code.
  func isSupported(_ code: OperatorCode) -> Bool {
    OperatorSupport.isSupported(
      builtinCode: code.resolvedBuiltinCode.rawValue, customCode: code.resolvedBuiltinCode == .custom ? code.customCode : nil)
  }

  /// The number of elements of `tensor`'s shape.
  func elementCount(of tensor: Tensor) -> Int {
    tensor.shape.reduce(1) { $0 * Int($1) }
  }

  /// Constant parameters by tensor type, in schema order of the types; a buffer shared by several
  /// tensors counts once.
  func parameterTotals() -> [ParameterTotal] {
    var seenBuffers = Set<UInt32>()
    var totals: [TensorType: ParameterTotal] = [:]
    for tensor in model.subgraphs.flatMap(\.tensors) {
      let bytes = file.tensorData(tensor).count
      guard bytes > 0, seenBuffers.insert(tensor.buffer).inserted else { continue }
      totals[tensor.type, default: ParameterTotal(type: tensor.type, count: 0, bytes: 0)].count += elementCount(of: tensor)
      totals[tensor.type, default: ParameterTotal(type: tensor.type, count: 0, bytes: 0)].bytes += bytes
    }
    return totals.values.sorted { $0.type.rawValue < $1.type.rawValue }
  }

  /// Operators of all subgraphs counted by name and version, most frequent first.
  func histogram() -> [HistogramRow] {
    var rows: [String: HistogramRow] = [:]
    for op in model.subgraphs.flatMap(\.operators) {
      let code = code(of: op)
      let key = "\(name(of: code)) v\(code.version)"
      rows[key, default: HistogramRow(name: name(of: code), version: code.version, count: 0, isSupported: isSupported(code))].count += 1
    }
    return rows.values.sorted { ($1.count, $0.name, $0.version) < ($0.count, $1.name, $1.version) }
  }

  /// The quantization worth showing: nil when the tensor has none, or neither scales nor details.
  func quantization(of tensor: Tensor) -> QuantizationParameters? {
    tensor.quantization.flatMap { $0.scale.isEmpty && $0.details == .none ? nil : $0 }
  }

  /// The external buffer groups (files) with their resolved paths and sizes (nil when not opened).
  func externalFiles() -> [(index: Int, name: String?, path: String?, size: Int?, bufferCount: Int)] {
    model.externalBufferGroups.enumerated().map { index, group in
      (index, group.name, file.externalFilePath(ofGroup: index), file.externalFileSize(ofGroup: index),
       model.externalBuffers.filter { $0.group == index }.count)
    }
  }

  /// The schema name of `op`'s options table (from `builtin_options_2` when set), or nil when it has none.
  func optionsTypeName(of op: Operator) -> String? {
    if op.builtinOptions2 != .none { return op.builtinOptions2.typeName }
    return op.builtinOptions == .none ? nil : op.builtinOptions.typeName
  }

  /// The fields of `op`'s options table (from `builtin_options_2` when set).
  func optionFields(of op: Operator) -> [SchemaField] {
    op.builtinOptions2 != .none ? op.builtinOptions2.fields : op.builtinOptions.fields
  }

  /// The custom options of `op`: nil when it has none, else decoded as FlexBuffers (their
  /// declared format) or, when that fails, the reason.
  func customOptions(of op: Operator) -> CustomOptions? {
    CustomOptions(file.customOptions(of: op), format: op.customOptionsFormat)
  }
}

/// What `tflite inspect` shows of an operator's custom options.
enum CustomOptions: Equatable {
  /// A FlexBuffer, as compact JSON text.
  case flexBuffer(json: String)
  /// Bytes that could not be decoded: why, and how many there are.
  case undecodable(reason: String, byteCount: Int)

  /// Decodes `bytes` stored in `format`; nil when there are none.
  init?(_ bytes: UnsafeRawBufferPointer, format: CustomOptionsFormat) {
    guard !bytes.isEmpty else { return nil }
    guard format == .flexbuffers else {
      self = .undecodable(reason: "unknown custom options format \(format.name)", byteCount: bytes.count)
      return
    }
    do {
      self = .flexBuffer(json: try FlexBufferReference(bytes).description)
    } catch {
      self = .undecodable(reason: "\(error)", byteCount: bytes.count)
    }
  }
}

extension SchemaValue {
  /// The value as `tflite inspect` and `tflite graph` show it: `2`, `SAME`, `"text"`, `[1, 2]`.
  var displayText: String {
    switch self {
    case .bool(let value): return String(value)
    case .integer(let value): return String(value)
    case .unsigned(let value): return String(value)
    case .float(let value): return "\(Float(value))"
    case .enumeration(let name, _): return name
    case .string(let text): return text.map { "\"\($0)\"" } ?? "(none)"
    case .bytes(let range): return "\(range?.count ?? 0) bytes"
    case .vector(let values): return "[" + values.map(\.displayText).joined(separator: ", ") + "]"
    }
  }
}

extension QuantizationDetails {
  /// What `tflite inspect` says of the details (`blockwise: block size 32, scales T#3, zero points
  /// none`); nil for none.
  var inspectText: String? {
    func zeroPoints(_ index: Int32) -> String { index == -1 ? "none" : "T#\(index)" }
    switch self {
    case .none:
      return nil
    case .blockwiseQuantization(let details):
      let shape = details.blockShape.isEmpty ? "" : ", block shape \(details.blockShape)"
      return "blockwise: block size \(details.blockSize)\(shape), scales T#\(details.scales), "
        + "zero points \(zeroPoints(details.zeroPoints))"
    case .multiAxisQuantization(let details):
      return "multi-axis on axes \(details.quantizedDimensions): block size \(details.blockSize), "
        + "scales T#\(details.scales), zero points \(zeroPoints(details.zeroPoints))"
    case .customQuantization(let details):
      return "custom quantization: \(details.custom?.count ?? 0) bytes"
    case .unknown(let type):
      return "quantization details of unknown union type \(type)"
    }
  }
}
