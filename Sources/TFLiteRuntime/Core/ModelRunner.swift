import TFLiteFormat
import TFLiteLinearAlgebra

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Options of a ``ModelRunner``.
public struct RunnerOptions: Sendable, Hashable {
  /// Threads the kernels may use (at least 1).
  public var threadCount: Int
  /// How integer kernels round when they rescale by a quantized multiplier. The default,
  /// ``RoundingPolicy/doubleRounding``, reproduces LiteRT's reference kernels bit for bit.
  public var roundingPolicy: RoundingPolicy
  /// The most bytes one block of memory the runner allocates may have (a subgraph's activation
  /// arena, a tensor with memory of its own, a node's scratch). A model whose shapes need more is
  /// refused with ``RuntimeError/memoryLimitExceeded(what:byteCount:limit:)`` instead of
  /// exhausting the machine's memory. The default is the machine's physical memory.
  public var memoryLimit: Int
  /// The most iterations one WHILE operator may run in one invoke; nil (the default, as in
  /// LiteRT) for no limit. A loop that goes on longer makes `invoke()` throw, so that a model whose
  /// loop never ends (or whose input asks for billions of iterations) cannot hang the caller.
  public var maximumLoopIterations: Int?
  /// Whether float GEMMs (convolutions, FULLY_CONNECTED, BATCH_MATMUL) and 8-bit CONV_2D and
  /// FULLY_CONNECTED may run kernels generated at run time for the CPU's AVX2+FMA, AVX-512 or VNNI
  /// units (the default). They are used only where the CPU, OS and platform allow, and never when
  /// the environment variable `SWIFTTFLITE_JIT` is `0`.
  public var usesGeneratedKernels: Bool
  /// Which kernels run the nodes: ``KernelSet/optimized`` (the default) or the plain
  /// ``KernelSet/reference`` kernels where the runtime has them.
  public var kernels: KernelSet
  /// Whether node pairs may run as one fused kernel (``OperatorFusion``; the default). Tools that
  /// observe every node's outputs (``SubgraphExecutor/nodeObserver``) turn it off, so that every
  /// tensor of the model is computed.
  package var fusesOperators = true

  /// Whether folded and densified constants are freed once every node reading them has copied
  /// them (the default; peak memory). Off, and whenever ``fusesOperators`` is off (tools that
  /// observe every tensor), they stay readable until the next allocation.
  package var releasesCopiedConstants = true

  /// Creates options; `threadCount` below 1 means 1, `memoryLimit` nil means ``defaultMemoryLimit``.
  public init(
    threadCount: Int = 1, roundingPolicy: RoundingPolicy = .doubleRounding, memoryLimit: Int? = nil,
    maximumLoopIterations: Int? = nil, usesGeneratedKernels: Bool = true,
    kernels: KernelSet = .optimized
  ) {
    self.threadCount = max(threadCount, 1)
    self.roundingPolicy = roundingPolicy
    self.memoryLimit = max(memoryLimit ?? Self.defaultMemoryLimit, 0)
    self.maximumLoopIterations = maximumLoopIterations.map { max($0, 0) }
    self.usesGeneratedKernels = usesGeneratedKernels
    self.kernels = kernels
  }

  /// The machine's physical memory in bytes, or 16 GiB where it cannot be read.
  public static let defaultMemoryLimit: Int = {
    let pages = sysconf(Int32(_SC_PHYS_PAGES))
    let pageSize = sysconf(Int32(_SC_PAGESIZE))
    guard pages > 0, pageSize > 0 else { return 16 << 30 }
    let (bytes, overflow) = pages.multipliedReportingOverflow(by: pageSize)
    return overflow ? Int.max : bytes
  }()
}

/// A named entry point of a model (a signature def): its subgraph and named inputs and outputs.
public struct Signature: Sendable, Hashable {
  /// The signature key (`serving_default`).
  public var key: String
  /// The subgraph the signature runs.
  public var subgraphIndex: Int
  /// Input names with their tensor indices in the subgraph, in model order.
  public var inputs: [(name: String, tensorIndex: Int)]
  /// Output names with their tensor indices in the subgraph, in model order.
  public var outputs: [(name: String, tensorIndex: Int)]

  /// Two signatures are equal when every field is.
  public static func == (left: Self, right: Self) -> Bool {
    left.key == right.key && left.subgraphIndex == right.subgraphIndex
      && left.inputs.elementsEqual(right.inputs, by: ==) && left.outputs.elementsEqual(right.outputs, by: ==)
  }

  /// Hashes the key and subgraph.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(key)
    hasher.combine(subgraphIndex)
  }
}

/// A loaded model ready to run: it owns the model bytes and one executor per subgraph in use.
///
/// Not thread-safe: use one runner from one thread at a time.
public final class ModelRunner {
  /// The verified model.
  public let model: TFLiteModel
  /// The options the runner was created with.
  public let options: RunnerOptions
  /// The model's signatures, in model order.
  public let signatures: [Signature]
  /// The executors built so far, by subgraph index (an array, not an `Int`-keyed dictionary: the
  /// first `Int: Hashable` use of a process costs a scan of every protocol conformance record).
  private var executors: [SubgraphExecutor?]
  /// Resource variables and initialization status, shared by every subgraph.
  let resources: ModelResources

  /// Builds a runner with the executors of the primary subgraph (subgraph 0) and of every subgraph
  /// its control flow calls (IF branches, WHILE condition and body, CALL_ONCE initialization), so
  /// that every operator the runtime cannot run in them is reported here.
  public convenience init(model: TFLiteModel, options: RunnerOptions = RunnerOptions()) throws {
    try self.init(model: model, options: options, includingSignatureSubgraphs: false)
  }

  /// Builds a runner as ``init(model:options:)`` does; with `includingSignatureSubgraphs` also the
  /// executors of every signature's subgraph and what they call (otherwise built on first use),
  /// so that the unsupported operators of every entry point are reported at once.
  init(model: TFLiteModel, options: RunnerOptions, includingSignatureSubgraphs: Bool) throws {
    self.model = model
    self.options = options
    resources = ModelResources(
      maximumLoopIterations: options.maximumLoopIterations, usesGeneratedKernels: options.usesGeneratedKernels)
    let subgraphCount = model.model.subgraphs.count
    executors = Array(repeating: nil, count: subgraphCount)
    // `ModelValidator` checked every subgraph and tensor index when the model was read.
    signatures = model.model.signatureDefs.map { definition in
      Signature(
        key: definition.signatureKey ?? "", subgraphIndex: Int(definition.subgraphIndex),
        inputs: definition.inputs.map { ($0.name ?? "", Int($0.tensorIndex)) },
        outputs: definition.outputs.map { ($0.name ?? "", Int($0.tensorIndex)) })
    }
    var unsupported: [UnsupportedOperator] = []
    var pending = [0]
    if includingSignatureSubgraphs {
      // Reversed, so that the stack lowers subgraph 0 first and the signatures in model order.
      pending += signatures.map(\.subgraphIndex).filter { $0 != 0 }.reversed()
    }
    var reached = Array(repeating: false, count: subgraphCount)
    for index in pending where reached.indices.contains(index) { reached[index] = true }
    while let index = pending.popLast() {
      do {
        _ = try subgraph(at: index)
      } catch RuntimeError.unsupportedOperators(let list) {
        unsupported += list
      }
      for operation in model.model.subgraphs[index].operators {
        for called in Self.calledSubgraphs(operation.builtinOptions)
        where (0..<subgraphCount).contains(called) && !reached[called] {
          reached[called] = true
          pending.append(called)
        }
      }
    }
    guard unsupported.isEmpty else {
      throw RuntimeError.unsupportedOperators(unsupported.sorted { ($0.subgraph, $0.node) < ($1.subgraph, $1.node) })
    }
  }

  /// The subgraphs an operator with `options` calls.
  private static func calledSubgraphs(_ options: BuiltinOptions) -> [Int] {
    switch options {
    case .ifOptions(let branches): [Int(branches.thenSubgraphIndex), Int(branches.elseSubgraphIndex)]
    case .whileOptions(let loop): [Int(loop.condSubgraphIndex), Int(loop.bodySubgraphIndex)]
    case .callOnceOptions(let call): [Int(call.initSubgraphIndex)]
    default: []
    }
  }

  /// The executor of subgraph `index`, built on first use.
  public func subgraph(at index: Int) throws -> SubgraphExecutor {
    if executors.indices.contains(index), let executor = executors[index] { return executor }
    let executor = try SubgraphExecutor(
      model: model, subgraphIndex: index, threadCount: options.threadCount, roundingPolicy: options.roundingPolicy,
      memoryLimit: options.memoryLimit, kernelSet: options.kernels, fusesOperators: options.fusesOperators,
      releasesCopiedConstants: options.releasesCopiedConstants && options.fusesOperators, resources: resources,
      subgraphProvider: { [weak self] index in
        guard let self else { throw RuntimeError.invalidModel("the model runner was released") }
        return try self.subgraph(at: index)
      })
    executors[index] = executor
    return executor
  }

  /// Sets the variable tensors of every subgraph back to their initial values, as LiteRT's
  /// `Interpreter::ResetVariableTensors` does (``SubgraphExecutor/resetVariableTensors()``).
  /// Resource variables (VAR_HANDLE) keep their values, as in LiteRT.
  public func resetVariableTensors() {
    for case let executor? in executors { executor.resetVariableTensors() }
  }

  /// The primary subgraph's executor.
  public var primary: SubgraphExecutor {
    // Built in `init`, so always present.
    executors[0].unsafelyUnwrapped
  }
}
