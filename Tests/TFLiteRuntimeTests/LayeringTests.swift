import Foundation
import XCTest

/// The runtime's layers, lowest first: the linear-algebra and fixed-point core (target
/// `TFLiteLinearAlgebra`), the kernels (`Kernels/`), then lowering and execution (`Core/`). The first
/// boundary is the compiler's; kernels and execution are folders of one module, so this test stands
/// in for the compiler there: a kernel must not name a type of lowering or execution.
final class LayeringTests: XCTestCase {
  private static let runtimeSources = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Sources/TFLiteRuntime")

  /// The Swift files below `folder` of the runtime's sources, with their text.
  private func sources(in folder: String) throws -> [(name: String, text: String)] {
    let root = Self.runtimeSources.appendingPathComponent(folder)
    guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
    return try walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.map {
      ("\(folder)/\($0.lastPathComponent)", try String(contentsOf: $0, encoding: .utf8))
    }
  }

  /// The names of the types and protocols declared in `files`.
  private func declaredTypes(_ files: [(name: String, text: String)]) throws -> Set<String> {
    let declaration = try NSRegularExpression(pattern: #"\b(?:struct|class|enum|protocol|typealias)\s+([A-Z]\w*)"#)
    var names: Set<String> = []
    for file in files {
      let text = file.text as NSString
      for match in declaration.matches(in: file.text, range: NSRange(location: 0, length: text.length)) {
        names.insert(text.substring(with: match.range(at: 1)))
      }
    }
    return names
  }

  /// The capitalized words `text` uses outside comments, less its generic parameter names.
  private func namesUsed(in text: String) throws -> Set<String> {
    let code = text.split(separator: "\n")
      .map { line in
        line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
      }
      .joined(separator: "\n")
    let word = try NSRegularExpression(pattern: #"\b[A-Z]\w*"#)
    let generic = try NSRegularExpression(pattern: #"[<,]\s*([A-Z]\w*)\s*:"#)
    let ns = code as NSString
    let range = NSRange(location: 0, length: ns.length)
    let words = Set(word.matches(in: code, range: range).map { ns.substring(with: $0.range) })
    let parameters = Set(generic.matches(in: code, range: range).map { ns.substring(with: $0.range(at: 1)) })
    return words.subtracting(parameters)
  }

  /// The linear-algebra and fixed-point layer is its own SwiftPM target (`TFLiteLinearAlgebra`), so the
  /// compiler refuses any reference upward; this checks it keeps importing only the system.
  func testLinearAlgebraImportsOnlyTheSystem() throws {
    let root = Self.runtimeSources.deletingLastPathComponent().appendingPathComponent("TFLiteLinearAlgebra")
    guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else {
      return XCTFail("Sources/TFLiteLinearAlgebra was not found")
    }
    let files = walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    XCTAssertGreaterThan(files.count, 8, "the GEMM and Quantization sources were not found")
    // Synchronization: the toolchain's atomics, for ParallelWork's helper threads.
    let system: Set<String> = ["Glibc", "Musl", "Darwin", "Dispatch", "Synchronization"]
    let importLine = try NSRegularExpression(pattern: #"^\s*(?:@\w+(?:\(\w+\))?\s+)*import\s+(\w+)"#, options: .anchorsMatchLines)
    for file in files {
      let text = try String(contentsOf: file, encoding: .utf8)
      let ns = text as NSString
      for match in importLine.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
        let module = ns.substring(with: match.range(at: 1))
        XCTAssertTrue(system.contains(module), "\(file.lastPathComponent) imports \(module)")
      }
    }
  }

  /// Control-flow kernels run other subgraphs, but only through `Node.subgraph`, as TFLite Micro's
  /// kernels reach the graph through their context; nothing else of execution is named.
  func testKernelsNameNothingOfLoweringOrExecution() throws {
    let lowering = try declaredTypes(try sources(in: "Core/Lowering")).union(["ModelRunner", "MemoryPlan"])
    for file in try sources(in: "Kernels") {
      let upward = try namesUsed(in: file.text).intersection(lowering)
      XCTAssertTrue(upward.isEmpty, "\(file.name) names \(upward.sorted()), declared in lowering or execution")
    }
  }
}
