// Node pairs the executor runs as one kernel. EfficientNet-style networks compute SiLU as
// LOGISTIC(x) followed by MUL(x, LOGISTIC(x)): run separately, the pair writes the logistic out and
// reads it and x back; fused, x is read once and the product written once, with the same float
// operations in the same order (bit-identical results). Lowering finds the pairs once per subgraph;
// the fused kernel (`SigmoidLinearUnitKernel`) lives with the activations.

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
    for (consumer, node) in nodes.enumerated() where node.op == .builtin(.mul) && node.inputs.count == 2 {
      guard let first = node.inputs[0], let second = node.inputs[1], let output = node.outputs.first else { continue }
      for (gate, x) in [(first, second), (second, first)] {
        guard let producer = producers[gate.index], producer < consumer else { continue }
        let logistic = nodes[producer]
        guard logistic.op == .builtin(.logistic), logistic.inputs.count == 1, logistic.inputs[0] === x,
          readers[gate.index] == 1, !keptTensors.contains(gate.index), !gate.isVariable,
          [x, gate, output].allSatisfy({ $0.type == .float32 && $0.quantization == nil }),
          let kernel = try? SigmoidLinearUnitKernel(node: Node(
            index: node.index, op: .builtin(.mul), version: node.version, inputs: [x], outputs: [output],
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
