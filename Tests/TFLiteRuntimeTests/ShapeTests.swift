import XCTest

@testable import TFLiteRuntime

final class ShapeKernelTests: XCTestCase {
  func testShapeIsWrittenInTheOutputType() throws {
    for type in [ElementType.int32, .int64] {
      let input = makeTensor(0, .float32, [3, 1, 4])
      let output = makeTensor(1, type, [1])
      try runKernel(ShapeKernel.self, opName: "SHAPE", inputs: [input], outputs: [output])
      XCTAssertEqual(output.shape, [3])
      let written = type == .int32 ? elements(output, as: Int32.self).map(Int.init) : elements(output, as: Int64.self).map(Int.init)
      XCTAssertEqual(written, input.shape)
    }
    XCTAssertTrue(ShapeKernel.dependsOnlyOnInputShapes)
  }
}
