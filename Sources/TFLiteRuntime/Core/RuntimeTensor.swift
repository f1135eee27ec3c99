/// A tensor of a subgraph as the runtime holds it: its description and, once allocated, its memory.
public final class RuntimeTensor {
  /// Index of the tensor in its subgraph.
  public let index: Int
  /// The tensor's name in the model.
  public let name: String
  /// Element type.
  public let type: ElementType
  /// Current shape. Kernels set their outputs' shapes in `prepare`.
  ///
  /// `@exclusivity(unchecked)`, as ``data``: kernels read it in `eval`, and a dynamic exclusivity
  /// check (a runtime call and a thread-local access set, about 75 instructions) per read was
  /// about 3 % of a mini network's invoke. Every write is a plain assignment in `prepare` or
  /// allocation, never overlapping a read.
  @exclusivity(unchecked) public internal(set) var shape: [Int]
  /// The model's shape signature (−1 marks a dimension that may be resized).
  public let shapeSignature: [Int]
  /// Quantization parameters, or nil for a tensor that is not quantized.
  public let quantization: Quantization?
  /// True for a variable tensor (state kept across invocations).
  public let isVariable: Bool
  /// True for tensors whose data comes from the model file.
  public let isModelConstant: Bool
  /// True for model constants and for outputs computed once at prepare time (constant folding).
  public internal(set) var isConstant: Bool
  /// The tensor's memory: valid in `eval`, and in `prepare` for constant tensors. Nil before
  /// allocation, and for folded or densified constants freed once their readers copied them.
  /// Read by every kernel's `eval`, so not checked for exclusivity at run time (see ``shape``).
  @exclusivity(unchecked) public internal(set) var data: UnsafeMutableRawPointer?
  /// True while the runtime prepares a node during `invoke()`, for its inputs (already computed).
  var isComputedBeforePrepare = false
  /// Memory owned by this tensor (folded constants, variables, dynamic outputs), freed with it.
  var ownedMemory: UnsafeMutableRawBufferPointer?
  /// For a model constant whose values lowering computed into memory of its own (a densified
  /// sparse constant): writes those values again into `byteCount` bytes, so that the runtime may
  /// free them once every reader copied them and rebuild them at the next allocation.
  var rebuildValues: ((UnsafeMutableRawPointer) throws -> Void)?

  init(
    index: Int, name: String, type: ElementType, shape: [Int], shapeSignature: [Int],
    quantization: Quantization?, isVariable: Bool, constantData: UnsafeRawPointer?
  ) {
    self.index = index
    self.name = name
    self.type = type
    self.shape = shape
    self.shapeSignature = shapeSignature
    self.quantization = quantization
    self.isVariable = isVariable
    self.isModelConstant = constantData != nil
    self.isConstant = constantData != nil
    // Constant data lives in the read-only model bytes; kernels never write through it.
    self.data = constantData.map { UnsafeMutableRawPointer(mutating: $0) }
  }

  deinit { ownedMemory?.deallocate() }

  /// True when `prepare` may read the tensor's values: constants, folded outputs, and the inputs of a
  /// node the runtime prepares during `invoke()` because an earlier output's shape depended on values.
  public var hasValuesForPrepare: Bool { isConstant || isComputedBeforePrepare }

  /// Number of elements (the product of the shape; 1 for a scalar).
  public var elementCount: Int { shape.reduce(1, *) }

  /// Bytes the tensor's data occupies.
  public var byteCount: Int { elementCount * type.byteCount }

  /// The data as typed elements. Only valid once the tensor has memory.
  @inlinable
  public func pointer<T>(as type: T.Type) -> UnsafeMutablePointer<T> {
    data.unsafelyUnwrapped.assumingMemoryBound(to: T.self)
  }

  /// Replaces the tensor's memory by a zeroed, 64-byte aligned block of `byteCount` bytes it owns.
  func allocateOwnedMemory() {
    ownedMemory?.deallocate()
    let block = UnsafeMutableRawBufferPointer.allocate(byteCount: max(byteCount, 1), alignment: 64)
    block.initializeMemory(as: UInt8.self, repeating: 0)
    ownedMemory = block
    data = block.baseAddress
  }

  /// Frees memory of its own that holds constant values nothing reads any more (folded outputs,
  /// densified constants): `data` becomes nil until the next allocation computes or rebuilds them.
  /// Returns the bytes freed.
  func releaseOwnedValues() -> Int {
    guard let ownedMemory else { return 0 }
    ownedMemory.deallocate()
    self.ownedMemory = nil
    data = nil
    return ownedMemory.count
  }

  /// Gives a released model constant with ``rebuildValues`` its values again; does nothing otherwise.
  func rebuildReleasedValues() throws {
    guard isModelConstant, data == nil, let rebuildValues else { return }
    allocateOwnedMemory()
    try rebuildValues(data.unsafelyUnwrapped)
  }

  /// A one-line description: `name FLOAT32[1,224,224,3]`.
  public var summary: String {
    "\(name) \(type.name)[\(shape.map(String.init).joined(separator: ","))]"
  }
}
