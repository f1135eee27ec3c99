// swift-tools-version:6.0
// A package outside SwiftTFLite that depends on it by path, as an app would, and builds the
// guides' snippets (Tests/FirebaseGuideTests/Snippets) against `import Firebase` in Swift 5 and
// Swift 6 language modes. Built and run by Scripts/check_guide_consumer.sh.
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder (`SwiftTFLite` in a clone, a worktree's name otherwise).
let repositoryFolder = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().lastPathComponent
let firebase = Target.Dependency.product(name: "Firebase", package: repositoryFolder)

let package = Package(
  name: "GuideConsumer",
  platforms: [.macOS(.v13), .iOS(.v16)],
  dependencies: [.package(path: "../..")],
  targets: [
    .executableTarget(
      name: "GuideSwift5", dependencies: [firebase],
      swiftSettings: [.swiftLanguageMode(.v5)]),
    .executableTarget(
      name: "GuideSwift6", dependencies: [firebase],
      swiftSettings: [.swiftLanguageMode(.v6)]),
  ]
)
