import TFLiteFormat
import TFLiteLinearAlgebra

/// The operator of one graph node as a kernel sees it when it is built.
struct Node {
  /// Index of the node in its subgraph's execution order.
  let index: Int
  /// The operator, resolved from the model's operator code.
  let op: OperatorKind
  /// The operator version recorded in the model.
  let version: Int
  /// Input operands; nil where an optional operand is absent (index −1 in the model).
  let inputs: [RuntimeTensor?]
  /// Output operands.
  let outputs: [RuntimeTensor]
  /// The decoded builtin options.
  let options: BuiltinOptions
  /// The custom options bytes (a FlexBuffer for most custom operators), empty when there are none.
  let customOptions: UnsafeRawBufferPointer
  /// Returns the executor of another subgraph of the model (for control-flow operators).
  let subgraph: (Int) throws -> SubgraphExecutor
  /// What the subgraphs of the model share: resource variables and initialization status.
  var resources = ModelResources()

  /// The operator's schema name (`CONV_2D`) or, for a custom operator, its custom code (for messages).
  var opName: String { op.description }

  /// Input `position`, which must be present.
  func input(_ position: Int) throws -> RuntimeTensor {
    guard position >= 0, position < inputs.count, let tensor = inputs[position] else {
      throw KernelError.invalid("expected input \(position), the node has \(inputs.count) inputs")
    }
    return tensor
  }

  /// Input `position`, or nil when it is absent or beyond the inputs given.
  func optionalInput(_ position: Int) -> RuntimeTensor? {
    position >= 0 && position < inputs.count ? inputs[position] : nil
  }

  /// Output `position`, which must exist.
  func output(_ position: Int) throws -> RuntimeTensor {
    guard position >= 0, position < outputs.count else {
      throw KernelError.invalid("expected output \(position), the node has \(outputs.count) outputs")
    }
    return outputs[position]
  }

  /// The input and the output of a node that must have exactly one of each.
  func singleInputAndOutput() throws -> (input: RuntimeTensor, output: RuntimeTensor) {
    try expect(inputs: 1, outputs: 1)
    return (try input(0), try output(0))
  }

  /// The two inputs and the output of a node that must have exactly two inputs and one output.
  func twoInputsAndOutput() throws -> (RuntimeTensor, RuntimeTensor, output: RuntimeTensor) {
    try expect(inputs: 2, outputs: 1)
    return (try input(0), try input(1), try output(0))
  }

  /// Throws unless the node has between `inputs` and `maxInputs` inputs and exactly `outputs` outputs.
  func expect(inputs: Int, maxInputs: Int? = nil, outputs: Int) throws {
    let upper = maxInputs ?? inputs
    guard (inputs...upper).contains(self.inputs.count) else {
      let expected = upper == inputs ? "\(inputs)" : "\(inputs) to \(upper)"
      throw KernelError.invalid("expected \(expected) inputs, got \(self.inputs.count)")
    }
    guard self.outputs.count == outputs else {
      throw KernelError.invalid("expected \(outputs) outputs, got \(self.outputs.count)")
    }
  }
}

/// The implementation of one operator for one node.
///
/// A kernel is built once per node when the interpreter is created (`init(node:)`: check operand
/// counts and types, read options), prepared by every `allocateTensors()` (`prepare`: check shapes,
/// set output shapes, pack constant weights, request scratch memory) and run by every `invoke()`
/// (`eval`: compute the outputs without allocating).
protocol Kernel: AnyObject {
  /// Builds the kernel for `node`; throws ``KernelError/unsupported(_:)`` for variants the runtime does not run.
  init(node: Node) throws
  /// Validates shapes, sets the outputs' shapes and precomputes what `eval` needs.
  func prepare(_ context: inout PrepareContext) throws
  /// Computes the outputs from the inputs.
  func eval(_ context: EvalContext) throws
  /// True when the outputs depend only on the inputs' shapes, so the node can be computed at
  /// prepare time even when its inputs are not constant.
  static var dependsOnlyOnInputShapes: Bool { get }
  /// True for kernels whose effect is more than their outputs (variables, random numbers): they are
  /// never computed ahead at prepare time.
  static var hasSideEffects: Bool { get }
  /// True when the output may share the memory of an input of the same type and byte count: the
  /// kernel reads each input element no later than it writes the output element at the same
  /// place, and nothing else (element-wise operators). The planner then writes the output over an
  /// input that no later node reads, as LiteRT's arena planner does for its in-place operators.
  static var writesOutputInPlace: Bool { get }
  /// The route and instruction-set level `eval` runs, as chosen by the last `prepare`
  /// (`GEMM, generated AVX-512F`), for `tflite bench --verbose`; nil for kernels that always run
  /// their one Swift implementation.
  var kernelDescription: String? { get }
}

extension Kernel {
  /// Most kernels read their inputs' values.
  static var dependsOnlyOnInputShapes: Bool { false }
  /// Most kernels only compute their outputs.
  static var hasSideEffects: Bool { false }
  /// Most kernels need their output apart from their inputs.
  static var writesOutputInPlace: Bool { false }
  /// Most kernels have one implementation, in Swift.
  var kernelDescription: String? { nil }

  /// Calls `eval` on `kernel`, a kernel of this type passed unretained: the executor's per-node
  /// call, which costs no reference counting (the executor keeps its kernels alive).
  static func evalUnretained(_ kernel: Unmanaged<AnyObject>, _ context: EvalContext) throws {
    try Unmanaged<Self>.fromOpaque(kernel.toOpaque())._withUnsafeGuaranteedRef { try $0.eval(context) }
  }
}

/// What `prepare` may ask of the runtime.
struct PrepareContext {
  /// Threads the kernel may use in `eval`.
  let threadCount: Int
  /// True when the runtime prepares the node during `invoke()`: every input holds its value and
  /// `eval` follows right away, with nothing run in between.
  let preparesWhileRunning: Bool
  /// How integer kernels round when they rescale by a quantized multiplier (``RunnerOptions/roundingPolicy``).
  let roundingPolicy: RoundingPolicy
  /// The most bytes one block of memory may have (``RunnerOptions/memoryLimit``).
  let memoryLimit: Int
  /// Scratch bytes requested so far by this node.
  private(set) var scratchByteCount = 0
  /// Constant inputs this node copied into a layout of its own (packed weights) and does not read
  /// in `eval`: the runtime releases their model file pages after `prepare` (see ``releaseAfterCopying(_:)``).
  private(set) var copiedConstants: [RuntimeTensor] = []

  init(
    threadCount: Int, preparesWhileRunning: Bool = false, roundingPolicy: RoundingPolicy = .doubleRounding,
    memoryLimit: Int = RunnerOptions.defaultMemoryLimit
  ) {
    self.threadCount = threadCount
    self.preparesWhileRunning = preparesWhileRunning
    self.roundingPolicy = roundingPolicy
    self.memoryLimit = memoryLimit
  }

  /// Throws unless `count` items of `bytesEach` bytes fit in ``memoryLimit``. The runtime checks
  /// the outputs' sizes after `prepare`; a kernel that builds something as large as an output
  /// during `prepare` (a table per output element) checks its size first with this.
  func requireMemory(count: Int, bytesEach: Int, for what: @autoclosure () -> String) throws {
    let (bytes, overflow) = max(count, 0).multipliedReportingOverflow(by: max(bytesEach, 0))
    guard !overflow, bytes <= memoryLimit else {
      throw KernelError.invalid(
        "\(what()) needs \(overflow ? "more than \(Int.max)" : "\(bytes)") bytes, more than the memory limit of \(memoryLimit) bytes")
    }
  }

  /// Tells the runtime that `tensor`'s values were copied (packed) during this `prepare` and `eval`
  /// never reads them in place, so the pages of the memory-mapped model file that hold them can
  /// be released right away, keeping only one copy of the weights resident (issue #12's peak
  /// memory). Reading them again later stays correct: the pages come back from the file. A folded
  /// or densified constant, held in memory of its own, is freed once every node reading it has
  /// copied it or been folded, until the next allocation: `eval` must then never read it. Tensors
  /// that are not constant are ignored.
  mutating func releaseAfterCopying(_ tensor: RuntimeTensor?) {
    guard let tensor, tensor.isConstant else { return }
    copiedConstants.append(tensor)
  }

  /// Asks for `bytes` of scratch memory, 64-byte aligned, handed to `eval` as ``EvalContext/scratch``.
  /// Several requests add up; the node gets one block. A total beyond what can be counted is kept
  /// as `Int.max`, which the runtime then refuses.
  mutating func requestScratch(bytes: Int) {
    let aligned = bytes > Int.max - 63 ? Int.max : (max(bytes, 0) + 63) & ~63
    let (total, overflow) = scratchByteCount.addingReportingOverflow(aligned)
    scratchByteCount = overflow ? Int.max : total
  }
}

/// What `eval` gets from the runtime.
struct EvalContext {
  /// Threads the kernel may use.
  let threadCount: Int
  /// The scratch memory requested in `prepare` (64-byte aligned), or nil when none was requested.
  let scratch: UnsafeMutableRawPointer?

  /// Runs `body(i)` for every `i` in `0..<count` on at most ``threadCount`` threads (inline with one).
  func parallelFor(_ count: Int, _ body: (Int) -> Void) {
    ParallelWork.run(itemCount: count, threadCount: threadCount) { item, _ in body(item) }
  }
}

/// Why a kernel refused a node.
enum KernelError: Error, CustomStringConvertible {
  /// A valid model feature that this runtime does not run (a type, an option value, a dynamic shape).
  case unsupported(String)
  /// Operands or options that are not valid for the operator.
  case invalid(String)
  /// An output's shape depends on input values that are only known while running; the runtime
  /// then prepares this node and the ones after it during every `invoke()`.
  case needsInputValues(String)

  /// The reason.
  var description: String {
    switch self {
    case .unsupported(let reason): "unsupported: \(reason)"
    case .invalid(let reason): reason
    case .needsInputValues(let reason): "output shape depends on run-time values: \(reason)"
    }
  }
}
