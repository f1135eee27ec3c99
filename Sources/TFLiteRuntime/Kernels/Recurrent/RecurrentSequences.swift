// How the recurrent kernels walk their inputs: one step of `[batch, inputs]`, a sequence in one
// direction, or a sequence in both directions. The cell (an LSTM or an RNN direction) does the
// arithmetic of each step; these drivers check the layouts and set the output shapes.

/// One direction of a recurrent operator: its weights and states.
protocol RecurrentDirection {
  /// Values each step writes per batch row.
  var outputCount: Int { get }
  /// Checks the shapes for `batch` rows of `inputCount` values (and `auxiliaryCount` auxiliary
  /// ones, 0 without); returns the scratch bytes `run` needs.
  mutating func prepare(inputCount: Int, auxiliaryCount: Int, batch: Int) throws -> Int
  /// Runs every step of `layout` (from the last when `reversed`), writing each step's values into
  /// rows of `outputWidth` values of `output`, `outputOffset` values into each row.
  func run(
    input: UnsafePointer<Float>, auxiliary: UnsafePointer<Float>?, layout: SequenceLayout,
    output: UnsafeMutablePointer<Float>, outputWidth: Int, outputOffset: Int, reversed: Bool,
    scratch: UnsafeMutableRawPointer
  )
}

/// The scratch memory of a recurrent kernel (at least one byte is always requested).
private func recurrentScratch(_ context: EvalContext, op: String) throws -> UnsafeMutableRawPointer {
  guard let scratch = context.scratch else { throw KernelError.invalid("\(op) was not prepared") }
  return scratch
}

/// A recurrent operator with one direction: a single step (`timeMajor` nil, input `[batch, inputs]`)
/// or a sequence (`[time, batch, inputs]` or `[batch, time, inputs]`); the output replaces the
/// inputs by the direction's outputs.
struct UnidirectionalSequence<Direction: RecurrentDirection> {
  private let op: String
  private let input: RuntimeTensor
  private let output: RuntimeTensor
  private let timeMajor: Bool?
  private var direction: Direction
  private var layout = SequenceLayout(batch: 0)

  /// Input 0 and output 0 of `node`, which must be FLOAT32.
  init(node: Node, op: String, timeMajor: Bool?, direction: Direction) throws {
    self.op = op
    input = try node.input(0)
    output = try node.output(0)
    try FloatOperands.require([input, output], op: op)
    self.timeMajor = timeMajor
    self.direction = direction
  }

  /// Checks the shapes, sets the output's and requests the scratch.
  mutating func prepare(_ context: inout PrepareContext) throws {
    if let timeMajor {
      layout = try SequenceLayout(input, timeMajor: timeMajor, op: op)
    } else {
      try FloatOperands.requireRank(input, 2, op: op, role: "input")
      layout = SequenceLayout(batch: input.shape[0])
    }
    let scratch = try direction.prepare(inputCount: input.shape[input.shape.count - 1], auxiliaryCount: 0, batch: layout.batch)
    output.shape = input.shape.dropLast() + [direction.outputCount]
    context.requestScratch(bytes: max(scratch, 1))
  }

  /// Runs the direction over the whole input.
  func eval(_ context: EvalContext) throws {
    direction.run(
      input: input.pointer(as: Float.self), auxiliary: nil, layout: layout, output: output.pointer(as: Float.self),
      outputWidth: direction.outputCount, outputOffset: 0, reversed: false, scratch: try recurrentScratch(context, op: op))
  }
}

/// A recurrent operator over a sequence in both directions; the backward one starts at the
/// sequence's end. With merged outputs, output 0 holds the forward then the backward values of
/// each step; otherwise each direction has its output. An auxiliary input with auxiliary weights
/// feeds both directions; without weights it is the backward direction's input.
struct BidirectionalSequence<Direction: RecurrentDirection> {
  private let op: String
  private let input: RuntimeTensor
  private let auxiliary: RuntimeTensor?
  private let forwardOutput: RuntimeTensor
  private let backwardOutput: RuntimeTensor?
  private let timeMajor: Bool
  private let usesAuxiliaryWeights: Bool
  private var forward: Direction
  private var backward: Direction
  private var layout = SequenceLayout(batch: 0)

  /// Input 0, the auxiliary input at `auxiliaryPosition` and the outputs of `node` (FLOAT32).
  init(
    node: Node, op: String, auxiliaryPosition: Int, usesAuxiliaryWeights: Bool, mergesOutputs: Bool,
    timeMajor: Bool, forward: Direction, backward: Direction
  ) throws {
    self.op = op
    input = try node.input(0)
    auxiliary = node.optionalInput(auxiliaryPosition)
    forwardOutput = try node.output(0)
    backwardOutput = mergesOutputs ? nil : try node.output(1)
    try FloatOperands.require([input, auxiliary, forwardOutput, backwardOutput], op: op)
    self.timeMajor = timeMajor
    self.usesAuxiliaryWeights = usesAuxiliaryWeights
    self.forward = forward
    self.backward = backward
  }

  /// The backward direction's input.
  private var backwardInput: RuntimeTensor { usesAuxiliaryWeights ? input : auxiliary ?? input }

  /// Checks the shapes, sets the outputs' and requests the scratch.
  mutating func prepare(_ context: inout PrepareContext) throws {
    layout = try SequenceLayout(input, timeMajor: timeMajor, op: op)
    var auxiliaryCount = 0
    if let auxiliary {
      guard auxiliary.shape.count == 3, auxiliary.shape.prefix(2) == input.shape.prefix(2) else {
        throw KernelError.invalid("\(op) auxiliary input \(auxiliary.shape) does not match the input \(input.shape)")
      }
      if usesAuxiliaryWeights { auxiliaryCount = auxiliary.shape[2] }
    } else if usesAuxiliaryWeights {
      throw KernelError.invalid("\(op) has auxiliary weights but no auxiliary input")
    }
    let forwardScratch = try forward.prepare(inputCount: input.shape[2], auxiliaryCount: auxiliaryCount, batch: layout.batch)
    let backwardScratch = try backward.prepare(
      inputCount: backwardInput.shape[2], auxiliaryCount: auxiliaryCount, batch: layout.batch)
    let sequence = Array(input.shape.prefix(2))
    if let backwardOutput {
      forwardOutput.shape = sequence + [forward.outputCount]
      backwardOutput.shape = sequence + [backward.outputCount]
    } else {
      forwardOutput.shape = sequence + [forward.outputCount + backward.outputCount]
    }
    context.requestScratch(bytes: max(forwardScratch, backwardScratch, 1))
  }

  /// Runs the forward, then the backward direction.
  func eval(_ context: EvalContext) throws {
    let forwardValues = forwardOutput.pointer(as: Float.self)
    let scratch = try recurrentScratch(context, op: op)
    let auxiliaryValues = usesAuxiliaryWeights ? auxiliary.map { UnsafePointer($0.pointer(as: Float.self)) } : nil
    let forwardWidth = forwardOutput.shape[2]
    forward.run(
      input: input.pointer(as: Float.self), auxiliary: auxiliaryValues, layout: layout, output: forwardValues,
      outputWidth: forwardWidth, outputOffset: 0, reversed: false, scratch: scratch)
    let (backwardValues, backwardWidth, backwardOffset) =
      backwardOutput.map { ($0.pointer(as: Float.self), $0.shape[2], 0) }
      ?? (forwardValues, forwardWidth, forward.outputCount)
    backward.run(
      input: backwardInput.pointer(as: Float.self), auxiliary: auxiliaryValues, layout: layout, output: backwardValues,
      outputWidth: backwardWidth, outputOffset: backwardOffset, reversed: true, scratch: scratch)
  }
}
