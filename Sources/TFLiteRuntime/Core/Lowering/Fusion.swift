// Node pairs the executor runs as one kernel. Lowering finds the pairs once per subgraph:
// - SiLU: EfficientNet-style networks compute it as LOGISTIC(x) followed by MUL(x, LOGISTIC(x)):
//   run separately, the pair writes the logistic out and reads it and x back; fused, x is read once
//   and the product written once, with the same float operations in the same order (bit-identical
//   results). The fused kernel (`SigmoidLinearUnitKernel`) lives with the activations. On int8 and
//   uint8 (optimized kernels only) the pair is one table of the input byte
//   (`IntegerSigmoidLinearUnitKernel`), filled at prepare by the two operators' own kernels.
// - Activation folds: a float RELU, RELU6 or RELU_N1_TO_1 whose input is the only output of an ADD,
//   SUB, MUL, DIV, CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED without a fused activation (as
//   MediaPipe's networks have after their residual ADDs) becomes that node's fused activation: the
//   producer's kernel, built with the RELU's range, writes the RELU's output in one pass. The fused
//   clamp and the separate RELU clamp the same float values to the same range (identical results
//   for every non-NaN value). 8-bit RELUs are left alone: their output may be requantized.
// - PAD folds: a float PAD (or PADV2 with constant 0) of height and width only, whose output only a
//   float DEPTHWISE_CONV_2D with VALID padding reads (Keras's ZeroPadding2D before each stride-2
//   depthwise layer: MobileNetV2 pads a 112×112×96 tensor), becomes that convolution's explicit
//   padding: the convolution reads the PAD's input and skips the padding taps instead of reading
//   zeros, so the padded copy is never written. The sums differ only by the zero products left out
//   (the same values; a zero result may change sign, and a non-finite weight no longer meets a
//   padding zero).
// - PRELU folds: a float PRELU whose input is the only output of a float CONV_2D (one group, no
//   fused activation) and whose α is constant (or a DEQUANTIZE of a constant, which prepare folds
//   before the PRELU's position) with one value per output channel ([C], [1, C],
//   [1, 1, C] or [1, 1, 1, C]) becomes that convolution's epilogue: the GEMM computes
//   `x < 0 ? x · α : x` on each result after the clamp to the finite range, as it stores it, and
//   the PRELU's separate pass over the tensor is gone (iris_landmark has 19 of them). The values
//   are TFLite's PRELU of the clamped convolution output; the separate generated PRELU kernel may
//   turn a −0 convolution output into +0, the fold keeps −0 as TFLite does.

import TFLiteFormat

/// A node whose work another node's fused kernel does: the executor prepares it (its output
/// keeps its shape) but does not run it, and runs `kernel` in place of the consumer's kernel.
struct OperatorFusion {
  /// Position of the node that is not run.
  let producer: Int
  /// Position of the node whose kernel is replaced.
  let consumer: Int
  /// The kernel that computes the consumer's output from the producer's inputs.
  let kernel: any Kernel
  /// The kernel left at the producer's position in place of its own, which must not be prepared
  /// (it would pack the weights the fused kernel packs again); nil keeps the producer's kernel.
  var producerKernel: (any Kernel)? = nil
  /// Tensors the fused kernel reads that the consumer node does not list (the producer's inputs):
  /// the memory planner keeps them live up to the consumer.
  var additionalReads: [RuntimeTensor] = []

  /// The fusions found in `nodes` (execution order). `keptTensors` are tensor indices whose values
  /// must stay observable (the subgraph's outputs): a producer writing one is never fused away.
  /// Activation folds and 8-bit SiLU fusions happen only for the optimized kernels (`kernelSet`),
  /// float SiLU fusions for both. Readers, producers and fused nodes are counted in arrays by
  /// index, not in `Int`-keyed dictionaries or sets: the first `Int: Hashable` use of a process
  /// costs a scan of every protocol conformance record.
  static func find(in nodes: [Node], keptTensors: [Int], kernelSet: KernelSet = .optimized) -> [OperatorFusion] {
    var tensorCount = 0
    for node in nodes {
      for case let input? in node.inputs { tensorCount = max(tensorCount, input.index + 1) }
      for output in node.outputs { tensorCount = max(tensorCount, output.index + 1) }
    }
    var readers = [Int](repeating: 0, count: tensorCount)
    for node in nodes {
      for case let input? in node.inputs { readers[input.index] += 1 }
    }
    var producers = [Int?](repeating: nil, count: tensorCount)
    for (position, node) in nodes.enumerated() {
      for output in node.outputs { producers[output.index] = position }
    }
    let sigmoidLinearUnits = sigmoidLinearUnitFusions(
      in: nodes, keptTensors: keptTensors, readers: readers, producers: producers, kernelSet: kernelSet)
    guard kernelSet == .optimized else { return sigmoidLinearUnits }
    var fused = [Bool](repeating: false, count: nodes.count)
    for fusion in sigmoidLinearUnits {
      fused[fusion.producer] = true
      fused[fusion.consumer] = true
    }
    let folds = activationFolds(in: nodes, keptTensors: keptTensors, readers: readers, producers: producers, excluding: fused)
    for fusion in folds {
      fused[fusion.producer] = true
      fused[fusion.consumer] = true
    }
    let preluFolds = preluFolds(in: nodes, keptTensors: keptTensors, readers: readers, producers: producers, excluding: fused)
    for fusion in preluFolds {
      fused[fusion.producer] = true
      fused[fusion.consumer] = true
    }
    return sigmoidLinearUnits + folds + preluFolds
      + padFolds(in: nodes, keptTensors: keptTensors, readers: readers, producers: producers, excluding: fused)
  }

  /// A float DEPTHWISE_CONV_2D with VALID padding reading the only output of a zero PAD of height
  /// and width: the convolution's kernel over the PAD's input with that padding.
  private static func padFolds(
    in nodes: [Node], keptTensors: [Int], readers: [Int], producers: [Int?], excluding fused: [Bool]
  ) -> [OperatorFusion] {
    var fusions: [OperatorFusion] = []
    for (consumer, node) in nodes.enumerated() where !fused[consumer] && node.op == .builtin(.depthwiseConv2d) {
      guard case .depthwiseConv2DOptions(let options) = node.options, options.padding == .valid,
        let padded = node.inputs.first ?? nil, let producer = producers[padded.index], producer < consumer,
        !fused[producer], readers[padded.index] == 1, !keptTensors.contains(padded.index), !padded.isVariable,
        let padding = zeroSpatialPadding(nodes[producer]), let source = nodes[producer].inputs[0],
        [source, padded].allSatisfy({ $0.type == .float32 && $0.quantization == nil }),
        node.inputs.count > 1, let filter = node.inputs[1], filter.type == .float32, filter.quantization == nil
      else { continue }
      let foldedNode = Node(
        index: node.index, op: node.op, version: node.version, inputs: [source] + node.inputs.dropFirst(),
        outputs: node.outputs, options: node.options, customOptions: node.customOptions, subgraph: node.subgraph,
        resources: node.resources)
      guard let kernel = try? DepthwiseConv2DKernel(node: foldedNode, explicitPadding: padding) else { continue }
      fusions.append(OperatorFusion(
        producer: producer, consumer: consumer, kernel: kernel,
        producerKernel: FoldedNodeKernel(consumerIndex: node.index), additionalReads: [source]))
    }
    return fusions
  }

  /// A float PRELU with a constant per-channel α reading the only output of a one-group float
  /// CONV_2D without fused activation: the convolution's kernel writing the PRELU's output with α
  /// as its negative slopes.
  private static func preluFolds(
    in nodes: [Node], keptTensors: [Int], readers: [Int], producers: [Int?], excluding fused: [Bool]
  ) -> [OperatorFusion] {
    var fusions: [OperatorFusion] = []
    for (consumer, node) in nodes.enumerated() where !fused[consumer] && node.op == .builtin(.prelu) {
      guard node.inputs.count == 2, node.outputs.count == 1, let intermediate = node.inputs[0], let alpha = node.inputs[1],
        let output = node.outputs.first, let producer = producers[intermediate.index], producer < consumer,
        !fused[producer]
      else { continue }
      let source = nodes[producer]
      guard source.op == .builtin(.conv2d), source.outputs.count == 1, source.outputs[0] === intermediate,
        readers[intermediate.index] == 1, !keptTensors.contains(intermediate.index), !intermediate.isVariable,
        case .conv2DOptions(let options) = source.options, options.fusedActivationFunction == .none,
        source.inputs.count >= 2, let input = source.inputs[0], let filter = source.inputs[1],
        [input, filter, intermediate, output, alpha].allSatisfy({ $0.type == .float32 && $0.quantization == nil }),
        filter.shape.count == 4, input.shape.count == 4, input.shape[3] == filter.shape[3],
        intermediate.shape == output.shape, !alpha.isVariable,
        alpha.isConstant || isDequantizedConstant(alpha, producers: producers, nodes: nodes),
        isPerChannel(alpha.shape, channels: filter.shape[0])
      else { continue }
      let foldedNode = Node(
        index: source.index, op: source.op, version: source.version, inputs: source.inputs, outputs: [output],
        options: source.options, customOptions: source.customOptions, subgraph: source.subgraph,
        resources: source.resources)
      guard let kernel = try? Conv2DKernel(node: foldedNode, negativeSlopes: alpha) else { continue }
      fusions.append(OperatorFusion(
        producer: producer, consumer: consumer, kernel: folding(kernel, activation: node.opName, into: source.opName),
        producerKernel: FoldedNodeKernel(consumerIndex: node.index),
        additionalReads: source.inputs.compactMap { $0 }))
    }
    return fusions
  }

  /// True for the output of a DEQUANTIZE of a constant (MediaPipe's float16 weights): the
  /// executor folds it into a constant at prepare, before the node that reads it.
  private static func isDequantizedConstant(_ tensor: RuntimeTensor, producers: [Int?], nodes: [Node]) -> Bool {
    guard let producer = producers[tensor.index] else { return false }
    let node = nodes[producer]
    return node.op == .builtin(.dequantize) && node.inputs.count == 1 && node.inputs[0]?.isConstant == true
  }

  /// True for the shapes of one value per channel of `channels`: [C], [1, C], [1, 1, C], [1, 1, 1, C].
  private static func isPerChannel(_ shape: [Int], channels: Int) -> Bool {
    (1...4).contains(shape.count) && shape.last == channels && shape.dropLast().allSatisfy { $0 == 1 }
  }

  /// The height and width padding of a PAD, or PADV2 with a constant 0, of a rank-4 tensor by
  /// constant amounts that leave its batch and channel axes alone; nil for any other node.
  private static func zeroSpatialPadding(_ pad: Node) -> SpatialPadding? {
    guard pad.op == .builtin(.pad) && pad.inputs.count == 2 || pad.op == .builtin(.padv2) && pad.inputs.count == 3,
      pad.outputs.count == 1, pad.inputs[0] != nil, let amounts = pad.inputs[1], amounts.isConstant,
      let paddings = try? constantPaddings(amounts, rank: 4, op: pad.opName),
      paddings.before[0] == 0, paddings.after[0] == 0, paddings.before[3] == 0, paddings.after[3] == 0
    else { return nil }
    if pad.inputs.count == 3 {
      guard let value = pad.inputs[2], value.isConstant, value.type == .float32, value.elementCount == 1,
        let data = value.data, data.load(as: Float.self) == 0
      else { return nil }
    }
    return SpatialPadding(
      top: paddings.before[1], bottom: paddings.after[1], left: paddings.before[2], right: paddings.after[2])
  }

  /// LOGISTIC(x) read only by MUL(x, LOGISTIC(x)): one `SigmoidLinearUnitKernel`.
  private static func sigmoidLinearUnitFusions(
    in nodes: [Node], keptTensors: [Int], readers: [Int], producers: [Int?], kernelSet: KernelSet
  ) -> [OperatorFusion] {
    var fusions: [OperatorFusion] = []
    for (consumer, node) in nodes.enumerated() where node.op == .builtin(.mul) && node.inputs.count == 2 {
      guard let first = node.inputs[0], let second = node.inputs[1], let output = node.outputs.first else { continue }
      for (gate, x) in [(first, second), (second, first)] {
        guard let producer = producers[gate.index], producer < consumer else { continue }
        let logistic = nodes[producer]
        guard logistic.op == .builtin(.logistic), logistic.inputs.count == 1, logistic.inputs[0] === x,
          readers[gate.index] == 1, !keptTensors.contains(gate.index), !gate.isVariable,
          let kernel = sigmoidLinearUnitKernel(
            logistic: logistic, multiply: node, x: x, gate: gate, output: output, kernelSet: kernelSet)
        else { continue }
        fusions.append(OperatorFusion(producer: producer, consumer: consumer, kernel: kernel))
        break
      }
    }
    return fusions
  }

  /// The fused kernel of `logistic` and `multiply`: float (`SigmoidLinearUnitKernel`), or 8-bit
  /// (`IntegerSigmoidLinearUnitKernel`, one table of the input byte, optimized kernels only); nil
  /// for other types.
  private static func sigmoidLinearUnitKernel(
    logistic: Node, multiply: Node, x: RuntimeTensor, gate: RuntimeTensor, output: RuntimeTensor, kernelSet: KernelSet
  ) -> (any Kernel)? {
    let tensors = [x, gate, output]
    if tensors.allSatisfy({ $0.type == .float32 && $0.quantization == nil }) {
      return try? SigmoidLinearUnitKernel(node: Node(
        index: multiply.index, op: .builtin(.mul), version: multiply.version, inputs: [x], outputs: [output],
        options: multiply.options, customOptions: multiply.customOptions, subgraph: multiply.subgraph,
        resources: multiply.resources))
    }
    guard kernelSet == .optimized, tensors.allSatisfy({ $0.type == x.type && $0.quantization != nil }) else { return nil }
    return try? IntegerSigmoidLinearUnitKernel(logistic: logistic, multiply: multiply)
  }

  /// A float RELU-family node reading the only output of a node that supports the matching fused
  /// activation and has none: the producer's kernel built with that activation and the RELU's output.
  private static func activationFolds(
    in nodes: [Node], keptTensors: [Int], readers: [Int], producers: [Int?], excluding fused: [Bool]
  ) -> [OperatorFusion] {
    var fusions: [OperatorFusion] = []
    for (consumer, node) in nodes.enumerated() where !fused[consumer] {
      guard let activation = foldableActivation(of: node.op), node.inputs.count == 1, node.outputs.count == 1,
        let intermediate = node.inputs[0], let output = node.outputs.first,
        let producer = producers[intermediate.index], producer < consumer, !fused[producer]
      else { continue }
      let source = nodes[producer]
      guard source.outputs.count == 1, source.outputs[0] === intermediate, readers[intermediate.index] == 1,
        !keptTensors.contains(intermediate.index), !intermediate.isVariable,
        [intermediate, output].allSatisfy({ $0.type == .float32 && $0.quantization == nil }),
        let options = options(source.options, withFusedActivation: activation)
      else { continue }
      let foldedNode = Node(
        index: source.index, op: source.op, version: source.version, inputs: source.inputs, outputs: [output],
        options: options, customOptions: source.customOptions, subgraph: source.subgraph, resources: source.resources)
      guard let kernel = try? KernelDispatch.makeKernel(for: foldedNode) else { continue }
      fusions.append(OperatorFusion(
        producer: producer, consumer: consumer,
        kernel: folding(kernel, activation: node.opName, into: source.opName),
        producerKernel: FoldedNodeKernel(consumerIndex: node.index),
        additionalReads: source.inputs.compactMap { $0 }))
    }
    return fusions
  }

  /// The fused activation a RELU-family operator amounts to (RELU_0_TO_1 has none).
  private static func foldableActivation(of op: OperatorKind) -> ActivationFunctionType? {
    switch op {
    case .builtin(.relu): .relu
    case .builtin(.relu6): .relu6
    case .builtin(.reluN1To1): .reluN1To1
    default: nil
    }
  }

  /// `options` with `activation` as fused activation, when they are the options of an operator
  /// with a fused activation that is NONE now.
  private static func options(_ options: BuiltinOptions, withFusedActivation activation: ActivationFunctionType) -> BuiltinOptions? {
    func replaced<Options>(_ options: Options, _ field: WritableKeyPath<Options, ActivationFunctionType>) -> Options? {
      guard options[keyPath: field] == .none else { return nil }
      var folded = options
      folded[keyPath: field] = activation
      return folded
    }
    switch options {
    case .addOptions(let add): return replaced(add, \.fusedActivationFunction).map { .addOptions($0) }
    case .subOptions(let sub): return replaced(sub, \.fusedActivationFunction).map { .subOptions($0) }
    case .mulOptions(let mul): return replaced(mul, \.fusedActivationFunction).map { .mulOptions($0) }
    case .divOptions(let div): return replaced(div, \.fusedActivationFunction).map { .divOptions($0) }
    case .conv2DOptions(let conv): return replaced(conv, \.fusedActivationFunction).map { .conv2DOptions($0) }
    case .depthwiseConv2DOptions(let depthwise):
      return replaced(depthwise, \.fusedActivationFunction).map { .depthwiseConv2DOptions($0) }
    case .fullyConnectedOptions(let fullyConnected):
      return replaced(fullyConnected, \.fusedActivationFunction).map { .fullyConnectedOptions($0) }
    default: return nil
    }
  }

  /// `kernel` wrapped so that its description names the fold (the wrapper keeps its in-place property).
  private static func folding<Producer: Kernel>(_ kernel: Producer, activation: String, into producer: String) -> any Kernel {
    FoldedActivationKernel(kernel, note: "\(activation) folded into \(producer)")
  }
}

/// The kernel of a node with a RELU-family activation folded in: the producer's own kernel, built
/// with the activation and the RELU's output, and described as such.
final class FoldedActivationKernel<Producer: Kernel>: Kernel {
  /// As the producer's kernel: its output may share an input's memory when the producer's may.
  static var writesOutputInPlace: Bool { Producer.writesOutputInPlace }
  private let producer: Producer
  private let note: String

  /// Wraps `producer`; `note` says what was folded (`RELU folded into ADD`).
  init(_ producer: Producer, note: String) {
    self.producer = producer
    self.note = note
  }

  /// The producer's kernel for `node`, a node that already carries the folded activation.
  init(node: Node) throws {
    producer = try Producer(node: node)
    note = "\(node.opName) with its fused activation"
  }

  func prepare(_ context: inout PrepareContext) throws { try producer.prepare(&context) }

  func eval(_ context: EvalContext) throws { try producer.eval(context) }

  var kernelDescription: String? {
    "\(producer.kernelDescription ?? KernelDescription.swiftLevel), \(note)"
  }
}

/// What stands at the position of a node whose whole work a later node's kernel does (the
/// producer of a folded activation): it prepares and computes nothing, so the weights the later
/// kernel packs are not packed twice.
final class FoldedNodeKernel: Kernel {
  /// Index of the node whose kernel does the work.
  private let consumerIndex: Int

  /// Stands for a node folded into node `consumerIndex`.
  init(consumerIndex: Int) { self.consumerIndex = consumerIndex }

  /// Refused: this kernel stands only for nodes the lowering folds.
  init(node: Node) throws { throw KernelError.invalid("node \(node.index) is not folded into another node") }

  func prepare(_ context: inout PrepareContext) throws {}

  func eval(_ context: EvalContext) throws {}

  var kernelDescription: String? { "computed by node \(consumerIndex)'s kernel" }
}
