// swift-tools-version:6.0
// Benchmarks of SwiftTFLite on whole networks. A separate package so that it can be built in
// release mode with machine-specific flags (see run.sh) without touching the library's manifest.
import PackageDescription

let package = Package(
  name: "SwiftTFLiteBenchmarks",
  platforms: [.macOS(.v13)],
  dependencies: [.package(path: "..")],
  targets: [
    .executableTarget(name: "model-benchmarks", dependencies: ["TFLiteCommandLine"], path: "Sources/ModelBenchmarks")
  ],
  swiftLanguageModes: [.v6]
)
