// Times TFLiteImage; Benchmarks/image_bench.sh runs it beside Pillow on the same files.
//
//   image-benchmarks decode FILE [RUNS]               decode (EXIF orientation not applied)
//   image-benchmarks tensor FILE WIDTH HEIGHT [RUNS]  decode, EXIF orientation, bilinear stretch to
//                                                     WIDTH×HEIGHT, uint8 quantization (scale 1,
//                                                     zero point 0) into a tensor-sized buffer
//   image-benchmarks memory FILE                      one decode; peak resident memory
//
// Timing modes run RUNS times (default 10) after one warm-up and print
// `MODE cpu_median_ms cpu_min_ms wall_median_ms`: process CPU time, which a machine shared with
// other jobs inflates less than wall time. `memory` prints `memory baseline_kb peak_kb
// output_bytes file_bytes`: the process's peak resident set before the decode (the file already
// read into memory) and after it, from getrusage.
#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif
import Foundation
import TFLiteImage

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data((message + "\n").utf8))
  exit(64)
}

/// The file's bytes, read straight into one array (no second copy that would raise the peak).
func readFile(_ path: String) -> [UInt8] {
  guard let file = fopen(path, "rb") else { fail("cannot open \(path)") }
  defer { fclose(file) }
  fseek(file, 0, SEEK_END)
  let size = ftell(file)
  fseek(file, 0, SEEK_SET)
  return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
    count = fread(buffer.baseAddress, 1, size, file)
  }
}

/// Process CPU time in milliseconds.
func cpuMilliseconds() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
  return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) / 1e6
}

/// Peak resident set size of this process so far, in KiB.
func peakResidentKiB() -> Int {
  var usage = rusage()
  #if canImport(Darwin)
    getrusage(RUSAGE_SELF, &usage)
    return Int(usage.ru_maxrss) / 1024
  #else
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_maxrss)
  #endif
}

/// Runs `work` runs + 1 times and prints the medians and minimum of the last `runs`.
func time(_ name: String, runs: Int, _ work: () throws -> Int) throws {
  var cpu: [Double] = [], wall: [Double] = []
  var checksum = 0
  for run in 0...runs {
    let (cpuStart, wallStart) = (cpuMilliseconds(), ContinuousClock.now)
    checksum &+= try work()
    let elapsed = ContinuousClock.now - wallStart
    if run > 0 {
      cpu.append(cpuMilliseconds() - cpuStart)
      wall.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
    }
  }
  cpu.sort()
  wall.sort()
  let summary = String(format: "%.3f %.3f %.3f", cpu[runs / 2], cpu[0], wall[runs / 2])
  print(name, summary, "(checksum \(checksum))")
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else { fail("usage: image-benchmarks decode|tensor|memory FILE [WIDTH HEIGHT] [RUNS]") }
let bytes = readFile(arguments[1])
switch arguments[0] {
case "decode":
  try time("decode", runs: arguments.count > 2 ? Int(arguments[2]) ?? 10 : 10) {
    let image = try decodeImage(bytes, appliesOrientation: false)
    return Int(image.pixels[image.pixels.count / 2])
  }
case "tensor":
  guard arguments.count >= 4, let width = Int(arguments[2]), let height = Int(arguments[3]) else {
    fail("usage: image-benchmarks tensor FILE WIDTH HEIGHT [RUNS]")
  }
  var tensor = [UInt8](repeating: 0, count: width * height * 3)
  try time("tensor", runs: arguments.count > 4 ? Int(arguments[4]) ?? 10 : 10) {
    let image = try decodeImage(bytes)
    let fitted = try image.fitted(width: width, height: height, fit: .stretch)
    try tensor.withUnsafeMutableBytes { buffer in try fitted.write(into: buffer, as: .uint8(scale: 1, zeroPoint: 0)) }
    return Int(tensor[tensor.count / 2])
  }
case "memory":
  let baseline = peakResidentKiB()
  let image = try decodeImage(bytes, appliesOrientation: false)
  print("memory \(baseline) \(peakResidentKiB()) \(image.pixels.count) \(bytes.count)")
default:
  fail("unknown mode \(arguments[0])")
}
