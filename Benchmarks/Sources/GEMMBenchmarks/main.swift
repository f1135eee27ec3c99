// GFLOP/s of the float GEMM per kernel kind (Swift kernel, generated AVX2+FMA, generated
// AVX-512F), one thread, B pre-packed, bias and RELU6, timed by the thread's CPU time (so another
// process on the same core lowers the figures less than wall time would).
//
//   swift run -c release --package-path Benchmarks gemm-benchmarks [M K N ...]
import Foundation
@_spi(Benchmarking) import TFLiteRuntime

/// MobileNetV2-like 1×1 convolutions (M = pixels, K = input channels, N = output channels) and a square product.
let defaultShapes = [(12544, 32, 16), (3136, 144, 24), (784, 192, 32), (196, 576, 96), (49, 960, 160), (512, 512, 512)]

let numbers = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let shapes =
  numbers.count >= 3
  ? stride(from: 0, to: numbers.count - 2, by: 3).map { (numbers[$0], numbers[$0 + 1], numbers[$0 + 2]) } : defaultShapes
let kinds = FloatGEMMBenchmark.KernelKind.allCases.filter(FloatGEMMBenchmark.isAvailable)

/// `text` padded with spaces to `width` characters (left-aligned).
func padded(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }

print(padded("M×K×N", 16) + kinds.map { padded($0.rawValue, 10) }.joined())
for (rows, depth, columns) in shapes {
  var line = padded("\(rows)×\(depth)×\(columns)", 16)
  for kind in kinds {
    let rate = FloatGEMMBenchmark.gigaflops(rows: rows, columns: columns, depth: depth, kind: kind) ?? .nan
    line += padded(String(format: "%.1f", rate), 10)
  }
  print(line)
}
