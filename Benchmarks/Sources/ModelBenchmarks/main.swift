import Foundation
import TFLiteCommandLine

// Times whole networks: the `network` entries of TestModels/manifest.json, of
// Benchmarks/Models/manifest.json (or every .tflite file under Benchmarks/Models/ without one) and
// MediaPipe's published models in Benchmarks/Models/mediapipe/
// (`Scripts/fetch_mediapipe_benchmark_models.sh`), or the files and directories given; one thread
// by default.
//
//   model-benchmarks [--runs N] [--warmup N] [--threads N] [--json] [--cpu-times] [--list] [PATH...]
//
// Prints a table, or with --json one object per model and line:
// {"model":"TestModels/networks/x.tflite", "load_ms":..., "min_ms":..., "median_ms":..., "max_ms":..., "arena_bytes":...}
// and {"model":..., "error":"..."} for a model that cannot run.

/// The command line of the benchmark executable.
struct BenchmarkOptions {
  /// Timed invocations per model.
  var runs = 50
  /// Untimed invocations first.
  var warmupRuns = 5
  /// Threads the kernels may use.
  var threadCount = 1
  /// One JSON object per line instead of a table.
  var printsJSON = false
  /// Read the process CPU time around every timed invoke (`cpu_median_ms` in the JSON).
  var timesCPU = false
  /// Only print the model paths that would be timed.
  var listsModels = false
  /// Files and directories to time.
  var paths: [String] = []

  /// Parses `arguments` (without the program name).
  init(_ arguments: [String]) throws {
    var remaining = arguments[...]
    func count(after option: String) throws -> Int {
      guard let text = remaining.popFirst(), let value = Int(text), value >= 0 else {
        throw CommandLineError(message: "\(option) needs a non-negative whole number")
      }
      return value
    }
    while let argument = remaining.popFirst() {
      switch argument {
      case "--runs": runs = max(try count(after: argument), 1)
      case "--warmup": warmupRuns = try count(after: argument)
      case "--threads": threadCount = max(try count(after: argument), 1)
      case "--json": printsJSON = true
      case "--cpu-times": timesCPU = true
      case "--list": listsModels = true
      default:
        guard !argument.hasPrefix("--") else { throw CommandLineError(message: "unknown option \(argument)") }
        paths.append(argument)
      }
    }
    if paths.isEmpty { paths = ["TestModels", "Benchmarks/Models", "Benchmarks/Models/mediapipe"] }
  }
}

/// A mistake on the command line.
struct CommandLineError: Error { var message: String }

/// The models to time under `path`: the file itself, the `network` entries of a directory's
/// manifest.json, or every .tflite file below a directory without one.
func models(under path: String) -> [String] {
  var isDirectory: ObjCBool = false
  guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
  guard isDirectory.boolValue else { return [path] }
  if let manifest = try? TestModelManifest(directory: path) {
    return manifest.models.filter { $0.kind == "network" }.map { manifest.resolve($0.file) }.sorted()
  }
  let files = FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []
  return files.filter { $0.hasSuffix(".tflite") }.map { (path as NSString).appendingPathComponent($0) }.sorted()
}

/// `"text"` with JSON escapes.
func jsonString(_ text: String) -> String {
  let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
  return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
}

do {
  let options = try BenchmarkOptions(Array(CommandLine.arguments.dropFirst()))
  var listed = Set<String>()
  // A directory without a manifest lists its subdirectories' models too: each model once.
  let modelPaths = options.paths.flatMap(models(under:)).filter { listed.insert(($0 as NSString).standardizingPath).inserted }
  if options.listsModels {
    modelPaths.forEach { print($0) }
    exit(0)
  }
  let width = max(modelPaths.map(\.count).max() ?? 0, 5)
  if !options.printsJSON {
    print("model".padding(toLength: width, withPad: " ", startingAt: 0) + "   load ms  median ms     min ms     max ms   arena KiB")
  }
  for path in modelPaths {
    do {
      let result = try ModelBenchmark.measure(
        modelPath: path, threadCount: options.threadCount, runs: options.runs, warmupRuns: options.warmupRuns,
        timesCPU: options.timesCPU)
      if options.printsJSON {
        print("{\"model\":\(jsonString(path)), " + result.json().dropFirst())
      } else {
        let columns = [result.loadMilliseconds, result.median, result.minimum, result.maximum, Double(result.arenaByteCount) / 1024]
        print(path.padding(toLength: width, withPad: " ", startingAt: 0) + columns.map { String(format: " %10.3f", $0) }.joined())
      }
    } catch {
      let message = "\(error)".split(separator: "\n").joined(separator: "; ")
      print(options.printsJSON ? "{\"model\":\(jsonString(path)), \"error\":\(jsonString(message))}" : "\(path)  cannot run: \(message)")
    }
  }
} catch let error as CommandLineError {
  FileHandle.standardError.write(Data("model-benchmarks: \(error.message)\n".utf8))
  exit(64)
}
