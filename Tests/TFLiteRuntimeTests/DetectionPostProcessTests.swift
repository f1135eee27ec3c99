import Foundation
import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// TFLite_Detection_PostProcess against a naive Swift definition (decode, sort, greedy NMS) on
/// random heads, its options read from the committed detector models, and its refusals.
final class DetectionPostProcessTests: XCTestCase {
  /// What one run reports: boxes (4 per slot), classes, scores and the detection count.
  private struct Detections: Equatable {
    var boxes: [Float]
    var classes: [Float]
    var scores: [Float]
    var count: Int
  }

  /// The box decoded from `encoding` against `anchor` `(yc, xc, h, w)`, as the op defines it.
  private func naiveBox(_ encoding: ArraySlice<Float>, _ anchor: ArraySlice<Float>, _ options: DetectionOptions) -> [Float] {
    let (e, a) = (Array(encoding), Array(anchor))
    let centerY = Float(Double(e[0]) / Double(options.yScale) * Double(a[2]) + Double(a[0]))
    let centerX = Float(Double(e[1]) / Double(options.xScale) * Double(a[3]) + Double(a[1]))
    let halfHeight = Float(0.5 * Foundation.exp(Double(e[2]) / Double(options.hScale)) * Double(a[2]))
    let halfWidth = Float(0.5 * Foundation.exp(Double(e[3]) / Double(options.wScale)) * Double(a[3]))
    return [centerY - halfHeight, centerX - halfWidth, centerY + halfHeight, centerX + halfWidth]
  }

  private func naiveIoU(_ a: [Float], _ b: [Float]) -> Float {
    let areaA = (a[2] - a[0]) * (a[3] - a[1])
    let areaB = (b[2] - b[0]) * (b[3] - b[1])
    guard areaA > 0, areaB > 0 else { return 0 }
    let intersection = max(min(a[2], b[2]) - max(a[0], b[0]), 0) * max(min(a[3], b[3]) - max(a[1], b[1]), 0)
    return intersection / (areaA + areaB - intersection)
  }

  /// Greedy NMS: candidates at or above the threshold by score (ties: lower anchor first); each is
  /// kept unless it overlaps a kept one by more than the IoU threshold.
  private func naiveNMS(_ scores: [Float], _ boxes: [[Float]], _ options: DetectionOptions, limit: Int) -> [Int] {
    let candidates = scores.indices.filter { scores[$0] >= options.scoreThreshold }
      .sorted { scores[$0] > scores[$1] || (scores[$0] == scores[$1] && $0 < $1) }
    var kept: [Int] = []
    for candidate in candidates where kept.count < limit {
      if kept.allSatisfy({ naiveIoU(boxes[$0], boxes[candidate]) <= options.iouThreshold }) { kept.append(candidate) }
    }
    return kept
  }

  private func naiveDetections(
    encodings: [Float], scores: [Float], anchors: [Float], columns: Int, options: DetectionOptions
  ) -> Detections {
    let anchorCount = anchors.count / 4
    let offset = columns - options.numClasses
    let boxes = (0..<anchorCount).map { naiveBox(encodings[($0 * 4)..<($0 * 4 + 4)], anchors[($0 * 4)..<($0 * 4 + 4)], options) }
    func score(_ anchor: Int, _ classIndex: Int) -> Float { scores[anchor * columns + offset + classIndex] }
    let slots = options.maxDetections * options.maxClassesPerDetection
    var result = Detections(
      boxes: [Float](repeating: 0, count: slots * 4), classes: [Float](repeating: 0, count: slots),
      scores: [Float](repeating: 0, count: slots), count: 0)
    func write(_ slot: Int, anchor: Int, classIndex: Int) {
      result.boxes.replaceSubrange((slot * 4)..<(slot * 4 + 4), with: boxes[anchor])
      result.classes[slot] = Float(classIndex)
      result.scores[slot] = score(anchor, classIndex)
    }
    if options.useRegularNMS {
      // Every class's survivors, ordered by score, then class, then their order within the class.
      var entries: [(score: Float, classIndex: Int, rank: Int, anchor: Int)] = []
      for classIndex in 0..<options.numClasses {
        let classScores = (0..<anchorCount).map { score($0, classIndex) }
        let kept = naiveNMS(classScores, boxes, options, limit: options.regularDetectionsPerClass)
        entries += kept.enumerated().map { (classScores[$0.element], classIndex, $0.offset, $0.element) }
      }
      entries.sort { ($0.score, -$0.classIndex, -$0.rank) > ($1.score, -$1.classIndex, -$1.rank) }
      for (slot, entry) in entries.prefix(options.maxDetections).enumerated() {
        write(slot, anchor: entry.anchor, classIndex: entry.classIndex)
      }
      result.count = min(entries.count, options.maxDetections)
    } else {
      let perAnchor = min(options.maxClassesPerDetection, options.numClasses)
      let ranked = (0..<anchorCount).map { anchor in
        (0..<options.numClasses).sorted { score(anchor, $0) > score(anchor, $1) || (score(anchor, $0) == score(anchor, $1) && $0 < $1) }
      }
      let kept = naiveNMS(ranked.indices.map { score($0, ranked[$0][0]) }, boxes, options, limit: options.maxDetections)
      for (detection, anchor) in kept.enumerated() {
        for rank in 0..<perAnchor {
          write(options.maxClassesPerDetection * detection + rank, anchor: anchor, classIndex: ranked[anchor][rank])
        }
      }
      result.count = kept.count
    }
    return result
  }

  /// Runs the kernel's processor on float inputs.
  private func processorDetections(
    encodings: [Float], scores: [Float], anchors: [Float], columns: Int, options: DetectionOptions
  ) throws -> Detections {
    let processor = DetectionPostProcessor(options: options, anchorCount: anchors.count / 4, scoreColumns: columns)
    let layout = processor.scratchLayout(dequantizesScores: false)
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(layout.byteCount, 64), alignment: 64)
    defer { scratch.deallocate() }
    let workspace = layout.workspace(at: scratch)
    try processor.decode(into: workspace, encoding: { encodings[$0 * 4 + $1] }, anchorValue: { anchors[$0 * 4 + $1] })
    var result = Detections(
      boxes: [Float](repeating: 0, count: processor.slotCount * 4), classes: [Float](repeating: 0, count: processor.slotCount),
      scores: [Float](repeating: 0, count: processor.slotCount), count: 0)
    scores.withUnsafeBufferPointer { scoreBuffer in
      result.boxes.withUnsafeMutableBufferPointer { boxes in
        result.classes.withUnsafeMutableBufferPointer { classes in
          result.scores.withUnsafeMutableBufferPointer { outputScores in
            result.count = processor.run(
              scores: scoreBuffer.baseAddress!, workspace: workspace,
              outputs: DetectionOutputs(boxes: boxes.baseAddress!, classes: classes.baseAddress!, scores: outputScores.baseAddress!))
          }
        }
      }
    }
    return result
  }

  func testRandomHeadsMatchTheNaiveDefinition() throws {
    var generator = SeededGenerator(seed: 400)
    for trial in 0..<300 {
      let anchorCount = generator.int(1...40)
      let numClasses = generator.int(1...5)
      let columns = numClasses + generator.int(0...1)
      let options = try DetectionOptions(
        maxDetections: generator.int(trial % 3 == 0 ? 1...3 : 1...12), maxClassesPerDetection: generator.int(1...3),
        detectionsPerClass: generator.int(1...6), useRegularNMS: generator.bool(),
        scoreThreshold: Float(generator.int(0...6)) / 10, iouThreshold: Float(generator.int(1...10)) / 10,
        numClasses: numClasses)
      let anchors = (0..<anchorCount).flatMap { _ in
        [Float.random(in: 0...1, using: &generator), Float.random(in: 0...1, using: &generator),
         Float.random(in: 0.05...0.5, using: &generator), Float.random(in: 0.05...0.5, using: &generator)]
      }
      let encodings = generator.floats(anchorCount * 4, in: -2...2)
      // Scores on a coarse grid, so ties between anchors and classes are common.
      let scores = (0..<(anchorCount * columns)).map { _ in Float(generator.int(0...10)) / 10 }
      let expected = naiveDetections(encodings: encodings, scores: scores, anchors: anchors, columns: columns, options: options)
      let actual = try processorDetections(encodings: encodings, scores: scores, anchors: anchors, columns: columns, options: options)
      XCTAssertEqual(actual, expected, "trial \(trial): \(options)")
    }
  }

  func testOptionsOfTheCommittedDetectorsMatchTheManifest() throws {
    /// A JSON number or bool, as a number.
    struct Number: Decodable {
      var value: Double
      init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) { value = flag ? 1 : 0 } else { value = try container.decode(Double.self) }
      }
    }
    struct Manifest: Decodable {
      struct Entry: Decodable {
        var file: String
        var detection_options: [String: Number]?
      }
      var models: [Entry]
    }
    let data = try Data(contentsOf: TestModelManifest.directory.appendingPathComponent("manifest.json"))
    let entries = try JSONDecoder().decode(Manifest.self, from: data).models.filter { $0.detection_options != nil }
    XCTAssertGreaterThanOrEqual(entries.count, 5)
    for entry in entries {
      let model = try TFLiteModel(contentsOfFile: TestModelManifest.directory.appendingPathComponent(entry.file).path)
      let codes = model.model.operatorCodes
      let subgraph = try XCTUnwrap(model.model.subgraphs.first)
      let node = try XCTUnwrap(subgraph.operators.first { codes[Int($0.opcodeIndex)].customCode == "TFLite_Detection_PostProcess" })
      let options = try DetectionOptions(flexBuffer: model.customOptions(of: node))
      let written = try XCTUnwrap(entry.detection_options).mapValues(\.value)
      XCTAssertEqual(Double(options.maxDetections), written["max_detections"])
      XCTAssertEqual(Double(options.maxClassesPerDetection), written["max_classes_per_detection"])
      XCTAssertEqual(Double(options.detectionsPerClass), written["detections_per_class"] ?? 100)
      XCTAssertEqual(options.useRegularNMS, (written["use_regular_nms"] ?? 0) != 0)
      XCTAssertEqual(Double(options.numClasses), written["num_classes"])
      XCTAssertEqual(options.scoreThreshold, Float(try XCTUnwrap(written["nms_score_threshold"])))
      XCTAssertEqual(options.iouThreshold, Float(try XCTUnwrap(written["nms_iou_threshold"])))
      XCTAssertEqual(
        [options.yScale, options.xScale, options.hScale, options.wScale],
        ["y_scale", "x_scale", "h_scale", "w_scale"].compactMap { written[$0].map(Float.init) })
    }
  }

  // MARK: Refusals

  /// The kernel for a node over hand-made operands with the given options bytes.
  private func kernel(
    encodings: RuntimeTensor, scores: RuntimeTensor, anchors: RuntimeTensor, options: [UInt8],
    outputs: [RuntimeTensor] = (3..<7).map { makeTensor($0, .float32, []) }
  ) throws -> DetectionPostProcessKernel {
    try options.withUnsafeBytes { bytes in
      try DetectionPostProcessKernel(
        node: Node(
          index: 0, opName: "TFLite_Detection_PostProcess", version: 1, inputs: [encodings, scores, anchors],
          outputs: outputs, options: .none, customOptions: bytes,
          subgraph: { _ in throw KernelError.unsupported("none") }))
    }
  }

  private func committedOptions() throws -> [UInt8] {
    let path = TestModelManifest.directory.appendingPathComponent("detection/detection_postprocess_f32_fast_top1.tflite").path
    let model = try TFLiteModel(contentsOfFile: path)
    let node = try XCTUnwrap(model.model.subgraphs.first?.operators.first)
    return Array(model.customOptions(of: node))
  }

  func testRejectsMissingOrCorruptOptions() throws {
    let (encodings, scores, anchors) = (makeTensor(0, .float32, [1, 2, 4]), makeTensor(1, .float32, [1, 2, 7]), makeTensor(2, .float32, [2, 4]))
    for bytes in [[], [0x01, 0x02, 0x03], Array(try committedOptions().dropFirst(5))] as [[UInt8]] {
      XCTAssertThrowsError(try kernel(encodings: encodings, scores: scores, anchors: anchors, options: bytes))
    }
    XCTAssertNoThrow(try kernel(encodings: encodings, scores: scores, anchors: anchors, options: try committedOptions()))
  }

  func testRejectsShapesThatDisagreeAndInvertedBoxes() throws {
    let options = try committedOptions()
    let mismatched = try kernel(
      encodings: makeTensor(0, .float32, [1, 3, 4]), scores: makeTensor(1, .float32, [1, 2, 7]),
      anchors: makeTensor(2, .float32, [3, 4]), options: options)
    var context = PrepareContext(threadCount: 1)
    XCTAssertThrowsError(try mismatched.prepare(&context))
    let tooManyColumns = try kernel(
      encodings: makeTensor(0, .float32, [1, 2, 4]), scores: makeTensor(1, .float32, [1, 2, 9]),
      anchors: makeTensor(2, .float32, [2, 4]), options: options)
    XCTAssertThrowsError(try tooManyColumns.prepare(&context))
    XCTAssertThrowsError(
      try kernel(
        encodings: makeTensor(0, .int8, [1, 2, 4]), scores: makeTensor(1, .float32, [1, 2, 7]),
        anchors: makeTensor(2, .float32, [2, 4]), options: options))

    // An anchor of negative height decodes to a box whose top lies below its bottom.
    let anchors = makeTensor(2, .float32, [2, 4], bytes: bytesOf([Float](arrayLiteral: 0.5, 0.5, -0.2, 0.2, 0.3, 0.3, 0.1, 0.1)))
    let outputs = (3..<7).map { makeTensor($0, .float32, []) }
    let inverted = try kernel(
      encodings: makeTensor(0, .float32, [1, 2, 4]), scores: makeTensor(1, .float32, [1, 2, 7]), anchors: anchors,
      options: options, outputs: outputs)
    context = PrepareContext(threadCount: 1)
    try inverted.prepare(&context)
    for output in outputs { output.allocateOwnedMemory() }
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(context.scratchByteCount, 64), alignment: 64)
    defer { scratch.deallocate() }
    XCTAssertThrowsError(try inverted.eval(EvalContext(threadCount: 1, scratch: scratch))) {
      XCTAssertTrue("\($0)".contains("inverted box"), "\($0)")
    }
  }
}
