// The trained demo detector (TestModels/demo_detector, Scripts/make_demo_detector.py) run through
// the public Interpreter on its test scenes, decoded by TFLiteImage: the outputs equal LiteRT's
// (BUILTIN_REF, on the pixels Pillow decodes, which TFLiteImage's decoders equal), and the boxes
// find the shapes the generator drew (scenes.json holds where it drew them).
import Foundation
import TFLiteImage
import Testing

@testable import TensorFlowLite

@Suite struct DemoDetectorTests {
  static let folder = ReferenceModels.directory.appendingPathComponent("demo_detector")

  /// One drawn object: its label and box in pixels (left, top, right, bottom).
  struct DrawnObject {
    let label: String
    let box: [Double]
  }

  /// One detection: label index, score and box in pixels (left, top, right, bottom).
  struct Detection {
    let classIndex: Int
    let score: Float
    let box: [Double]
  }

  /// The scenes.json entries: file, size and drawn objects.
  static func scenes() throws -> (labels: [String], scenes: [(file: String, width: Int, height: Int, objects: [DrawnObject])]) {
    let data = try Data(contentsOf: folder.appendingPathComponent("scenes.json"))
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let labels = try #require(root["labels"] as? [String])
    let scenes = try #require(root["scenes"] as? [[String: Any]]).map { scene in
      (file: scene["file"] as? String ?? "", width: scene["width"] as? Int ?? 0, height: scene["height"] as? Int ?? 0,
       objects: (scene["objects"] as? [[String: Any]] ?? []).map {
         DrawnObject(label: $0["label"] as? String ?? "", box: ($0["box"] as? [NSNumber] ?? []).map(\.doubleValue))
       })
    }
    return (labels, scenes)
  }

  /// Runs the detector on `file`, stretched to 320×320 when it has another size; returns the four outputs.
  static func detect(_ interpreter: Interpreter, file: String) throws -> [[Float]] {
    let image = try decodeImage([UInt8](try Data(contentsOf: folder.appendingPathComponent(file))))
    var input = [UInt8](repeating: 0, count: 320 * 320 * 3)
    if image.width == 320, image.height == 320 {
      input = image.pixels
    } else {
      let fitted = try image.fitted(width: 320, height: 320, fit: .stretch)
      try input.withUnsafeMutableBytes { try fitted.write(into: $0, as: .uint8(scale: 1, zeroPoint: 0)) }
    }
    try interpreter.copy(Data(input), toInputAt: 0)
    try interpreter.invoke()
    return try (0..<4).map { index in
      try interpreter.output(at: index).data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
  }

  static func detections(_ outputs: [[Float]], width: Int, height: Int, threshold: Float = 0.5) -> [Detection] {
    (0..<Int(outputs[3][0])).filter { outputs[2][$0] >= threshold }.map { index in
      let box = outputs[0][(4 * index)..<(4 * index + 4)].map(Double.init)  // top, left, bottom, right
      return Detection(
        classIndex: Int(outputs[1][index]), score: outputs[2][index],
        box: [box[1] * Double(width), box[0] * Double(height), box[3] * Double(width), box[2] * Double(height)])
    }
  }

  static func intersectionOverUnion(_ a: [Double], _ b: [Double]) -> Double {
    let overlap = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
    let union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - overlap
    return overlap / union
  }

  @Test func outputsEqualLiteRTOnTheSquareScenes() throws {
    let interpreter = try Interpreter(modelPath: Self.folder.appendingPathComponent("demo_detector.tflite").path)
    try interpreter.allocateTensors()
    for number in 1...3 {
      let file = try #require(try Self.scenes().scenes.first { $0.file.hasPrefix("scene_\(number).") }).file
      let outputs = try Self.detect(interpreter, file: file)
      let expected = try (0..<4).map { index in
        try ReferenceModels.array("demo_detector/scene_\(number).output_\(index).npy").floatValues()
      }
      // Fast NMS writes only the first `count` slots (LiteRT leaves the rest as they were).
      let count = Int(expected[3][0])
      #expect(outputs[3] == expected[3], "\(file): number of detections")
      #expect(Array(outputs[0].prefix(4 * count)) == Array(expected[0].prefix(4 * count)), "\(file): boxes")
      #expect(Array(outputs[1].prefix(count)) == Array(expected[1].prefix(count)), "\(file): classes")
      #expect(Array(outputs[2].prefix(count)) == Array(expected[2].prefix(count)), "\(file): scores")
    }
  }

  @Test func boxesFindTheDrawnShapes() throws {
    let interpreter = try Interpreter(modelPath: Self.folder.appendingPathComponent("automl/model.tflite").path)
    try interpreter.allocateTensors()
    let (labels, scenes) = try Self.scenes()
    var drawn = 0, found = 0, falseDetections = 0
    for scene in scenes {
      let detections = Self.detections(try Self.detect(interpreter, file: scene.file), width: scene.width, height: scene.height)
      func matches(_ object: DrawnObject, _ detection: Detection) -> Bool {
        labels[detection.classIndex] == object.label && Self.intersectionOverUnion(object.box, detection.box) >= 0.5
      }
      drawn += scene.objects.count
      found += scene.objects.filter { object in detections.contains { matches(object, $0) } }.count
      falseDetections += detections.filter { detection in !scene.objects.contains { matches($0, detection) } }.count
    }
    // Every drawn shape but at most one is found with its label and IoU ≥ 0.5, with at most one stray box.
    #expect(found >= drawn - 1, "found \(found) of \(drawn)")
    #expect(falseDetections <= 1)
  }
}
