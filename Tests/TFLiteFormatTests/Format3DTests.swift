import Foundation
import XCTest

@testable import TFLiteFormat

/// Schema 3d and 2026 additions read from `TestModels/format3d` (written field by field with
/// LiteRT's own schema classes by `Scripts/make_format_3d_fixtures.py`): external buffers, the
/// INT2/UINT4/FLOAT8 types, blockwise and multi-axis quantization details, and every bad external
/// buffer refused with its reason.
final class Format3DTests: XCTestCase {
  private static let folder = TestModelFiles.directory.appendingPathComponent("format3d")

  private func path(_ name: String) -> String { Self.folder.appendingPathComponent(name).path }

  /// The generator's manifest entries: name and the text the load error must contain (or
  /// `loads` / `unsupported` for models that load).
  private func manifestEntries() throws -> [(name: String, expect: String)] {
    let data = try Data(contentsOf: Self.folder.appendingPathComponent("manifest.json"))
    let manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let models = try XCTUnwrap(manifest["models"] as? [[String: Any]])
    return try models.map { (try XCTUnwrap($0["name"] as? String), try XCTUnwrap($0["expect"] as? String)) }
  }

  func testExternalBufferDataIsReadFromTheFileBesideTheModel() throws {
    let model = try TFLiteModel(contentsOfFile: path("external_fc.tflite"))
    let tensors = model.model.subgraphs[0].tensors
    // The generator wrote W[i] = i / 8 - 0.5 at offset 64 and the bias at offset 128.
    let weights = Array(model.tensorData(tensors[1]).bindMemory(to: Float.self))
    XCTAssertEqual(weights, (0..<12).map { Float($0) / 8 - 0.5 })
    XCTAssertEqual(Array(model.tensorData(tensors[2]).bindMemory(to: Float.self)), [0.5, -2.0, 1.0])
    let external = try XCTUnwrap(model.externalBuffer(of: tensors[1]))
    XCTAssertEqual([external.id, external.group], [1, 0])
    XCTAssertEqual([external.offset, external.length], [64, 48])
    XCTAssertEqual(external.packing, "unpacked")
    XCTAssertEqual(model.model.externalBufferGroups.map(\.name), ["external_fc_weights.bin"])
    XCTAssertEqual(model.externalFileSize(ofGroup: 0), 140)
    XCTAssertEqual(model.externalFilePath(ofGroup: 0), path("external_fc_weights.bin"))
    XCTAssertNil(model.externalBuffer(of: tensors[0]))
  }

  func testModelReadFromMemoryNeedsTheFolderOfItsExternalFiles() throws {
    let bytes = try [UInt8](Data(contentsOf: Self.folder.appendingPathComponent("external_fc.tflite")))
    XCTAssertThrowsError(try TFLiteModel(bytes: bytes)) { error in
      XCTAssertTrue("\(error)".contains("read from memory with no folder"), "\(error)")
      XCTAssertTrue("\(error)".contains("tensor 1 'weights'"), "\(error)")
    }
    let model = try TFLiteModel(bytes: bytes, externalFilesDirectory: Self.folder.path)
    XCTAssertEqual(model.tensorData(model.model.subgraphs[0].tensors[2]).count, 12)
  }

  func testBadExternalBuffersAndDetailsAreRefusedWithTheirReason() throws {
    let bad = try manifestEntries().filter { !["loads", "unsupported"].contains($0.expect) }
    XCTAssertEqual(bad.count, 9)
    for (name, expected) in bad {
      XCTAssertThrowsError(try TFLiteModel(contentsOfFile: path("\(name).tflite")), name) { error in
        XCTAssertTrue(error is ModelFormatError, "\(name): \(error)")
        XCTAssertTrue("\(error)".contains(expected), "\(name): \(error)")
      }
    }
  }

  func testGroupNamesThatLeaveTheModelFolderAreRefused() {
    for name in ["../w.bin", "a/../../w.bin", "a\\..\\w.bin", "/etc/passwd", "\\\\server\\share", "C:\\w.bin", ""] {
      XCTAssertNotNil(ExternalBufferFiles.problem(withName: name), name)
    }
    for name in ["w.bin", "weights/part-1.bin", "..w.bin", "a..b/c"] {
      XCTAssertNil(ExternalBufferFiles.problem(withName: name), name)
    }
  }

  func testTypesOf2026AreDecodedWithLiteRTsValues() throws {
    let model = try TFLiteModel(contentsOfFile: path("types_2026.tflite"))
    let constants = model.model.subgraphs[0].tensors.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
    // LiteRT 2.3.0's schema: INT2 = 19, UINT4 = 20, FLOAT8_E4M3FN = 21, FLOAT8_E5M2 = 22.
    XCTAssertEqual(constants.map(\.type.rawValue), [19, 20, 21, 22])
    XCTAssertEqual(constants.map(\.type.name), ["INT2", "UINT4", "FLOAT8_E4M3FN", "FLOAT8_E5M2"])
    XCTAssertEqual(constants.map { model.tensorData($0).count }, [1, 2, 4, 4])
  }

  func testBlockwiseAndMultiAxisDetailsAreDecoded() throws {
    let model = try TFLiteModel(contentsOfFile: path("quantization_2026.tflite"))
    let tensors = model.model.subgraphs[0].tensors
    XCTAssertEqual(
      tensors[1].quantization?.details,
      .blockwiseQuantization(BlockwiseQuantization(scales: 2, zeroPoints: -1, blockSize: 4, blockShape: [1, 4])))
    XCTAssertEqual(
      tensors[4].quantization?.details,
      .multiAxisQuantization(MultiAxisQuantization(scales: 2, zeroPoints: -1, blockSize: 0, quantizedDimensions: [0, 1])))
  }
}
