// NON_MAX_SUPPRESSION_V4 and NON_MAX_SUPPRESSION_V5 (soft NMS): the boxes to keep, best score
// first, from boxes [N, 4] (two opposite corners, any order) and scores [N].
//
// As TFLite: candidates need a score above the threshold; a candidate is dropped when its IoU with
// a kept box reaches the IoU threshold; with sigma > 0 each kept box it overlaps scales its score
// by exp(−0.5·IoU²/σ), and a decayed candidate goes back into the queue. TFLite also puts a kept
// candidate back into the queue (where it then meets itself); that is mirrored, so degenerate
// boxes behave the same. Candidates wait in a max-heap in scratch memory (equal scores: lower
// index first). With a constant max_output_size the outputs have that length, zero after the
// kept boxes; with one computed at run time they have the kept boxes' length, as in TFLite.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The scalar settings of one suppression.
struct SuppressionSettings {
  /// Most boxes kept.
  var maxOutputCount: Int
  /// A candidate is dropped when its IoU with a kept box is at least this.
  var iouThreshold: Float
  /// Candidates need a score above this.
  var scoreThreshold: Float
  /// Soft-NMS width; 0 for plain NMS.
  var sigma: Float
}

/// A max-heap of NMS candidates over three scratch arrays.
struct CandidateQueue {
  /// Current scores.
  let scores: UnsafeMutablePointer<Float>
  /// Box indices.
  let boxes: UnsafeMutablePointer<Int32>
  /// How many kept boxes each candidate has already been compared with.
  let comparedCounts: UnsafeMutablePointer<Int32>
  /// Candidates in the queue.
  private(set) var count = 0

  init(scores: UnsafeMutablePointer<Float>, boxes: UnsafeMutablePointer<Int32>, comparedCounts: UnsafeMutablePointer<Int32>) {
    self.scores = scores
    self.boxes = boxes
    self.comparedCounts = comparedCounts
  }

  /// True when slot `i` comes out before slot `j`: a higher score, or an equal one and a lower box index.
  @inline(__always)
  private func isBefore(_ i: Int, _ j: Int) -> Bool {
    scores[i] > scores[j] || (scores[i] == scores[j] && boxes[i] < boxes[j])
  }

  @inline(__always)
  private func swapSlots(_ i: Int, _ j: Int) {
    (scores[i], scores[j]) = (scores[j], scores[i])
    (boxes[i], boxes[j]) = (boxes[j], boxes[i])
    (comparedCounts[i], comparedCounts[j]) = (comparedCounts[j], comparedCounts[i])
  }

  /// Adds a candidate (the arrays must have room for it).
  mutating func push(score: Float, box: Int32, compared: Int32) {
    var slot = count
    (scores[slot], boxes[slot], comparedCounts[slot]) = (score, box, compared)
    count &+= 1
    while slot > 0 {
      let parent = (slot &- 1) / 2
      guard isBefore(slot, parent) else { break }
      swapSlots(slot, parent)
      slot = parent
    }
  }

  /// Removes and returns the first candidate.
  mutating func pop() -> (score: Float, box: Int32, compared: Int32) {
    let first = (scores[0], boxes[0], comparedCounts[0])
    count &-= 1
    swapSlots(0, count)
    var slot = 0
    while true {
      let left = 2 &* slot &+ 1
      guard left < count else { break }
      let right = left &+ 1
      let child = right < count && isBefore(right, left) ? right : left
      guard isBefore(child, slot) else { break }
      swapSlots(child, slot)
      slot = child
    }
    return first
  }
}

/// Single-class (soft) NMS over `boxCount` boxes; writes kept indices (and their scores when
/// `selectedScores` is given) and returns how many were kept.
func suppressNonMaxima(
  boxes: UnsafePointer<Float>, scores: UnsafePointer<Float>, boxCount: Int, settings: SuppressionSettings,
  queue: inout CandidateQueue, selected: UnsafeMutablePointer<Int32>, selectedScores: UnsafeMutablePointer<Float>?
) -> Int {
  for box in 0..<boxCount where scores[box] > settings.scoreThreshold {
    queue.push(score: scores[box], box: Int32(truncatingIfNeeded: box), compared: 0)
  }
  let outputCount = min(queue.count, settings.maxOutputCount)
  let decay: Float = settings.sigma > 0 ? -0.5 / settings.sigma : 0
  var keptCount = 0
  while keptCount < outputCount && queue.count > 0 {
    let (originalScore, box, compared) = queue.pop()
    var score = originalScore
    var hardSuppressed = false
    var kept = keptCount &- 1
    while kept >= Int(compared) {
      let overlap = cornerBoxIoU(boxes, Int(box), Int(selected[kept]))
      if overlap >= settings.iouThreshold {
        hardSuppressed = true
        break
      }
      if settings.sigma > 0 { score *= expf(decay * overlap * overlap) }
      if score <= settings.scoreThreshold { break }
      kept &-= 1
    }
    guard !hardSuppressed else { continue }
    let comparedNow = Int32(truncatingIfNeeded: keptCount)
    if score == originalScore {
      selected[keptCount] = box
      selectedScores?[keptCount] = score
      keptCount &+= 1
    }
    if score > settings.scoreThreshold { queue.push(score: score, box: box, compared: comparedNow) }
  }
  return keptCount
}

/// IoU of boxes `i` and `j` given as two opposite corners `(y1, x1, y2, x2)`; 0 when either has no area.
@inline(__always)
func cornerBoxIoU(_ boxes: UnsafePointer<Float>, _ i: Int, _ j: Int) -> Float {
  let (a, b) = (boxes + i &* 4, boxes + j &* 4)
  let (aTop, aBottom, aLeft, aRight) = (min(a[0], a[2]), max(a[0], a[2]), min(a[1], a[3]), max(a[1], a[3]))
  let (bTop, bBottom, bLeft, bRight) = (min(b[0], b[2]), max(b[0], b[2]), min(b[1], b[3]), max(b[1], b[3]))
  let areaA = (aBottom - aTop) * (aRight - aLeft)
  let areaB = (bBottom - bTop) * (bRight - bLeft)
  if areaA <= 0 || areaB <= 0 { return 0 }
  let intersection = max(min(aBottom, bBottom) - max(aTop, bTop), 0) * max(min(aRight, bRight) - max(aLeft, bLeft), 0)
  let union = areaA + areaB - intersection
  return union == 0 ? 0 : intersection / union
}

// MARK: - Kernel

/// NON_MAX_SUPPRESSION_V4 (inputs boxes, scores, max_output_size, iou_threshold, score_threshold;
/// outputs selected indices and their count) and V5 (plus soft_nms_sigma; outputs indices,
/// scores and count).
final class NonMaxSuppressionKernel: Kernel {
  private let opName: String
  private let boxes: RuntimeTensor
  private let scores: RuntimeTensor
  private let maxOutputSize: RuntimeTensor
  private let thresholds: [RuntimeTensor]
  private let selectedIndices: RuntimeTensor
  private let selectedScores: RuntimeTensor?
  private let selectedCount: RuntimeTensor
  private var scratch = ScratchLayout()
  /// Scratch offsets of the candidate queue's arrays.
  private var queueScores = 0, queueBoxes = 0, queueCompared = 0
  /// The selection made while preparing, when the output length is the number kept.
  private var preparedSelection: (indices: [Int32], scores: [Float])?

  init(node: Node) throws {
    opName = node.opName
    let soft = node.op == .builtin(.nonMaxSuppressionV5)
    try node.expect(inputs: soft ? 6 : 5, outputs: soft ? 3 : 2)
    boxes = try node.input(0)
    scores = try node.input(1)
    maxOutputSize = try node.input(2)
    thresholds = try (3..<(soft ? 6 : 5)).map { try node.input($0) }
    selectedIndices = try node.output(0)
    selectedScores = soft ? try node.output(1) : nil
    selectedCount = try node.output(soft ? 2 : 1)
    guard ([boxes, scores] + thresholds + [selectedScores].compactMap { $0 }).allSatisfy({ $0.type == .float32 }),
      maxOutputSize.type == .int32, selectedIndices.type == .int32, selectedCount.type == .int32
    else {
      throw KernelError.unsupported("\(opName) needs float32 boxes, scores and thresholds and int32 sizes and indices")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    guard boxes.shape.count == 2, boxes.shape[1] == 4, scores.shape == [boxes.shape[0]] else {
      throw KernelError.invalid("\(opName): boxes must be [N, 4] and scores [N], got \(boxes.shape) and \(scores.shape)")
    }
    guard maxOutputSize.elementCount == 1, thresholds.allSatisfy({ $0.elementCount == 1 }) else {
      throw KernelError.invalid("\(opName): max_output_size and the thresholds must be scalars")
    }
    let boxCount = boxes.shape[0]
    scratch = ScratchLayout()
    queueScores = scratch.reserve(floats: boxCount)
    queueBoxes = scratch.reserve(bytes: boxCount * 4)
    queueCompared = scratch.reserve(bytes: boxCount * 4)
    context.requestScratch(bytes: scratch.byteCount)
    selectedCount.shape = []
    preparedSelection = nil
    let limit = try constantIntegers(maxOutputSize, op: opName, operand: "max_output_size")[0]
    guard limit >= 0 else { throw KernelError.invalid("\(opName): max_output_size \(limit) is negative") }
    var length = limit
    if !maxOutputSize.isConstant {
      // A run-time limit: TFLite sizes the outputs by the boxes kept, known only by selecting now.
      let selection = try select(limit: limit)
      preparedSelection = selection
      length = selection.indices.count
    }
    selectedIndices.shape = [length]
    selectedScores?.shape = [length]
  }

  func eval(_ context: EvalContext) throws {
    let indices = try tensorData(selectedIndices).assumingMemoryBound(to: Int32.self)
    let keptScoresOutput = try selectedScores.map { try tensorData($0).assumingMemoryBound(to: Float.self) }
    let length = selectedIndices.elementCount
    indices.update(repeating: 0, count: length)
    keptScoresOutput?.update(repeating: 0, count: length)
    let count: Int
    if let preparedSelection {
      count = preparedSelection.indices.count
      indices.update(from: preparedSelection.indices, count: count)
      keptScoresOutput?.update(from: preparedSelection.scores, count: count)
    } else {
      guard let scratchBase = context.scratch else { throw KernelError.invalid("\(opName): eval before prepare") }
      count = try run(limit: length, scratch: scratchBase, selected: indices, selectedScores: keptScoresOutput)
    }
    try tensorData(selectedCount).storeBytes(of: Int32(truncatingIfNeeded: count), as: Int32.self)
  }

  /// Runs the selection with a run-time limit into arrays (prepare may allocate).
  private func select(limit: Int) throws -> (indices: [Int32], scores: [Float]) {
    let memory = UnsafeMutableRawPointer.allocate(byteCount: max(self.scratch.byteCount, 64), alignment: 64)
    defer { memory.deallocate() }
    var indices = [Int32](repeating: 0, count: min(limit, boxes.shape[0]))
    var keptScores = [Float](repeating: 0, count: indices.count)
    let count = try indices.withUnsafeMutableBufferPointer { indexBuffer in
      try keptScores.withUnsafeMutableBufferPointer { scoreBuffer in
        try run(limit: indexBuffer.count, scratch: memory, selected: indexBuffer.baseAddress, selectedScores: scoreBuffer.baseAddress)
      }
    }
    return (Array(indices.prefix(count)), Array(keptScores.prefix(count)))
  }

  /// Reads the scalar settings and runs the suppression; returns the number of boxes kept.
  private func run(
    limit: Int, scratch base: UnsafeMutableRawPointer, selected: UnsafeMutablePointer<Int32>?,
    selectedScores: UnsafeMutablePointer<Float>?
  ) throws -> Int {
    func scalar(_ position: Int) throws -> Float {
      position < thresholds.count ? try tensorData(thresholds[position]).loadUnaligned(as: Float.self) : 0
    }
    let settings = SuppressionSettings(
      maxOutputCount: limit, iouThreshold: try scalar(0), scoreThreshold: try scalar(1), sigma: try scalar(2))
    guard settings.sigma >= 0 else { throw KernelError.invalid("\(opName): soft_nms_sigma \(settings.sigma) is negative") }
    guard let selected, limit > 0 else { return 0 }
    var queue = CandidateQueue(
      scores: (base + queueScores).assumingMemoryBound(to: Float.self),
      boxes: (base + queueBoxes).assumingMemoryBound(to: Int32.self),
      comparedCounts: (base + queueCompared).assumingMemoryBound(to: Int32.self))
    return suppressNonMaxima(
      boxes: try tensorData(boxes).assumingMemoryBound(to: Float.self), scores: try tensorData(scores).assumingMemoryBound(to: Float.self),
      boxCount: boxes.shape[0], settings: settings, queue: &queue, selected: selected,
      selectedScores: selectedScores)
  }
}
