import Foundation
import TFLiteFormat
import XCTest

final class NumPyFileTests: XCTestCase {
  private var directory = ""

  override func setUpWithError() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("NumPyFileTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    directory = url.path
  }

  override func tearDownWithError() throws {
    try FileManager.default.removeItem(atPath: directory)
  }

  func testWriteThenReadGivesNumPysBytes() throws {
    let path = directory + "/scores.npy"
    let array = try NumPyArray(parsing: NumPyFixtures.float32File)
    try array.write(toFile: path)
    XCTAssertEqual(try Array(Data(contentsOf: URL(fileURLWithPath: path))), NumPyFixtures.float32File)
    XCTAssertEqual(try NumPyArray(contentsOfFile: path), array)
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["scores.npy"], "no temporary file left")
  }

  func testReadingAFileNumPyWrote() throws {
    let path = directory + "/numpy.npy"
    try Data(NumPyFixtures.version3File).write(to: URL(fileURLWithPath: path))
    let array = try NumPyArray(contentsOfFile: path)
    XCTAssertEqual(try array.values(as: Int16.self), NumPyFixtures.versionSourceValues)
  }

  func testWritingReplacesAnExistingFile() throws {
    let path = directory + "/replace.npy"
    try NumPyArray(shape: [3], values: [Int8(1), 2, 3]).write(toFile: path)
    let replacement = try NumPyArray(shape: [1], values: [Double(4)])
    try replacement.write(toFile: path, version: .version2)
    XCTAssertEqual(try NumPyArray(contentsOfFile: path), replacement)
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["replace.npy"])
  }

  func testFileErrorsAreDescriptive() throws {
    XCTAssertThrowsError(try NumPyArray(contentsOfFile: directory + "/missing.npy")) { error in
      XCTAssertTrue("\(error)".contains("cannot open '\(self.directory)/missing.npy'"), "\(error)")
    }
    XCTAssertThrowsError(try NumPyArray(contentsOfFile: directory)) { error in
      XCTAssertTrue("\(error)".contains("is not a regular file"), "\(error)")
    }
    let array = try NumPyArray(shape: [1], values: [Float(1)])
    XCTAssertThrowsError(try array.write(toFile: directory + "/no/such/dir/x.npy")) { error in
      XCTAssertTrue("\(error)".contains("cannot create"), "\(error)")
    }
    XCTAssertThrowsError(try array.write(toFile: directory)) { error in
      XCTAssertTrue("\(error)".contains("cannot replace"), "\(error)")
    }
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [], "failed writes leave nothing behind")
  }

  func testAnEmptyFileIsRejected() throws {
    let path = directory + "/empty.npy"
    XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
    XCTAssertThrowsError(try NumPyArray(contentsOfFile: path)) { error in
      XCTAssertTrue("\(error)".contains("not an .npy file"), "\(error)")
    }
  }
}
