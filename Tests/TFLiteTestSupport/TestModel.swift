/// Builds small `.tflite` files in tests: graphs whose tensors and wiring are given by hand, so the
/// API around the kernels can be tested without depending on any kernel's results.
public struct TestModel: Sendable {
  /// A tensor of a test graph.
  public struct Tensor: Sendable {
    /// Name.
    public var name: String
    /// Schema `TensorType` value (0 FLOAT32, 2 INT32, 3 UINT8, 5 STRING, 9 INT8, ...).
    public var type: UInt8
    /// Shape.
    public var shape: [Int32]
    /// Shape signature (−1 for resizable dimensions); nil to omit.
    public var shapeSignature: [Int32]?
    /// Quantization scales (empty for none).
    public var scales: [Float]
    /// Quantization zero points.
    public var zeroPoints: [Int64]
    /// Quantized dimension.
    public var quantizedDimension: Int32
    /// Constant data (raw little-endian bytes), nil for a tensor computed or fed at run time.
    public var data: [UInt8]?

    /// Creates a tensor description.
    public init(
      name: String, type: UInt8, shape: [Int32], shapeSignature: [Int32]? = nil, scales: [Float] = [],
      zeroPoints: [Int64] = [], quantizedDimension: Int32 = 0, data: [UInt8]? = nil
    ) {
      self.name = name
      self.type = type
      self.shape = shape
      self.shapeSignature = shapeSignature
      self.scales = scales
      self.zeroPoints = zeroPoints
      self.quantizedDimension = quantizedDimension
      self.data = data
    }
  }

  /// A node of a test graph running custom operator `customCode`.
  public struct CustomNode: Sendable {
    /// The custom code.
    public var customCode: String
    /// Input tensor indices.
    public var inputs: [Int32]
    /// Output tensor indices.
    public var outputs: [Int32]
    /// Creates a node.
    public init(customCode: String, inputs: [Int32], outputs: [Int32]) {
      self.customCode = customCode
      self.inputs = inputs
      self.outputs = outputs
    }
  }

  /// A subgraph of a test model.
  public struct Subgraph: Sendable {
    /// Tensors.
    public var tensors: [Tensor]
    /// Indices of the graph inputs.
    public var inputs: [Int32]
    /// Indices of the graph outputs.
    public var outputs: [Int32]
    /// Nodes (custom operators only).
    public var nodes: [CustomNode]
    /// Creates a subgraph.
    public init(tensors: [Tensor], inputs: [Int32], outputs: [Int32], nodes: [CustomNode] = []) {
      self.tensors = tensors
      self.inputs = inputs
      self.outputs = outputs
      self.nodes = nodes
    }
  }

  /// A signature: key, subgraph and named inputs and outputs (name, tensor index).
  public struct Signature: Sendable {
    /// The key.
    public var key: String
    /// The subgraph index.
    public var subgraph: UInt32
    /// Input names and tensor indices.
    public var inputs: [(String, UInt32)]
    /// Output names and tensor indices.
    public var outputs: [(String, UInt32)]
    /// Creates a signature.
    public init(key: String, subgraph: UInt32, inputs: [(String, UInt32)], outputs: [(String, UInt32)]) {
      self.key = key
      self.subgraph = subgraph
      self.inputs = inputs
      self.outputs = outputs
    }
  }

  /// The subgraphs.
  public var subgraphs: [Subgraph]
  /// The signatures.
  public var signatures: [Signature]

  /// Creates a model.
  public init(subgraphs: [Subgraph], signatures: [Signature] = []) {
    self.subgraphs = subgraphs
    self.signatures = signatures
  }

  /// The `.tflite` bytes.
  public func serialized() -> [UInt8] {
    var writer = FlatBufferWriter()
    let customCodes = Array(Set(subgraphs.flatMap { $0.nodes.map(\.customCode) })).sorted()
    let operatorCodes = customCodes.map { code -> FlatBufferWriter.Offset in
      let name = writer.string(code)
      return writer.table { table in
        table.add(0, Int8(32))  // deprecated_builtin_code: CUSTOM
        table.add(1, offset: name)
        table.add(2, Int32(1))  // version
        table.add(3, Int32(32))  // builtin_code: CUSTOM
      }
    }
    // Buffer 0 is empty; each tensor with data gets the next buffer.
    var bufferData: [[UInt8]] = []
    let subgraphOffsets = subgraphs.map { subgraph in
      let tensors = subgraph.tensors.map { tensor -> FlatBufferWriter.Offset in
        guard let data = tensor.data else { return write(tensor, buffer: 0, with: &writer) }
        bufferData.append(data)
        return write(tensor, buffer: UInt32(bufferData.count), with: &writer)
      }
      let operators = subgraph.nodes.map { node -> FlatBufferWriter.Offset in
        let inputs = writer.vector(node.inputs)
        let outputs = writer.vector(node.outputs)
        let opcode = UInt32(customCodes.firstIndex(of: node.customCode) ?? 0)
        return writer.table { table in
          table.add(0, opcode)
          table.add(1, offset: inputs)
          table.add(2, offset: outputs)
        }
      }
      let tensorVector = writer.vector(offsets: tensors)
      let inputs = writer.vector(subgraph.inputs)
      let outputs = writer.vector(subgraph.outputs)
      let operatorVector = writer.vector(offsets: operators)
      return writer.table { table in
        table.add(0, offset: tensorVector)
        table.add(1, offset: inputs)
        table.add(2, offset: outputs)
        table.add(3, offset: operatorVector)
      }
    }
    let signatureOffsets = signatures.map { signature in
      let inputs = signature.inputs.map { tensorMap($0, with: &writer) }
      let outputs = signature.outputs.map { tensorMap($0, with: &writer) }
      let inputVector = writer.vector(offsets: inputs)
      let outputVector = writer.vector(offsets: outputs)
      let key = writer.string(signature.key)
      return writer.table { table in
        table.add(0, offset: inputVector)
        table.add(1, offset: outputVector)
        table.add(2, offset: key)
        table.add(4, signature.subgraph)
      }
    }
    let emptyBuffer = writer.table { _ in }
    let dataBuffers = bufferData.map { data in
      let bytes = writer.vector(data, elementAlignment: 16)
      return writer.table { table in table.add(0, offset: bytes) }
    }
    let codes = writer.vector(offsets: operatorCodes)
    let subgraphVector = writer.vector(offsets: subgraphOffsets)
    let buffers = writer.vector(offsets: [emptyBuffer] + dataBuffers)
    let signatureVector = writer.vector(offsets: signatureOffsets)
    let description = writer.string("SwiftTFLite test model")
    let model = writer.table { table in
      table.add(0, UInt32(3))
      table.add(1, offset: codes)
      table.add(2, offset: subgraphVector)
      table.add(3, offset: description)
      table.add(4, offset: buffers)
      table.add(7, offset: signatureVector)
    }
    return writer.finish(root: model, fileIdentifier: "TFL3")
  }

  /// Writes one tensor table (and its quantization) and returns it.
  private func write(_ tensor: Tensor, buffer: UInt32, with writer: inout FlatBufferWriter) -> FlatBufferWriter.Offset {
    let shape = writer.vector(tensor.shape)
    let name = writer.string(tensor.name)
    let signature = tensor.shapeSignature.map { writer.vector($0) }
    var quantization: FlatBufferWriter.Offset?
    if !tensor.scales.isEmpty {
      let scales = writer.vector(tensor.scales)
      let zeroPoints = writer.vector(tensor.zeroPoints)
      quantization = writer.table { table in
        table.add(2, offset: scales)
        table.add(3, offset: zeroPoints)
        table.add(6, tensor.quantizedDimension)
      }
    }
    return writer.table { table in
      table.add(0, offset: shape)
      table.add(1, tensor.type)
      table.add(2, buffer)
      table.add(3, offset: name)
      if let quantization { table.add(4, offset: quantization) }
      if let signature { table.add(7, offset: signature) }
    }
  }

  /// Writes one signature tensor map.
  private func tensorMap(_ entry: (String, UInt32), with writer: inout FlatBufferWriter) -> FlatBufferWriter.Offset {
    let name = writer.string(entry.0)
    return writer.table { table in
      table.add(0, offset: name)
      table.add(1, entry.1)
    }
  }
}
