// TFLite_Detection_PostProcess: the head of SSD-style detectors (TF Object Detection API exports,
// AutoML Vision Edge). It decodes box encodings against anchors, then keeps the best boxes that
// do not overlap too much (non-maximum suppression), either per anchor over its best classes
// (fast NMS, the default) or per class followed by a merge (regular NMS).
//
// The arithmetic follows TFLite's kernel so results match it: decoding in double stored as float,
// IoU in float, candidates ordered by score with ties to the lower index. Output slots beyond the
// detections are zero (TFLite leaves fast-NMS leftovers untouched). Everything is planned into
// scratch memory, so `eval` does not allocate.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import TFLiteFormat
import TFLiteLinearAlgebra

/// The custom options of TFLite_Detection_PostProcess.
struct DetectionOptions: Equatable {
  /// Most detections reported (boxes for fast NMS, entries for regular NMS).
  var maxDetections: Int
  /// Classes reported per box by fast NMS.
  var maxClassesPerDetection: Int
  /// Most boxes kept per class by regular NMS.
  var detectionsPerClass = 100
  /// Regular (per class) instead of fast (per anchor) NMS.
  var useRegularNMS = false
  /// Candidates need a score at least this high.
  var scoreThreshold: Float
  /// A box is suppressed when its IoU with a kept box is above this.
  var iouThreshold: Float
  /// Classes without the background class.
  var numClasses: Int
  /// Box-coder divisors of the centre offsets (y, x) and log sizes (h, w).
  var yScale: Float, xScale: Float, hScale: Float, wScale: Float

  /// Reads the options from the operator's FlexBuffer map.
  init(flexBuffer bytes: UnsafeRawBufferPointer) throws {
    guard !bytes.isEmpty else { throw KernelError.invalid("TFLite_Detection_PostProcess has no custom options") }
    let root = try FlexBufferReference(bytes)
    guard root.asMap != nil else { throw KernelError.invalid("TFLite_Detection_PostProcess options are not a FlexBuffer map") }
    func integer(_ key: String) throws -> Int {
      guard let value = root[key]?.asInt, Int32(exactly: value) != nil else {
        throw KernelError.invalid("TFLite_Detection_PostProcess option '\(key)' is missing or not a 32-bit integer")
      }
      return value
    }
    func real(_ key: String) throws -> Float {
      guard let value = root[key]?.asDouble else {
        throw KernelError.invalid("TFLite_Detection_PostProcess option '\(key)' is missing or not a number")
      }
      return Float(value)
    }
    maxDetections = try integer("max_detections")
    maxClassesPerDetection = try integer("max_classes_per_detection")
    if let entry = root["detections_per_class"], !entry.isNull { detectionsPerClass = try integer("detections_per_class") }
    if let entry = root["use_regular_nms"], !entry.isNull {
      guard let flag = entry.asBool else { throw KernelError.invalid("TFLite_Detection_PostProcess option 'use_regular_nms' is not a bool") }
      useRegularNMS = flag
    }
    scoreThreshold = try real("nms_score_threshold")
    iouThreshold = try real("nms_iou_threshold")
    numClasses = try integer("num_classes")
    yScale = try real("y_scale")
    xScale = try real("x_scale")
    hScale = try real("h_scale")
    wScale = try real("w_scale")
    try validate()
  }

  /// Options given directly (for tests).
  init(
    maxDetections: Int, maxClassesPerDetection: Int, detectionsPerClass: Int = 100, useRegularNMS: Bool = false,
    scoreThreshold: Float, iouThreshold: Float, numClasses: Int,
    yScale: Float = 10, xScale: Float = 10, hScale: Float = 5, wScale: Float = 5
  ) throws {
    self.maxDetections = maxDetections
    self.maxClassesPerDetection = maxClassesPerDetection
    self.detectionsPerClass = detectionsPerClass
    self.useRegularNMS = useRegularNMS
    self.scoreThreshold = scoreThreshold
    self.iouThreshold = iouThreshold
    self.numClasses = numClasses
    (self.yScale, self.xScale, self.hScale, self.wScale) = (yScale, xScale, hScale, wScale)
    try validate()
  }

  /// Boxes kept per class by regular NMS (never more than the detections reported).
  var regularDetectionsPerClass: Int { min(detectionsPerClass, maxDetections) }

  private func validate() throws {
    guard maxDetections >= 0 else { throw KernelError.invalid("TFLite_Detection_PostProcess: max_detections \(maxDetections) is negative") }
    guard maxClassesPerDetection > 0 else {
      throw KernelError.invalid("TFLite_Detection_PostProcess: max_classes_per_detection \(maxClassesPerDetection) must be positive")
    }
    guard numClasses > 0 else { throw KernelError.invalid("TFLite_Detection_PostProcess: num_classes \(numClasses) must be positive") }
    guard iouThreshold > 0, iouThreshold <= 1 else {
      throw KernelError.invalid("TFLite_Detection_PostProcess: nms_iou_threshold \(iouThreshold) must lie in (0, 1]")
    }
    guard !useRegularNMS || regularDetectionsPerClass > 0 else {
      throw KernelError.invalid("TFLite_Detection_PostProcess: detections_per_class and max_detections must be positive for regular NMS")
    }
  }
}

/// Reads element `index` of a float32 or affine-quantized uint8 tensor as a float, as TFLite dequantizes.
struct DetectionOperandReader {
  private let isQuantized: Bool
  private let scale: Float
  private let zeroPoint: Float

  /// The reader of `tensor`, which must be float32 or uint8 with quantization parameters.
  init(_ tensor: RuntimeTensor, role: String) throws {
    switch tensor.type {
    case .float32:
      (isQuantized, scale, zeroPoint) = (false, 1, 0)
    case .uint8:
      guard let quantization = tensor.quantization, let scale = quantization.scales.first,
        let zeroPoint = quantization.zeroPoints.first
      else { throw KernelError.unsupported("TFLite_Detection_PostProcess: uint8 \(role) without quantization parameters") }
      (isQuantized, self.scale, self.zeroPoint) = (true, scale, Float(zeroPoint))
    default:
      throw KernelError.unsupported("TFLite_Detection_PostProcess with \(tensor.type.name) \(role)")
    }
  }

  /// The reader of the anchors, which LiteRT reads as the box encodings' type says: float32 anchors
  /// with float32 encodings; with uint8 encodings the anchors' bytes as uint8, dequantized with the
  /// anchors' own parameters (zero when they have none), even when the anchors are float32
  /// (detection_postprocess.cc DecodeCenterSizeBoxes), so float anchors there give the
  /// dequantized bytes of their floats.
  init(anchors: RuntimeTensor, encodingType: ElementType) throws {
    switch (encodingType, anchors.type) {
    case (.float32, .float32):
      (isQuantized, scale, zeroPoint) = (false, 1, 0)
    case (.uint8, .uint8), (.uint8, .float32):
      let quantization = anchors.quantization
      (isQuantized, scale, zeroPoint) = (
        true, quantization?.scales.first ?? 0, Float(quantization?.zeroPoints.first ?? 0)
      )
    default:
      throw KernelError.unsupported("TFLite_Detection_PostProcess with \(anchors.type.name) anchors and \(encodingType.name) box encodings")
    }
  }

  /// Element `index` of the tensor whose data is `base`.
  @inline(__always)
  func value(_ base: UnsafeRawPointer, _ index: Int) -> Float {
    isQuantized
      ? (Float(base.load(fromByteOffset: index, as: UInt8.self)) - zeroPoint) * scale
      : base.loadUnaligned(fromByteOffset: index &* 4, as: Float.self)
  }
}

/// The scratch regions of one evaluation, planned for a number of anchors and classes.
struct DetectionScratch {
  /// Region offsets, in bytes from the scratch base.
  private var decodedBoxes = 0, dequantizedScores = 0, candidateScores = 0, keptScores = 0, keptAnchors = 0
  private var order = 0, active = 0, selected = 0, classRanks = 0, mergedScores = 0, mergedEntries = 0
  /// Total bytes.
  private(set) var byteCount = 0

  init(anchorCount: Int, scoreColumns: Int, classesPerAnchor: Int, mergeCapacity: Int, dequantizesScores: Bool) {
    var layout = ScratchLayout()
    decodedBoxes = layout.reserve(floats: anchorCount * 4)
    dequantizedScores = layout.reserve(floats: dequantizesScores ? anchorCount * scoreColumns : 0)
    candidateScores = layout.reserve(floats: anchorCount)
    keptScores = layout.reserve(floats: anchorCount)
    keptAnchors = layout.reserve(bytes: anchorCount * 4)
    order = layout.reserve(bytes: anchorCount * 4)
    active = layout.reserve(bytes: anchorCount)
    selected = layout.reserve(bytes: anchorCount * 4)
    classRanks = layout.reserve(bytes: anchorCount * classesPerAnchor * 4)
    mergedScores = layout.reserve(floats: mergeCapacity)
    mergedEntries = layout.reserve(bytes: mergeCapacity * 4)
    byteCount = layout.byteCount
  }

  /// The regions as typed pointers into the scratch memory at `base`.
  func workspace(at base: UnsafeMutableRawPointer) -> DetectionWorkspace {
    func region<T>(_ offset: Int, _ type: T.Type) -> UnsafeMutablePointer<T> { (base + offset).assumingMemoryBound(to: T.self) }
    return DetectionWorkspace(
      decodedBoxes: region(decodedBoxes, Float.self), dequantizedScores: region(dequantizedScores, Float.self),
      candidateScores: region(candidateScores, Float.self), keptScores: region(keptScores, Float.self),
      keptAnchors: region(keptAnchors, Int32.self), order: region(order, Int32.self), active: region(active, Bool.self),
      selected: region(selected, Int32.self), classRanks: region(classRanks, Int32.self),
      mergedScores: region(mergedScores, Float.self), mergedEntries: region(mergedEntries, Int32.self))
  }
}

/// Typed views of the scratch regions of one evaluation.
struct DetectionWorkspace {
  /// Decoded boxes, 4 floats (ymin, xmin, ymax, xmax) per anchor.
  let decodedBoxes: UnsafeMutablePointer<Float>
  /// Float class scores, when the input is uint8.
  let dequantizedScores: UnsafeMutablePointer<Float>
  /// One score per anchor: the class column being suppressed, or each anchor's best class score.
  let candidateScores: UnsafeMutablePointer<Float>
  /// Scores and anchors of the candidates above the score threshold.
  let keptScores: UnsafeMutablePointer<Float>
  let keptAnchors: UnsafeMutablePointer<Int32>
  /// Candidate positions by score.
  let order: UnsafeMutablePointer<Int32>
  /// Candidates not suppressed yet.
  let active: UnsafeMutablePointer<Bool>
  /// Anchors kept by the last suppression, best first.
  let selected: UnsafeMutablePointer<Int32>
  /// Fast NMS: each anchor's best classes.
  let classRanks: UnsafeMutablePointer<Int32>
  /// Regular NMS: the merged detections (score and anchor · columns + column).
  let mergedScores: UnsafeMutablePointer<Float>
  let mergedEntries: UnsafeMutablePointer<Int32>
}

/// The boxes, classes and scores outputs.
struct DetectionOutputs {
  let boxes: UnsafeMutablePointer<Float>
  let classes: UnsafeMutablePointer<Float>
  let scores: UnsafeMutablePointer<Float>

  /// Writes detection `slot`: the box of `anchor`, its class and its score.
  @inline(__always)
  func write(slot: Int, anchor: Int, classIndex: Int, score: Float, from decodedBoxes: UnsafePointer<Float>) {
    (boxes + slot &* 4).update(from: decodedBoxes + anchor &* 4, count: 4)
    classes[slot] = Float(classIndex)
    scores[slot] = score
  }
}

/// Decoding and non-maximum suppression over the workspace.
struct DetectionPostProcessor {
  let options: DetectionOptions
  /// Anchors (boxes) in the inputs.
  let anchorCount: Int
  /// Score columns per anchor: the classes, plus a leading background column when `labelOffset` is 1.
  let scoreColumns: Int
  /// 1 when column 0 of the scores is the background class, else 0.
  var labelOffset: Int { scoreColumns - options.numClasses }
  /// Classes reported per box by fast NMS.
  var classesPerAnchor: Int { min(options.maxClassesPerDetection, options.numClasses) }
  /// Output slots: max_detections × max_classes_per_detection.
  var slotCount: Int { options.maxDetections * options.maxClassesPerDetection }

  /// The scratch layout this processor uses.
  func scratchLayout(dequantizesScores: Bool) -> DetectionScratch {
    DetectionScratch(
      anchorCount: anchorCount, scoreColumns: scoreColumns, classesPerAnchor: classesPerAnchor,
      mergeCapacity: 2 * options.maxDetections, dequantizesScores: dequantizesScores)
  }

  /// Decodes every anchor's `(ty, tx, th, tw)` into `(ymin, xmin, ymax, xmax)` in the workspace;
  /// `encoding(anchor, k)` and `anchorValue(anchor, k)` read the inputs. Throws for an inverted box.
  func decode(
    into workspace: DetectionWorkspace, encoding: (Int, Int) -> Float, anchorValue: (Int, Int) -> Float
  ) throws {
    let scales = (Double(options.yScale), Double(options.xScale), Double(options.hScale), Double(options.wScale))
    for anchor in 0..<anchorCount {
      let (anchorY, anchorX) = (Double(anchorValue(anchor, 0)), Double(anchorValue(anchor, 1)))
      let (anchorHeight, anchorWidth) = (Double(anchorValue(anchor, 2)), Double(anchorValue(anchor, 3)))
      let centerY = Float(Double(encoding(anchor, 0)) / scales.0 * anchorHeight + anchorY)
      let centerX = Float(Double(encoding(anchor, 1)) / scales.1 * anchorWidth + anchorX)
      let halfHeight = Float(0.5 * exp(Double(encoding(anchor, 2)) / scales.2) * anchorHeight)
      let halfWidth = Float(0.5 * exp(Double(encoding(anchor, 3)) / scales.3) * anchorWidth)
      let box = workspace.decodedBoxes + anchor &* 4
      (box[0], box[1], box[2], box[3]) = (centerY - halfHeight, centerX - halfWidth, centerY + halfHeight, centerX + halfWidth)
      guard !(box[0] > box[2]), !(box[1] > box[3]) else {
        throw KernelError.invalid("TFLite_Detection_PostProcess: anchor \(anchor) decodes to an inverted box")
      }
    }
  }

  /// Intersection over union of boxes `i` and `j` (0 when either has no area).
  @inline(__always)
  static func intersectionOverUnion(_ boxes: UnsafePointer<Float>, _ i: Int, _ j: Int) -> Float {
    let (a, b) = (boxes + i &* 4, boxes + j &* 4)
    let areaA = (a[2] - a[0]) * (a[3] - a[1])
    let areaB = (b[2] - b[0]) * (b[3] - b[1])
    if areaA <= 0 || areaB <= 0 { return 0 }
    let height = max(min(a[2], b[2]) - max(a[0], b[0]), 0)
    let width = max(min(a[3], b[3]) - max(a[1], b[1]), 0)
    let intersection = height * width
    return intersection / (areaA + areaB - intersection)
  }

  /// Runs fast or regular NMS, as the options say, on decoded boxes and float `scores`; returns
  /// the number of detections.
  func run(scores: UnsafePointer<Float>, workspace: DetectionWorkspace, outputs: DetectionOutputs) -> Int {
    options.useRegularNMS
      ? regularNMS(scores: scores, workspace: workspace, outputs: outputs)
      : fastNMS(scores: scores, workspace: workspace, outputs: outputs)
  }

  /// Greedy single-class NMS of `workspace.candidateScores` (one per anchor): writes the kept
  /// anchors, best first, to `workspace.selected` and returns how many (at most `limit`).
  private func suppress(limit: Int, workspace: DetectionWorkspace) -> Int {
    let (scores, keptScores, keptAnchors) = (workspace.candidateScores, workspace.keptScores, workspace.keptAnchors)
    let (order, active, boxes) = (workspace.order, workspace.active, UnsafePointer(workspace.decodedBoxes))
    var keptCount = 0
    for anchor in 0..<anchorCount where scores[anchor] >= options.scoreThreshold {
      keptScores[keptCount] = scores[anchor]
      keptAnchors[keptCount] = Int32(truncatingIfNeeded: anchor)
      keptCount &+= 1
    }
    rankTop(row: UnsafePointer(keptScores), length: keptCount, k: keptCount, indices: order)
    active.update(repeating: true, count: keptCount)
    var activeCount = keptCount
    var selectedCount = 0
    let outputLimit = min(keptCount, limit)
    for position in 0..<keptCount {
      if activeCount == 0 || selectedCount >= outputLimit { break }
      guard active[position] else { continue }
      let best = Int(keptAnchors[Int(order[position])])
      workspace.selected[selectedCount] = Int32(truncatingIfNeeded: best)
      selectedCount &+= 1
      active[position] = false
      activeCount &-= 1
      for later in (position &+ 1)..<keptCount where active[later] {
        let other = Int(keptAnchors[Int(order[later])])
        if Self.intersectionOverUnion(boxes, best, other) > options.iouThreshold {
          active[later] = false
          activeCount &-= 1
        }
      }
    }
    return selectedCount
  }

  /// Fast NMS: each anchor competes with its best class score and reports its best classes.
  /// Returns the number of detected boxes.
  private func fastNMS(scores: UnsafePointer<Float>, workspace: DetectionWorkspace, outputs: DetectionOutputs) -> Int {
    let classes = classesPerAnchor
    for anchor in 0..<anchorCount {
      let row = scores + (anchor &* scoreColumns &+ labelOffset)
      let ranks = workspace.classRanks + anchor &* classes
      rankTop(row: row, length: options.numClasses, k: classes, indices: ranks)
      workspace.candidateScores[anchor] = row[Int(ranks[0])]
    }
    let count = suppress(limit: options.maxDetections, workspace: workspace)
    for detection in 0..<count {
      let anchor = Int(workspace.selected[detection])
      let row = scores + (anchor &* scoreColumns &+ labelOffset)
      for rank in 0..<classes {
        let classIndex = Int(workspace.classRanks[anchor &* classes &+ rank])
        outputs.write(
          slot: options.maxClassesPerDetection &* detection &+ rank, anchor: anchor, classIndex: classIndex,
          score: row[classIndex], from: workspace.decodedBoxes)
      }
    }
    return count
  }

  /// Regular NMS: NMS per class, merged into one list ordered by score (earlier classes first
  /// on ties) and cut to max_detections. Returns the number of detections.
  private func regularNMS(scores: UnsafePointer<Float>, workspace: DetectionWorkspace, outputs: DetectionOutputs) -> Int {
    let (classScores, selected) = (workspace.candidateScores, workspace.selected)
    let (mergedScores, mergedEntries) = (workspace.mergedScores, workspace.mergedEntries)
    var mergedCount = 0
    for classIndex in 0..<options.numClasses {
      let column = classIndex &+ labelOffset
      for anchor in 0..<anchorCount { classScores[anchor] = scores[anchor &* scoreColumns &+ column] }
      let count = suppress(limit: options.regularDetectionsPerClass, workspace: workspace)
      guard count > 0 else { continue }
      // Merge from the back: the new run (already best first) lands after equal scores already listed.
      var write = mergedCount &+ count &- 1
      var old = mergedCount &- 1
      var new = count &- 1
      while new >= 0 {
        let anchor = Int(selected[new])
        let newScore = classScores[anchor]
        if old >= 0 && mergedScores[old] < newScore {
          mergedScores[write] = mergedScores[old]
          mergedEntries[write] = mergedEntries[old]
          old &-= 1
        } else {
          mergedScores[write] = newScore
          mergedEntries[write] = Int32(truncatingIfNeeded: anchor &* scoreColumns &+ column)
          new &-= 1
        }
        write &-= 1
      }
      mergedCount = min(mergedCount &+ count, options.maxDetections)
    }
    for detection in 0..<mergedCount {
      let entry = Int(mergedEntries[detection])
      let anchor = entry / scoreColumns
      outputs.write(
        slot: detection, anchor: anchor, classIndex: entry &- anchor &* scoreColumns &- labelOffset,
        score: mergedScores[detection], from: workspace.decodedBoxes)
    }
    return mergedCount
  }
}

// MARK: - Kernel

/// TFLite_Detection_PostProcess with float32 or uint8 box encodings, class scores and anchors
/// (batch 1; with uint8 encodings even float32 anchors are read as LiteRT reads them, see
/// `DetectionOperandReader(anchors:encodingType:)`); four float32 outputs: boxes, classes, scores and the number of detections.
final class DetectionPostProcessKernel: Kernel {
  private static let opName = "TFLite_Detection_PostProcess"
  private let encodings: RuntimeTensor
  private let classScores: RuntimeTensor
  private let anchors: RuntimeTensor
  private let outputs: [RuntimeTensor]
  private let options: DetectionOptions
  private let encodingReader: DetectionOperandReader
  private let scoreReader: DetectionOperandReader
  private let anchorReader: DetectionOperandReader
  private var processor: DetectionPostProcessor?
  private var layout = DetectionScratch(anchorCount: 0, scoreColumns: 0, classesPerAnchor: 0, mergeCapacity: 0, dequantizesScores: false)

  init(node: Node) throws {
    try node.expect(inputs: 3, outputs: 4)
    encodings = try node.input(0)
    classScores = try node.input(1)
    anchors = try node.input(2)
    outputs = node.outputs
    for output in outputs where output.type != .float32 {
      throw KernelError.invalid("\(Self.opName): output \(output.summary) must be FLOAT32")
    }
    encodingReader = try DetectionOperandReader(encodings, role: "box encodings")
    scoreReader = try DetectionOperandReader(classScores, role: "class scores")
    anchorReader = try DetectionOperandReader(anchors: anchors, encodingType: encodings.type)
    do {
      options = try DetectionOptions(flexBuffer: node.customOptions)
    } catch let error as FlexBufferError {
      throw KernelError.invalid("\(Self.opName): custom options: \(error)")
    }
  }

  func prepare(_ context: inout PrepareContext) throws {
    let (encodingShape, scoreShape, anchorShape) = (encodings.shape, classScores.shape, anchors.shape)
    guard encodingShape.count == 3, scoreShape.count == 3, anchorShape.count == 2 else {
      throw KernelError.invalid("\(Self.opName): expected box encodings [1, A, ≥4], scores [1, A, C] and anchors [A, 4], got \(encodingShape), \(scoreShape), \(anchorShape)")
    }
    let anchorCount = encodingShape[1]
    guard encodingShape[0] == 1, scoreShape[0] == 1 else { throw KernelError.unsupported("\(Self.opName) with a batch other than 1") }
    guard encodingShape[2] >= 4, scoreShape[1] == anchorCount, anchorShape == [anchorCount, 4] else {
      throw KernelError.invalid("\(Self.opName): box encodings \(encodingShape), scores \(scoreShape) and anchors \(anchorShape) disagree")
    }
    guard scoreShape[2] - options.numClasses == 0 || scoreShape[2] - options.numClasses == 1 else {
      throw KernelError.invalid("\(Self.opName): \(scoreShape[2]) score columns for \(options.numClasses) classes")
    }
    let slotCount = try checkedElementCount([options.maxDetections, options.maxClassesPerDetection, 4], op: Self.opName) / 4
    _ = try checkedElementCount([anchorCount, scoreShape[2], max(options.maxClassesPerDetection, 1)], op: Self.opName)
    let processor = DetectionPostProcessor(options: options, anchorCount: anchorCount, scoreColumns: scoreShape[2])
    layout = processor.scratchLayout(dequantizesScores: classScores.type == .uint8)
    context.requestScratch(bytes: layout.byteCount)
    self.processor = processor
    outputs[0].shape = [1, slotCount, 4]
    outputs[1].shape = [1, slotCount]
    outputs[2].shape = [1, slotCount]
    outputs[3].shape = [1]
  }

  func eval(_ context: EvalContext) throws {
    guard let processor, let scratch = context.scratch else { throw KernelError.invalid("\(Self.opName): eval before prepare") }
    let encodingData = UnsafeRawPointer(try tensorData(encodings))
    let scoreData = UnsafeRawPointer(try tensorData(classScores))
    let anchorData = UnsafeRawPointer(try tensorData(anchors))
    for output in outputs { try tensorData(output).initializeMemory(as: UInt8.self, repeating: 0, count: output.byteCount) }
    let workspace = layout.workspace(at: scratch)
    let encodingStride = encodings.shape[2]
    let (encodingReader, anchorReader) = (encodingReader, anchorReader)
    try processor.decode(
      into: workspace, encoding: { encodingReader.value(encodingData, $0 &* encodingStride &+ $1) },
      anchorValue: { anchorReader.value(anchorData, $0 &* 4 &+ $1) })

    var scores = scoreData.assumingMemoryBound(to: Float.self)
    if classScores.type == .uint8 {
      for index in 0..<classScores.elementCount { workspace.dequantizedScores[index] = scoreReader.value(scoreData, index) }
      scores = UnsafePointer(workspace.dequantizedScores)
    }
    let count = processor.run(
      scores: scores, workspace: workspace,
      outputs: DetectionOutputs(
        boxes: outputs[0].pointer(as: Float.self), classes: outputs[1].pointer(as: Float.self),
        scores: outputs[2].pointer(as: Float.self)))
    outputs[3].pointer(as: Float.self)[0] = Float(count)
  }
}
