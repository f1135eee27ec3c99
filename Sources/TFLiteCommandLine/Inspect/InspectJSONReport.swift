import TFLiteFormat

/// The `tflite inspect --json` document; README.md ("tflite inspect --json") describes its fields.
struct InspectJSONReport {
  /// Bumped when a field changes meaning or disappears; adding fields keeps the number.
  static let formatVersion = 1

  let inspected: InspectedModel
  private var model: Model { inspected.model }

  /// The whole document.
  func document() -> JSONValue {
    let totals = inspected.parameterTotals()
    let tfliteMetadata = InspectMetadataReport(file: inspected.file).json()
    return .object([
      ("format", .string("tflite-inspect")),
      ("format_version", .int(Self.formatVersion)),
      ("file", .string(inspected.path)),
      ("file_size", .int(inspected.file.fileSize)),
      ("version", .int(model.version)),
      ("description", .string(model.description)),
      ("min_runtime_version", .string(inspected.file.minRuntimeVersion)),
      ("parameters", .object([
        ("count", .int(totals.reduce(0) { $0 + $1.count })),
        ("bytes", .int(totals.reduce(0) { $0 + $1.bytes })),
        ("by_type", .object(totals.map { ($0.type.name, .object([("count", .int($0.count)), ("bytes", .int($0.bytes))])) })),
      ])),
      ("external_buffer_groups", .array(inspected.externalFiles().map { file in
        .object([
          ("index", .int(file.index)), ("name", .string(file.name)), ("path", .string(file.path)),
          ("file_size", file.size.map { .int($0) } ?? .null), ("buffers", .int(file.bufferCount)),
        ])
      })),
      ("operator_codes", .array(model.operatorCodes.enumerated().map { operatorCode($1, at: $0) })),
      ("subgraphs", .array(model.subgraphs.enumerated().map { subgraph($1, at: $0) })),
      ("op_histogram", .array(inspected.histogram().map {
        .object([("op", .string($0.name)), ("version", .int($0.version)), ("count", .int($0.count)), ("supported", .bool($0.isSupported))])
      })),
      ("signatures", .array(model.signatureDefs.map(signature))),
      ("metadata", .array(model.metadata.map(metadata))),
      ("tflite_metadata", tfliteMetadata),
    ])
  }

  private func operatorCode(_ code: OperatorCode, at index: Int) -> JSONValue {
    .object([
      ("index", .int(index)),
      ("op", .string(inspected.name(of: code))),
      ("builtin_code", .int(code.resolvedBuiltinCode.rawValue)),
      ("custom_code", .string(code.customCode)),
      ("version", .int(code.version)),
      ("supported", .bool(inspected.isSupported(code))),
    ])
  }

  private func subgraph(_ subgraph: SubGraph, at index: Int) -> JSONValue {
    .object([
      ("index", .int(index)),
      ("name", .string(subgraph.name)),
      ("inputs", .ints(subgraph.inputs)),
      ("outputs", .ints(subgraph.outputs)),
      ("tensors", .array(subgraph.tensors.enumerated().map { tensor($1, at: $0) })),
      ("operators", .array(subgraph.operators.enumerated().map { operation($1, at: $0) })),
    ])
  }

  private func tensor(_ tensor: Tensor, at index: Int) -> JSONValue {
    .object([
      ("index", .int(index)),
      ("name", .string(tensor.name)),
      ("type", .string(tensor.type.name)),
      ("shape", .ints(tensor.shape)),
      ("shape_signature", .ints(tensor.shapeSignature.isEmpty ? tensor.shape : tensor.shapeSignature)),
      ("buffer", .int(tensor.buffer)),
      ("data_bytes", .int(inspected.file.tensorData(tensor).count)),
      ("is_variable", .bool(tensor.isVariable)),
      ("sparse", .bool(tensor.sparsity != nil)),
      ("quantization", inspected.quantization(of: tensor).map(quantization) ?? .null),
      ("external_buffer", inspected.file.externalBuffer(of: tensor).map(externalBuffer) ?? .null),
    ])
  }

  private func externalBuffer(_ buffer: ExternalBuffer) -> JSONValue {
    .object([
      ("id", .int(buffer.id)), ("group", .int(buffer.group)), ("offset", .int(buffer.offset)),
      ("length", .int(buffer.length)), ("packing", .string(buffer.packing)),
    ])
  }

  /// The `details` member: null, or the union member's type name with its fields.
  private func quantizationDetails(_ details: QuantizationDetails) -> JSONValue {
    switch details {
    case .none:
      return .null
    case .blockwiseQuantization(let blockwise):
      return .object([
        ("type", .string("BlockwiseQuantization")), ("block_size", .int(blockwise.blockSize)),
        ("block_shape", .ints(blockwise.blockShape)), ("scales", .int(blockwise.scales)),
        ("zero_points", .int(blockwise.zeroPoints)),
      ])
    case .multiAxisQuantization(let multiAxis):
      return .object([
        ("type", .string("MultiAxisQuantization")), ("quantized_dimensions", .ints(multiAxis.quantizedDimensions)),
        ("block_size", .int(multiAxis.blockSize)), ("scales", .int(multiAxis.scales)),
        ("zero_points", .int(multiAxis.zeroPoints)),
      ])
    case .customQuantization(let custom):
      return .object([("type", .string("CustomQuantization")), ("bytes", .int(custom.custom?.count ?? 0))])
    case .unknown(let type):
      return .object([("type", .string("unknown")), ("union_type", .int(type))])
    }
  }

  private func quantization(_ parameters: QuantizationParameters) -> JSONValue {
    var members: [(String, JSONValue)] = [
      ("scale", .array(parameters.scale.map { .float($0) })),
      ("zero_point", .ints(parameters.zeroPoint)),
      ("quantized_dimension", .int(parameters.quantizedDimension)),
    ]
    if !parameters.min.isEmpty { members.append(("min", .array(parameters.min.map { .float($0) }))) }
    if !parameters.max.isEmpty { members.append(("max", .array(parameters.max.map { .float($0) }))) }
    members.append(("details", quantizationDetails(parameters.details)))
    return .object(members)
  }

  private func operation(_ op: Operator, at index: Int) -> JSONValue {
    let code = inspected.code(of: op)
    let customOptions: (json: JSONValue, error: JSONValue)
    switch inspected.customOptions(of: op) {
    case .flexBuffer(let json)?: customOptions = (.raw(json), .null)
    case .undecodable(let reason, _)?: customOptions = (.null, .string(reason))
    case nil: customOptions = (.null, .null)
    }
    return .object([
      ("index", .int(index)),
      ("op", .string(inspected.name(of: code))),
      ("version", .int(code.version)),
      ("opcode_index", .int(op.opcodeIndex)),
      ("inputs", .ints(op.inputs)),
      ("outputs", .ints(op.outputs)),
      ("intermediates", .ints(op.intermediates)),
      ("options_type", .string(inspected.optionsTypeName(of: op))),
      ("options", .object(inspected.optionFields(of: op).map { ($0.name, value($0.value)) })),
      ("custom_options_bytes", .int(inspected.file.customOptions(of: op).count)),
      ("custom_options", customOptions.json),
      ("custom_options_error", customOptions.error),
      ("supported", .bool(inspected.isSupported(code))),
    ])
  }

  private func value(_ value: SchemaValue) -> JSONValue {
    switch value {
    case .bool(let flag): return .bool(flag)
    case .integer(let number): return .integer(number)
    case .unsigned(let number): return .unsigned(number)
    case .float(let number): return .float(Float(number))
    case .enumeration(let name, _): return .string(name)
    case .string(let text): return .string(text)
    case .bytes(let range): return range.map { .object([("bytes", .int($0.count))]) } ?? .null
    case .vector(let values): return .array(values.map(self.value))
    }
  }

  private func signature(_ signature: SignatureDef) -> JSONValue {
    let maps: ([TensorMap]) -> JSONValue = {
      .array($0.map { .object([("name", .string($0.name)), ("tensor", .int($0.tensorIndex))]) })
    }
    return .object([
      ("key", .string(signature.signatureKey)),
      ("subgraph_index", .int(signature.subgraphIndex)),
      ("inputs", maps(signature.inputs)),
      ("outputs", maps(signature.outputs)),
    ])
  }

  private func metadata(_ entry: Metadata) -> JSONValue {
    var members: [(String, JSONValue)] = [
      ("name", .string(entry.name)),
      ("buffer", .int(entry.buffer)),
      ("bytes", .int(inspected.file.data(ofBuffer: Int(entry.buffer)).count)),
    ]
    if entry.name == "min_runtime_version" { members.append(("value", .string(inspected.file.minRuntimeVersion))) }
    return .object(members)
  }
}
