// Hostile variants of a model: each edits one thing of a model tree that the loader accepts but
// that a runtime must refuse (or survive): shapes that overflow, wrong ranks and types, option
// values out of range, operands wired to the wrong tensors, broken quantization, operators
// swapped for others, control flow pointing at the wrong subgraphs.

@testable import TFLiteFormat

/// Builds seeded hostile edits of one model.
struct HostileModels {
  /// The unedited model.
  let original: TreeTable
  /// Operator codes the runtime has kernels for (what an operator may be swapped to).
  let operatorCodes: [Int32]

  /// Hostile 32-bit values: sizes, indices and enums at and beyond their limits, and the bit
  /// patterns of NaN, infinities, denormals and extreme floats (for float fields).
  static let values32: [UInt32] =
    [0, 1, 2, 3, 4, 5, 7, 8, 16, 255, 256, 65_535, 65_536, 1 << 20, 1 << 24, 1 << 30, 0x7FFF_FFFF, 0x7FFF_FFFE]
    + [-1, -2, -3, -4, -8, -65_536, Int32.min, Int32.min + 1].map { UInt32(bitPattern: $0) }
    + [Float.nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -0.0, 1e-30, 1e30, 0.5, -1]
    .map(\.bitPattern)
  /// Hostile one-byte values (enums, booleans).
  static let values8: [UInt8] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 17, 22, 23, 100, 127, 128, 200, 255]
  /// Hostile dimensions.
  static let dimensions: [Int32] = [0, 1, 2, 3, 7, 1 << 16, 1 << 20, 1 << 30, Int32.max, 46_341, -1]

  /// The kinds of edit.
  enum Edit: CaseIterable {
    case optionScalar, optionsOfAnotherOperator, optionVector, dimension, rank, constantReshape, tensorType
    case quantization, nodeInput, nodeOutput, nodeArity, operatorSwap, graphEndpoints, operatorVersion
    case constantToEmpty, variableFlag, shapeSignature, customOptionsByte, constantValue, constantResize

    /// The edits to pick from: constant values (axes, shapes, paddings, indices, strides, loop
    /// bounds are all constant tensors) count three times.
    static let weighted = allCases + [.constantValue, .constantValue]
  }

  /// Bytes per element of the schema tensor types a constant edit can resize, by type code.
  static let elementSizes: [UInt8: Int] = [0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 6: 1, 7: 2, 9: 1, 10: 8, 12: 8, 15: 4, 16: 2]

  /// One hostile variant: what was edited and the edited model.
  struct Variant {
    var description: String
    var model: TreeTable
  }

  /// The variant `index` of the model, fully determined by `seed` and `index`; nil when the
  /// chosen edit does not apply to this model (e.g. no quantized tensor to corrupt).
  func variant(_ index: Int, seed: UInt64) -> Variant? {
    var random = SeededGenerator(seed: seed &+ UInt64(index) &* 0x9E37_79B9)
    let edit = Edit.weighted[random.int(0...(Edit.weighted.count - 1))]
    var model = original
    guard let description = apply(edit, to: &model, using: &random) else { return nil }
    return Variant(description: "\(edit): \(description)", model: model)
  }

  // MARK: Edits

  private func apply(_ edit: Edit, to model: inout TreeTable, using random: inout SeededGenerator) -> String? {
    let subgraphs = model.tables("subgraphs")
    let subgraph = random.int(0...(subgraphs.count - 1))
    let graph = subgraphs[subgraph]
    let tensors = graph.tables("tensors")
    let operators = graph.tables("operators")
    let buffers = model.tables("buffers")
    func isConstant(_ tensor: TreeTable) -> Bool {
      let buffer = Int(tensor.integer("buffer"))
      guard buffer > 0, buffer < buffers.count, case .scalarVector(let data, _) = buffers[buffer]["data"] else { return false }
      return !data.isEmpty
    }
    func pickTensor(constant: Bool?) -> Int? {
      let candidates = tensors.indices.filter { constant == nil || isConstant(tensors[$0]) == constant }
      return candidates.isEmpty ? nil : candidates[random.int(0...(candidates.count - 1))]
    }
    func pickOperator() -> Int? { operators.isEmpty ? nil : random.int(0...(operators.count - 1)) }
    func hostileTensorIndex(node: TreeTable) -> Int32 {
      let choices: [Int32] = [
        Int32(random.int(0...max(tensors.count - 1, 0))), -1, node.int32s("outputs").first ?? 0,
        graph.int32s("inputs").first ?? 0, Int32(pickTensor(constant: true) ?? 0),
      ]
      return choices[random.int(0...(choices.count - 1))]
    }
    func editTensor(_ index: Int, _ body: (inout TreeTable) -> Void) {
      model.update("subgraphs", at: subgraph) { graph in graph.update("tensors", at: index, body) }
    }
    /// The constant data of `tensor` with its element type code.
    func constantData(_ tensor: Int) -> (bytes: [UInt8], type: UInt8)? {
      let buffer = Int(tensors[tensor].integer("buffer"))
      guard buffer > 0, buffer < buffers.count, case .scalarVector(let data, _) = buffers[buffer]["data"] else { return nil }
      return (data, UInt8(truncatingIfNeeded: tensors[tensor].integer("type")))
    }
    /// Gives `tensor` a buffer of its own holding `data`.
    func setConstantData(_ tensor: Int, _ data: [UInt8]) {
      model["buffers"] = .tableVector(
        model.tables("buffers") + [TreeTable(layout: bufferLayout, fields: [0: .scalarVector(data, elementSize: 1)])])
      editTensor(tensor) { $0["buffer"] = .scalar(UInt32(buffers.count).littleEndianBytes) }
    }
    func editOperator(_ index: Int, _ body: (inout TreeTable) -> Void) {
      model.update("subgraphs", at: subgraph) { graph in graph.update("operators", at: index, body) }
    }

    switch edit {
    case .optionScalar:
      guard let node = pickOperator(), case .table(let options) = operators[node]["builtin_options"] else { return nil }
      let fields = options.tableLayout.fields.filter {
        if case .scalar = $0.kind { return true } else { return false }
      }
      guard !fields.isEmpty else { return nil }
      let field = fields[random.int(0...(fields.count - 1))]
      guard case .scalar(let size) = field.kind else { return nil }
      let value = hostileScalar(size: size, using: &random)
      editOperator(node) { node in
        guard case .table(var options) = node["builtin_options"] else { return }
        options.fields[field.id] = .scalar(value)
        node["builtin_options"] = .table(options)
      }
      return "subgraph \(subgraph) node \(node) \(options.tableLayout.name).\(field.name) = \(describe(value))"

    case .optionsOfAnotherOperator:
      guard let node = pickOperator() else { return nil }
      let members = SchemaLayout.tflite.unions[2].memberTables
      let code = random.int(0...members.count)
      var options = TreeTable(layout: code == 0 ? 0 : members[code - 1], fields: [:])
      for field in options.tableLayout.fields where random.bool() {
        if case .scalar(let size) = field.kind { options.fields[field.id] = .scalar(hostileScalar(size: size, using: &random)) }
      }
      editOperator(node) { node in
        node["builtin_options_type"] = .scalar([UInt8(code)])
        node["builtin_options"] = code == 0 ? nil : .table(options)
      }
      return "subgraph \(subgraph) node \(node) options replaced by \(code == 0 ? "none" : options.tableLayout.name)"

    case .optionVector:
      guard let node = pickOperator(), case .table(let options) = operators[node]["builtin_options"] else { return nil }
      let fields = options.tableLayout.fields.filter {
        if case .scalarVector(4) = $0.kind { return true } else { return false }
      }
      guard !fields.isEmpty else { return nil }
      let field = fields[random.int(0...(fields.count - 1))]
      let vectors: [[Int32]] = [[], [-1], [0], [Int32.max], [Int32.min], [-1, -1], [1 << 20, 1 << 20], [0, 0, 0, 0],
        Array(repeating: 2, count: 12), [2, 3], [1, -5, 7]]
      let vector = vectors[random.int(0...(vectors.count - 1))]
      editOperator(node) { node in
        guard case .table(var options) = node["builtin_options"] else { return }
        options.setInt32s(field.name, vector)
        node["builtin_options"] = .table(options)
      }
      return "subgraph \(subgraph) node \(node) \(options.tableLayout.name).\(field.name) = \(vector)"

    case .dimension:
      guard let tensor = pickTensor(constant: random.int(0...3) == 0 ? nil : false) else { return nil }
      var shape = tensors[tensor].int32s("shape")
      guard !shape.isEmpty else { return nil }
      let axis = random.int(0...(shape.count - 1))
      let choices = Self.dimensions + [shape[axis] &+ 1, shape[axis] &* 2, max(shape[axis] - 1, 0)]
      shape[axis] = choices[random.int(0...(choices.count - 1))]
      editTensor(tensor) { $0.setInt32s("shape", shape) }
      return "subgraph \(subgraph) tensor \(tensor) shape = \(shape)"

    case .rank:
      guard let tensor = pickTensor(constant: false) else { return nil }
      var shape = tensors[tensor].int32s("shape")
      switch random.int(0...4) {
      case 0: shape = []
      case 1: shape.append(Int32(random.int(1...3)))
      case 2: if !shape.isEmpty { shape.removeFirst() }
      case 3: shape = [Int32](repeating: 2, count: random.int(6...10))
      default: shape.insert(1, at: 0)
      }
      editTensor(tensor) { $0.setInt32s("shape", shape) }
      return "subgraph \(subgraph) tensor \(tensor) shape = \(shape)"

    case .constantReshape:
      guard let tensor = pickTensor(constant: true) else { return nil }
      let shape = tensors[tensor].int32s("shape")
      let count = shape.reduce(Int32(1), &*)
      let choices: [[Int32]] = [Array(shape.reversed()), [count], [1] + shape, shape + [1], [], [1, count, 1, 1]]
      let reshaped = choices[random.int(0...(choices.count - 1))]
      guard reshaped != shape, reshaped.reduce(Int32(1), &*) == count else { return nil }
      editTensor(tensor) { $0.setInt32s("shape", reshaped) }
      return "subgraph \(subgraph) constant \(tensor) shape \(shape) -> \(reshaped)"

    case .tensorType:
      guard let tensor = pickTensor(constant: nil) else { return nil }
      let old = UInt8(truncatingIfNeeded: tensors[tensor].integer("type"))
      // A constant keeps its byte count, so its buffer still fits.
      let sameSize: [[UInt8]] = [[0, 2, 15], [3, 6, 9], [7, 16, 1], [4, 10, 12, 8]]
      let choices = isConstant(tensors[tensor])
        ? sameSize.first { $0.contains(old) } ?? [old]
        : [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]
      let type = choices[random.int(0...(choices.count - 1))]
      guard type != old else { return nil }
      editTensor(tensor) { $0["type"] = .scalar([type]) }
      return "subgraph \(subgraph) tensor \(tensor) type \(TensorType(rawValue: Int8(bitPattern: old))) -> \(TensorType(rawValue: Int8(bitPattern: type)))"

    case .quantization:
      guard let tensor = pickTensor(constant: nil) else { return nil }
      let current: TreeTable? = if case .table(let table) = tensors[tensor]["quantization"] { table } else { nil }
      var quantization = current ?? TreeTable(layout: quantizationLayout, fields: [:])
      let channels = max(quantization.int32s("scale").count, 1)
      let what: String
      switch random.int(0...5) {
      case 0:
        let scale = [Float.nan, .infinity, 0, -1, .leastNonzeroMagnitude, 1e30, 1e-30][random.int(0...6)]
        quantization["scale"] = .scalarVector((0..<channels).flatMap { _ in scale.bitPattern.littleEndianBytes }, elementSize: 4)
        quantization["zero_point"] = quantization["zero_point"] ?? .scalarVector([UInt8](repeating: 0, count: 8 * channels), elementSize: 8)
        what = "scale \(scale)"
      case 1:
        let zero: Int64 = [Int64.min, Int64.max, 300, -300, 1 << 40, 128, -129][random.int(0...6)]
        quantization["zero_point"] = .scalarVector((0..<channels).flatMap { _ in zero.littleEndianBytes }, elementSize: 8)
        quantization["scale"] = quantization["scale"] ?? .scalarVector(Float(0.1).bitPattern.littleEndianBytes, elementSize: 4)
        what = "zero point \(zero)"
      case 2:
        let axis = [-1, 4, 100, Int32.max][random.int(0...3)]
        quantization["quantized_dimension"] = .scalar(axis.littleEndianBytes)
        what = "quantized dimension \(axis)"
      case 3:
        let count = [0, channels + 1, 3, 1000][random.int(0...3)]
        quantization["scale"] = .scalarVector((0..<count).flatMap { _ in Float(0.05).bitPattern.littleEndianBytes }, elementSize: 4)
        quantization["zero_point"] = .scalarVector([UInt8](repeating: 0, count: 8 * count), elementSize: 8)
        what = "\(count) scales and zero points"
      case 4:
        let count = [0, channels + 1, 2][random.int(0...2)]
        quantization["zero_point"] = .scalarVector([UInt8](repeating: 0, count: 8 * count), elementSize: 8)
        what = "\(count) zero points for \(channels) scales"
      default:
        editTensor(tensor) { $0["quantization"] = nil }
        return "subgraph \(subgraph) tensor \(tensor) quantization removed"
      }
      editTensor(tensor) { $0["quantization"] = .table(quantization) }
      return "subgraph \(subgraph) tensor \(tensor) \(what)"

    case .nodeInput, .nodeOutput:
      let list = edit == .nodeInput ? "inputs" : "outputs"
      guard let node = pickOperator() else { return nil }
      var indices = operators[node].int32s(list)
      guard !indices.isEmpty else { return nil }
      let position = random.int(0...(indices.count - 1))
      // A later node's output makes a cycle; the node's own output makes a self-loop.
      let later = operators.indices.filter { $0 > node }.flatMap { operators[$0].int32s("outputs") }
      let choices: [Int32] = [hostileTensorIndex(node: operators[node]), later.first ?? -1, operators[node].int32s("inputs").first ?? -1]
      indices[position] = choices[random.int(0...(choices.count - 1))]
      editOperator(node) { $0.setInt32s(list, indices) }
      return "subgraph \(subgraph) node \(node) \(list)[\(position)] = \(indices[position])"

    case .nodeArity:
      guard let node = pickOperator() else { return nil }
      let list = random.bool() ? "inputs" : "outputs"
      var indices = operators[node].int32s(list)
      switch random.int(0...2) {
      case 0: if !indices.isEmpty { indices.removeLast() }
      case 1: indices.append(hostileTensorIndex(node: operators[node]))
      default: indices = []
      }
      editOperator(node) { $0.setInt32s(list, indices) }
      return "subgraph \(subgraph) node \(node) \(list) = \(indices)"

    case .operatorSwap:
      let codes = model.tables("operator_codes")
      guard !codes.isEmpty else { return nil }
      if random.bool(), let node = pickOperator(), codes.count > 1 {
        let index = Int32(random.int(0...(codes.count - 1)))
        editOperator(node) { $0["opcode_index"] = .scalar(index.littleEndianBytes) }
        return "subgraph \(subgraph) node \(node) opcode_index = \(index)"
      }
      let codeIndex = random.int(0...(codes.count - 1))
      let builtin = operatorCodes[random.int(0...(operatorCodes.count - 1))]
      model.update("operator_codes", at: codeIndex) { code in
        code["builtin_code"] = .scalar(builtin.littleEndianBytes)
        code["deprecated_builtin_code"] = .scalar([UInt8(min(builtin, 127))])
        code["custom_code"] = nil
      }
      return "operator code \(codeIndex) = \(BuiltinOperator(rawValue: builtin).name)"

    case .graphEndpoints:
      let list = random.bool() ? "inputs" : "outputs"
      var indices = graph.int32s(list)
      if indices.isEmpty || random.int(0...3) == 0 {
        indices = random.bool() ? [] : indices + [Int32(random.int(0...max(tensors.count - 1, 0)))]
      } else {
        let position = random.int(0...(indices.count - 1))
        let choices: [Int32] = [Int32(pickTensor(constant: true) ?? 0), graph.int32s(list == "inputs" ? "outputs" : "inputs").first ?? 0,
          Int32(random.int(0...max(tensors.count - 1, 0)))]
        indices[position] = choices[random.int(0...(choices.count - 1))]
      }
      model.update("subgraphs", at: subgraph) { $0.setInt32s(list, indices) }
      return "subgraph \(subgraph) \(list) = \(indices)"

    case .operatorVersion:
      let codes = model.tables("operator_codes")
      guard !codes.isEmpty else { return nil }
      let codeIndex = random.int(0...(codes.count - 1))
      let version = [0, -1, 100, Int32.max][random.int(0...3)]
      model.update("operator_codes", at: codeIndex) { $0["version"] = .scalar(version.littleEndianBytes) }
      return "operator code \(codeIndex) version = \(version)"

    case .constantToEmpty:
      guard let tensor = pickTensor(constant: true) else { return nil }
      editTensor(tensor) { $0["buffer"] = .scalar(UInt32(0).littleEndianBytes) }
      return "subgraph \(subgraph) constant \(tensor) loses its data"

    case .variableFlag:
      guard let tensor = pickTensor(constant: nil) else { return nil }
      editTensor(tensor) { $0["is_variable"] = .scalar([1]) }
      return "subgraph \(subgraph) tensor \(tensor) is variable"

    case .shapeSignature:
      guard let tensor = pickTensor(constant: nil) else { return nil }
      var signature = tensors[tensor].int32s("shape")
      guard !signature.isEmpty else { return nil }
      signature[random.int(0...(signature.count - 1))] = -1
      editTensor(tensor) { $0.setInt32s("shape_signature", signature) }
      return "subgraph \(subgraph) tensor \(tensor) shape_signature = \(signature)"

    case .constantValue:
      guard let tensor = pickTensor(constant: true), let (data, type) = constantData(tensor),
        let size = Self.elementSizes[type], data.count >= size
      else { return nil }
      let count = data.count / size
      let element = random.int(0...(count - 1))
      let every = random.int(0...3) == 0
      let value: [UInt8]
      switch (type, size) {
      case (0, _):
        value = [Float.nan, .infinity, -.infinity, 0, -1, 1e30, 1e-30][random.int(0...6)].bitPattern.littleEndianBytes
      case (10, _):
        value = [Double.nan, .infinity, 0, -1, 1e300][random.int(0...4)].bitPattern.littleEndianBytes
      case (_, 8):
        value = [Int64.min, Int64.max, -1, 0, 1 << 31, 1 << 40, -5, 9][random.int(0...7)].littleEndianBytes
      case (_, 4):
        value = [Int32.min, Int32.max, -1, -2, -9, 0, 1 << 20, 9, 65_536][random.int(0...8)].littleEndianBytes
      default:
        value = Array(hostileScalar(size: 4, using: &random).prefix(size))
      }
      var edited = data
      for position in every ? Array(0..<count) : [element] {
        edited.replaceSubrange((position * size)..<((position + 1) * size), with: value)
      }
      setConstantData(tensor, edited)
      return "subgraph \(subgraph) constant \(tensor) \(every ? "every element" : "element \(element)") = \(describe(value))"

    case .constantResize:
      guard let tensor = pickTensor(constant: true), let (data, type) = constantData(tensor), let size = Self.elementSizes[type]
      else { return nil }
      var shape = tensors[tensor].int32s("shape")
      if shape.isEmpty || random.int(0...4) == 0 {
        shape = shape.isEmpty ? [2] : Array(shape.dropFirst())
      } else {
        let axis = random.int(0...(shape.count - 1))
        shape[axis] = [0, shape[axis] + 1, max(shape[axis] - 1, 0), shape[axis] * 2][random.int(0...3)]
      }
      let byteCount = Int(shape.reduce(1, *)) * size
      guard byteCount <= 1 << 20 else { return nil }
      setConstantData(tensor, Array((data + [UInt8](repeating: 0, count: max(byteCount - data.count, 0))).prefix(byteCount)))
      editTensor(tensor) { $0.setInt32s("shape", shape) }
      return "subgraph \(subgraph) constant \(tensor) resized to \(shape)"

    case .customOptionsByte:
      guard let node = pickOperator(), case .scalarVector(var bytes, 1) = operators[node]["custom_options"], !bytes.isEmpty else {
        return nil
      }
      let position = random.int(0...(bytes.count - 1))
      bytes[position] = Self.values8[random.int(0...(Self.values8.count - 1))]
      editOperator(node) { $0["custom_options"] = .scalarVector(bytes, elementSize: 1) }
      return "subgraph \(subgraph) node \(node) custom_options[\(position)] = \(bytes[position])"
    }
  }

  /// Layout index of `Buffer`.
  private var bufferLayout: Int { SchemaLayout.tflite.tables.firstIndex { $0.name == "Buffer" } ?? 0 }

  /// Layout index of `QuantizationParameters`.
  private var quantizationLayout: Int {
    SchemaLayout.tflite.tables.firstIndex { $0.name == "QuantizationParameters" } ?? 0
  }

  /// A hostile little-endian value of `size` bytes.
  private func hostileScalar(size: Int, using random: inout SeededGenerator) -> [UInt8] {
    switch size {
    case 1: return [Self.values8[random.int(0...(Self.values8.count - 1))]]
    case 2: return [UInt16(0), 1, 0x7FFF, 0x8000, 0xFFFF][random.int(0...4)].littleEndianBytes
    case 4: return Self.values32[random.int(0...(Self.values32.count - 1))].littleEndianBytes
    default:
      let value: Int64 = [0, -1, 1 << 33, Int64.max, Int64.min, Int64(Double.nan.bitPattern)][random.int(0...5)]
      return Array(value.littleEndianBytes.prefix(size))
    }
  }

  private func describe(_ value: [UInt8]) -> String {
    value.count == 4 ? "\(Int32(littleEndianBytes: value[...])) (float \(Float(bitPattern: UInt32(littleEndianBytes: value[...]))))"
      : "\(Int64(littleEndianBytes: value[...]))"
  }
}
