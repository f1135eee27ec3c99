// TFLite_Detection_PostProcess with uint8 box encodings and class scores but a FLOAT32 anchors
// constant that carries quantization parameters (TestModels/taskvision/
// postprocess_uint8_float_anchors.tflite, Scripts/make_taskvision_extra_fixtures.py). LiteRT
// reads the anchors as it reads uint8 encodings, so it uses the float constant's bytes,
// dequantized with the anchors' parameters; the outputs must equal LiteRT's (BUILTIN_REF), which
// differ from what the float values of the anchors would give.
import Foundation
import Testing

@testable import TensorFlowLite

@Suite struct DetectionAnchorQuirkTests {
  struct Expected: Decodable {
    var inputs: [[Int]]
    var boxes: [Float]
    var classes: [Float]
    var scores: [Float]
    var count: [Float]
  }

  @Test func uint8EncodingsWithFloatAnchorsMatchLiteRT() throws {
    let folder = ReferenceModels.directory.appendingPathComponent("taskvision")
    struct File: Decodable { var postprocess_uint8_float_anchors: Expected }
    let expected = try JSONDecoder().decode(
      File.self, from: Data(contentsOf: folder.appendingPathComponent("expected_extra.json"))
    ).postprocess_uint8_float_anchors
    let interpreter = try Interpreter(modelPath: folder.appendingPathComponent("postprocess_uint8_float_anchors.tflite").path)
    try interpreter.allocateTensors()
    for (index, values) in expected.inputs.enumerated() {
      try interpreter.copy(Data(values.map { UInt8($0) }), toInputAt: index)
    }
    try interpreter.invoke()
    let outputs = try (0..<4).map { index in
      try interpreter.output(at: index).data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
    #expect(outputs[3] == expected.count)
    #expect(expected.count[0] > 0)
    #expect(outputs[0] == expected.boxes)
    #expect(outputs[1] == expected.classes)
    #expect(outputs[2] == expected.scores)
  }
}
