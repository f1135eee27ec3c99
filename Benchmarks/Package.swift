// swift-tools-version:6.0
// Benchmarks of SwiftTFLite on whole networks. A separate package so that it can be built in
// release mode with machine-specific flags (see run.sh) without touching the library's manifest.
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its directory: the repository checkout above this folder.
let repositoryIdentity = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .lastPathComponent

let package = Package(
  name: "SwiftTFLiteBenchmarks",
  platforms: [.macOS(.v13)],
  dependencies: [.package(path: "..")],
  targets: [
    .executableTarget(
      name: "model-benchmarks",
      dependencies: [.product(name: "TFLiteCommandLine", package: repositoryIdentity)],
      path: "Sources/ModelBenchmarks"),
    .executableTarget(
      name: "image-benchmarks",
      dependencies: [.product(name: "TFLiteImage", package: repositoryIdentity)],
      path: "Sources/ImageBenchmarks"),
    .executableTarget(
      name: "gemm-benchmarks",
      dependencies: [.product(name: "TFLiteRuntime", package: repositoryIdentity)],
      path: "Sources/GEMMBenchmarks"),
  ],
  swiftLanguageModes: [.v6]
)
