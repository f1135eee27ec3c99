// Times TFLiteImage's PNG decoder: `image-benchmarks FILE.png [RUNS]` decodes the file RUNS times
// (default 20, after one warm-up) and prints the median and minimum wall time in milliseconds as
// `png_decode median_ms min_ms`. Benchmarks/image_bench.sh runs it beside Pillow.
import Foundation
import TFLiteImage

let arguments = CommandLine.arguments
guard arguments.count >= 2, let data = FileManager.default.contents(atPath: arguments[1]) else {
  FileHandle.standardError.write("usage: image-benchmarks FILE.png [RUNS]\n".data(using: .utf8)!)
  exit(64)
}
let runs = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20
let bytes = [UInt8](data)
var checksum = 0
var times: [Double] = []
for run in 0...runs {
  let started = ContinuousClock.now
  let image = try PNG.decode(bytes)
  let elapsed = ContinuousClock.now - started
  checksum &+= Int(image.pixels[image.pixels.count / 2])
  if run > 0 { times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3) }
}
times.sort()
print(String(format: "png_decode %.3f %.3f", times[times.count / 2], times[0]), "(checksum \(checksum))")
