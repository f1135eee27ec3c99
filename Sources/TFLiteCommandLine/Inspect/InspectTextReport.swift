import TFLiteFormat

/// The human-readable `tflite inspect` report.
struct InspectTextReport {
  let inspected: InspectedModel
  /// Whether to add the table of every tensor (`--tensors`).
  let includesTensors: Bool

  private var model: Model { inspected.model }

  /// The whole report.
  func rendered() -> String {
    var lines = summary()
    for (index, subgraph) in model.subgraphs.enumerated() {
      lines += [""] + section(for: subgraph, at: index)
    }
    lines += [""] + histogram()
    lines += [""] + signatures()
    lines += [""] + metadata()
    lines += [""] + InspectMetadataReport(file: inspected.file).lines()
    if inspected.histogram().contains(where: { !$0.isSupported }) {
      lines += ["", "* = this runtime has no kernel for the operator yet"]
    }
    return lines.joined(separator: "\n") + "\n"
  }

  private func summary() -> [String] {
    let totals = inspected.parameterTotals()
    let count = totals.reduce(0) { $0 + $1.count }
    let bytes = totals.reduce(0) { $0 + $1.bytes }
    var lines = [
      "model \(inspected.path)",
      "  file size:           \(grouped(inspected.file.fileSize)) bytes",
      "  schema version:      \(model.version)",
      "  description:         \(model.description ?? "(none)")",
      "  min runtime version: \(inspected.file.minRuntimeVersion ?? "(not recorded)")",
      "  subgraphs:           \(model.subgraphs.count)",
      "  parameters:          \(grouped(count)) in \(grouped(bytes)) bytes",
    ]
    lines += totals.map { "    \(pad($0.type.name, 10)) \(grouped($0.count)) in \(grouped($0.bytes)) bytes" }
    let externalFiles = inspected.externalFiles()
    if !externalFiles.isEmpty {
      lines.append("  external files:      \(externalFiles.count) (schema 3d external buffers)")
      lines += externalFiles.map { file in
        let size = file.size.map { "\(grouped($0)) bytes" } ?? "not opened"
        return "    #\(file.index) \(file.name ?? "(unnamed)"): \(counted(file.bufferCount, "buffer")), \(size)"
      }
    }
    return lines
  }

  private func section(for subgraph: SubGraph, at index: Int) -> [String] {
    let counts = "\(counted(subgraph.tensors.count, "tensor")), \(counted(subgraph.operators.count, "operator"))"
    var lines = ["subgraph \(index) \"\(subgraph.name ?? "")\": \(counts)"]
    for (title, indices) in [("inputs", subgraph.inputs), ("outputs", subgraph.outputs)] {
      lines.append("  \(title):")
      lines += indices.map { "    " + describe(tensorAt: Int($0), in: subgraph) }
    }
    lines.append("  operators:")
    let width = String(subgraph.operators.count).count
    for (position, op) in subgraph.operators.enumerated() {
      let code = inspected.code(of: op)
      let mark = inspected.isSupported(code) ? " " : "*"
      let operands = "\(list(op.inputs, in: subgraph)) -> \(list(op.outputs, in: subgraph))"
      var line = "    \(pad(String(position), width)) \(mark) \(inspected.name(of: code)) v\(code.version)  \(operands)"
      let options = shownOptions(of: op)
      if !options.isEmpty { line += "  " + options }
      lines.append(line)
    }
    if includesTensors {
      lines.append("  tensors:")
      lines += subgraph.tensors.indices.map { "    " + describe(tensorAt: $0, in: subgraph) + bufferNote(for: subgraph.tensors[$0]) }
    }
    return lines
  }

  /// `T#3 name FLOAT32 [1, 2] (signature [-1, 2]) 0.5 * (q + 3)`.
  private func describe(tensorAt index: Int, in subgraph: SubGraph) -> String {
    let tensor = subgraph.tensors[index]
    var text = "T#\(index) \(tensor.name ?? "(unnamed)") \(tensor.type.name) \(shape(tensor.shape))"
    if !tensor.shapeSignature.isEmpty, tensor.shapeSignature != tensor.shape {
      text += " (signature \(shape(tensor.shapeSignature)))"
    }
    if tensor.isVariable { text += " variable" }
    if let quantization = inspected.quantization(of: tensor) { text += "  " + describe(quantization) }
    if tensor.sparsity != nil { text += "  sparse" }
    if let external = inspected.file.externalBuffer(of: tensor) {
      let name = inspected.model.externalBufferGroups[Int(external.group)].name ?? "(unnamed)"
      text += "  external #\(external.id) in \(name) at \(external.offset), \(grouped(Int(external.length))) bytes"
      if let packing = external.packing, !packing.isEmpty { text += " (\(packing))" }
    }
    return text
  }

  private func bufferNote(for tensor: Tensor) -> String {
    guard inspected.file.externalBuffer(of: tensor) == nil else { return "" }
    let bytes = inspected.file.tensorData(tensor).count
    return bytes == 0 ? "" : "  buffer \(tensor.buffer): \(grouped(bytes)) bytes"
  }

  /// `0.5 * (q + 3)` per tensor; a range of scales and zero points per channel; blockwise and
  /// multi-axis details with their block size, axes and scale tensor.
  private func describe(_ quantization: QuantizationParameters) -> String {
    if let details = quantization.details.inspectText { return details }
    let zeroPoints = quantization.zeroPoint
    if quantization.scale.count == 1 {
      let zeroPoint = zeroPoints.first ?? 0
      let q = zeroPoint == 0 ? "q" : zeroPoint > 0 ? "(q - \(zeroPoint))" : "(q + \(-zeroPoint))"
      return "real = \(quantization.scale[0]) * \(q)"
    }
    let scales = quantization.scale
    let scaleText = "\(scales.min() ?? 0)…\(scales.max() ?? 0)"
    let zeroText = Set(zeroPoints).count <= 1 ? "\(zeroPoints.first ?? 0)" : "\(zeroPoints.min() ?? 0)…\(zeroPoints.max() ?? 0)"
    return "per-channel on axis \(quantization.quantizedDimension), \(scales.count) channels: "
      + "real = scale[c] * (q - zero_point[c]), scale \(scaleText), zero_point \(zeroText)"
  }

  /// Operands as `T#0[1, 2], -` (`-` for an absent optional operand).
  private func list(_ indices: [Int32], in subgraph: SubGraph) -> String {
    indices.map { $0 < 0 ? "-" : "T#\($0)\(shape(subgraph.tensors[Int($0)].shape))" }.joined(separator: ", ")
  }

  /// The options worth a glance: every field that differs from its default, plus padding and
  /// fused activation always; custom options decoded from FlexBuffers.
  private func shownOptions(of op: Operator) -> String {
    var parts = inspected.optionFields(of: op).filter { !$0.isDefault || ["padding", "fused_activation_function"].contains($0.name) }
      .map { "\($0.name)=\($0.value.displayText)" }
    switch inspected.customOptions(of: op) {
    case .flexBuffer(let json)?: parts.append("custom_options=\(json)")
    case .undecodable(let reason, let count)?: parts.append("custom_options=\(count) bytes (\(reason))")
    case nil: break
    }
    return parts.joined(separator: " ")
  }

  private func histogram() -> [String] {
    let rows = inspected.histogram()
    let labels = rows.map { "\($0.isSupported ? " " : "*") \($0.name) v\($0.version)" }
    let width = labels.map(\.count).max() ?? 0
    return ["operator histogram:"] + zip(labels, rows).map { "  \(pad($0, width))  \($1.count)" }
  }

  private func signatures() -> [String] {
    guard !model.signatureDefs.isEmpty else { return ["signatures: (none)"] }
    return ["signatures:"] + model.signatureDefs.map { signature in
      let names: ([TensorMap]) -> String = { $0.map { "\($0.name ?? "?")=T#\($0.tensorIndex)" }.joined(separator: ", ") }
      return "  \(signature.signatureKey ?? "(no key)") on subgraph \(signature.subgraphIndex): "
        + "inputs \(names(signature.inputs)); outputs \(names(signature.outputs))"
    }
  }

  private func metadata() -> [String] {
    guard !model.metadata.isEmpty else { return ["metadata: (none)"] }
    return ["metadata:"] + model.metadata.map { entry in
      let bytes = inspected.file.data(ofBuffer: Int(entry.buffer)).count
      var line = "  \(entry.name ?? "(unnamed)"): buffer \(entry.buffer), \(grouped(bytes)) bytes"
      if entry.name == "min_runtime_version", let version = inspected.file.minRuntimeVersion { line += " = \"\(version)\"" }
      return line
    }
  }

  /// `1 operator`, `2 operators`.
  private func counted(_ count: Int, _ noun: String) -> String {
    "\(grouped(count)) \(noun)\(count == 1 ? "" : "s")"
  }

  private func shape(_ dimensions: [Int32]) -> String {
    "[" + dimensions.map(String.init).joined(separator: ", ") + "]"
  }

  private func pad(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
  }

  /// `1234567` as `1,234,567`.
  private func grouped(_ number: Int) -> String {
    let digits = Array(String(number.magnitude))
    var text = ""
    for (index, digit) in digits.enumerated() {
      if index > 0, (digits.count - index) % 3 == 0 { text += "," }
      text.append(digit)
    }
    return (number < 0 ? "-" : "") + text
  }
}
