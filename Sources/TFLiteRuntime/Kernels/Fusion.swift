// Node pairs the executor runs as one kernel. EfficientNet-style networks compute SiLU as
// LOGISTIC(x) followed by MUL(x, LOGISTIC(x)): run separately, the pair writes the logistic out and
// reads it and x back; fused, x is read once and the product written once, with the same float
// operations in the same order (bit-identical results).

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

  /// The fusions found in `nodes` (execution order). `keptTensors` are tensor indices whose values
  /// must stay observable (the subgraph's outputs): a producer writing one is never fused away.
  static func find(in nodes: [Node], keptTensors: Set<Int>) -> [OperatorFusion] {
    var readers: [Int: Int] = [:]
    for node in nodes {
      for case let input? in node.inputs { readers[input.index, default: 0] += 1 }
    }
    var producers: [Int: Int] = [:]
    for (position, node) in nodes.enumerated() {
      for output in node.outputs { producers[output.index] = position }
    }
    var fusions: [OperatorFusion] = []
    for (consumer, node) in nodes.enumerated() where node.opName == "MUL" && node.inputs.count == 2 {
      guard let first = node.inputs[0], let second = node.inputs[1], let output = node.outputs.first else { continue }
      for (gate, x) in [(first, second), (second, first)] {
        guard let producer = producers[gate.index], producer < consumer else { continue }
        let logistic = nodes[producer]
        guard logistic.opName == "LOGISTIC", logistic.inputs.count == 1, logistic.inputs[0] === x,
          readers[gate.index] == 1, !keptTensors.contains(gate.index), !gate.isVariable,
          [x, gate, output].allSatisfy({ $0.type == .float32 && $0.quantization == nil && $0.sparsity == nil }),
          let kernel = try? SigmoidLinearUnitKernel(node: Node(
            index: node.index, opName: "MUL", version: node.version, inputs: [x], outputs: [output],
            options: node.options, customOptions: node.customOptions, subgraph: node.subgraph,
            resources: node.resources))
        else { continue }
        fusions.append(OperatorFusion(producer: producer, consumer: consumer, kernel: kernel))
        break
      }
    }
    return fusions
  }
}

/// x · logistic(x) (SiLU, swish) with the MUL's fused activation, for a node whose single input
/// is x: what LOGISTIC followed by MUL computes, in one pass.
final class SigmoidLinearUnitKernel: Kernel {
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let activation: ActivationRange<Float>

  init(node: Node) throws {
    try node.expect(inputs: 1, outputs: 1)
    input = try node.input(0)
    output = try node.output(0)
    _ = try commonElementType([input, output], allowed: [.float32], operatorName: "MUL")
    activation = try ActivationRange<Float>(Multiplication.fusedActivation(in: node.options))
  }

  func prepare(_ context: inout PrepareContext) throws {
    output.shape = input.shape
  }

  func eval(_ context: EvalContext) throws {
    let source = try tensorData(input).assumingMemoryBound(to: Float.self)
    let destination = try tensorData(output).assumingMemoryBound(to: Float.self)
    let operation = SigmoidLinearUnit(
      activation: activation, clamps: activation.lower > -.infinity || activation.upper < .infinity)
    context.forEachChunk(of: output.elementCount, minimumChunk: costlyElementwiseChunk) { range in
      UnaryDriver.run(operation, input: source, output: destination, range: range)
    }
  }
}

/// x · logistic(x), clamped: the logistic rounded to float first, as the separate LOGISTIC writes it.
struct SigmoidLinearUnit: UnaryLanewiseOperation {
  /// The MUL's fused activation.
  let activation: ActivationRange<Float>
  /// False for an unbounded range (activation NONE), whose clamp changes nothing.
  let clamps: Bool

  @inline(__always)
  func callAsFunction(_ x: SIMD16<Float>) -> SIMD16<Float> {
    let product = x * VectorMath.logistic(x)
    return clamps ? activation.clamp(product) : product
  }
}
