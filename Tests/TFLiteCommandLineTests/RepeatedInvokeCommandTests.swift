import Foundation
import XCTest

/// `tflite bench` and `tflite compare --runs` copy the inputs once and invoke again and again,
/// relying on `invoke()` leaving them unchanged (as LiteRT does): repeated invokes of TestModels
/// networks give bit-identical outputs, still LiteRT's.
final class RepeatedInvokeCommandTests: CommandTestCase {
  /// `TestModels/networks/<name>` (add the extension).
  private func network(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("TestModels/networks/\(name)").path
  }

  func testBenchSeesIdenticalOutputsOnEveryInvokeOfOneCopy() throws {
    for name in ["efficientnet_mini_float", "mobilenet_mini_int8"] {
      let result = run("bench", network(name) + ".tflite", "--runs", "3", "--warmup", "1", "--json")
      XCTAssertEqual(result.code, 0, name + result.output.standardOutput + result.output.standardError)
      let object = try XCTUnwrap(
        JSONSerialization.jsonObject(with: Data(result.output.standardOutput.utf8)) as? [String: Any])
      XCTAssertEqual(object["outputs_identical"] as? Bool, true, name)
    }
  }

  func testCompareWithRunsGivesBitIdenticalOutputsThatMatchLiteRT() throws {
    let base = network("mobilenet_mini_int8")
    let result = run(
      "compare", base + ".tflite", "--input", base + ".input_0.npy", "--expected", base + ".output_0.npy",
      "--atol", "0", "--rtol", "0", "--runs", "4")
    XCTAssertEqual(result.code, 0, result.output.standardOutput + result.output.standardError)
    let text = result.output.standardOutput
    XCTAssertTrue(text.contains("4 invokes of one input copy gave bit-identical outputs"), text)
    XCTAssertTrue(text.contains("all outputs within tolerance"), text)
  }
}
