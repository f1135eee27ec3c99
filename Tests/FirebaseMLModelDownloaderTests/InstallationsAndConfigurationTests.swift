import Foundation
import XCTest

@testable import FirebaseMLModelDownloader

/// The Firebase Installations token flow, app configuration, and keeping secrets out of errors and logs.
final class InstallationsAndConfigurationTests: DownloaderTestCase {
  private let conditions = ModelDownloadConditions()

  func testRegistrationFailingWith500IsRetriedOnce() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 10_000, seed: 30))
    try await fixture.inject("register", "status", ["status": 500])
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())

    _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    let registrations = try await fixture.requests().filter { $0.path.hasSuffix("/installations/") }
    XCTAssertEqual(registrations.count, 2)
  }

  func testRegistrationFailuresBecomeTheAuthTokenError() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 10_000, seed: 31))
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    for (status, times) in [(500, 2), (403, 1)] {
      try await fixture.inject("register", "status", ["status": status, "times": times])
      let description = await internalErrorDescription {
        _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
      }
      XCTAssertEqual(description, "Error retrieving auth token.", "HTTP \(status)")
    }
    let modelInfoCalls = try await fixture.requests().filter { $0.path.hasSuffix(":download") }
    XCTAssertTrue(modelInfoCalls.isEmpty)
  }

  func testTokenExpiringWithinAnHourIsRefreshed() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 10_000, seed: 32))
    try await fixture.configure(["tokenExpiresIn": "1800s"])
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    let requests = try await fixture.requests()
    let refresh = try XCTUnwrap(requests.first { $0.path.hasSuffix("/authTokens:generate") })
    XCTAssertEqual(requests.filter { $0.path.hasSuffix("/installations/") }.count, 1)
    XCTAssertEqual(refresh.method, "POST")
    XCTAssertTrue(refresh.headers["authorization"]?.hasPrefix("FIS_v2 fis-refresh-") == true)
    XCTAssertEqual(refresh.headers["x-goog-api-key"], FirebaseFixture.apiKey)
    let infos = requests.filter { $0.path.hasSuffix(":download") }
    XCTAssertEqual(infos.count, 2)
    XCTAssertNotEqual(
      infos[0].headers["x-goog-firebase-installations-auth"], infos[1].headers["x-goog-firebase-installations-auth"],
      "the second call uses the refreshed token")
  }

  func testForgottenInstallationIsRegisteredAgain() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 10_000, seed: 33))
    try await fixture.configure(["tokenExpiresIn": "60s"])
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    try await fixture.configure(["forgetInstallations": true])

    _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    let installationCalls = try await fixture.requests().filter { $0.path.hasPrefix("/v1/") }
    XCTAssertEqual(installationCalls.map(\.method), ["POST", "POST", "DELETE", "POST"])
    XCTAssertTrue(installationCalls[1].path.hasSuffix("/authTokens:generate"), "the refresh is answered 404")
    XCTAssertTrue(installationCalls[3].path.hasSuffix("/installations/"), "then a new registration")
  }

  func testInstallationIsKeptAcrossDownloaderInstances() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 10_000, seed: 34))
    let app = try makeFirebaseApp()
    _ = try await firebaseDownloader(fixture, app: app).getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    _ = try await firebaseDownloader(fixture, app: app).getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    let registrations = try await fixture.requests().filter { $0.path.hasSuffix("/installations/") }
    XCTAssertEqual(registrations.count, 1)
    let saved = try FileManager.default.contentsOfDirectory(atPath: storageDirectory.path).filter { $0.hasPrefix(".installation") }
    XCTAssertEqual(saved.count, 1)
    let attributes = try FileManager.default.attributesOfItem(atPath: storageDirectory.appendingPathComponent(saved[0]).path)
    XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600, "only the user can read the refresh token")
  }

  func testFIDHasTheInstallationsFormat() {
    for _ in 0..<50 {
      let fid = InstallationsClient.makeFID()
      XCTAssertEqual(fid.count, 22)
      XCTAssertTrue("cdef".contains(fid.first ?? "x"), "high nibble 0111: \(fid)")
      XCTAssertTrue(fid.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, fid)
    }
  }

  func testMissingProjectIDOrAPIKeyFailsSynchronously() async throws {
    let downloader = ModelDownloader(source: .firebaseML(app: try makeFirebaseApp(apiKey: nil)), settings: settings())
    let expected = DownloadError.internalError(description: "Unable to retrieve project ID and/or API key for Firebase app.")
    var delivered: DownloadError?

    downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions) { result in
      if case .failure(let error) = result { delivered = error }
    }

    XCTAssertEqual(delivered, expected, "delivered before getModel returned")
    await assertFails(with: expected) {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }
    let noProject = ModelDownloader(source: .firebaseML(app: try makeFirebaseApp(projectID: nil)), settings: settings())
    await assertFails(with: expected) {
      _ = try await noProject.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }
  }

  func testEmptyAndUnsafeNamesAreRejectedWithoutNetwork() async throws {
    let fixture = try startFirebaseFixture()
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    await assertFails(with: .emptyModelName) {
      _ = try await downloader.getModel(name: "", downloadType: .latestModel, conditions: conditions)
    }
    for name in ["../escape", "a/b", "/etc/passwd", "nul\u{0}byte", ".hidden", "..", String(repeating: "x", count: 101), "two@@parts", "é"] {
      await assertFails(with: .invalidArgument) {
        _ = try await downloader.getModel(name: name, downloadType: .latestModel, conditions: conditions)
      }
    }
    let requests = try await fixture.requests()
    XCTAssertTrue(requests.isEmpty)
    XCTAssertFalse(FileManager.default.fileExists(atPath: temporaryDirectory.appendingPathComponent("escape").path))
  }

  func testDownloaderInstancesAreCachedPerApp() throws {
    let app = try makeFirebaseApp()
    let first = ModelDownloader.modelDownloader(app: app)
    XCTAssertTrue(first === ModelDownloader.modelDownloader(app: app))
    XCTAssertFalse(first === ModelDownloader.modelDownloader(app: try makeFirebaseApp()))
    var deleted = false
    app.delete { deleted = $0 }
    XCTAssertTrue(deleted)
    XCTAssertNil(FirebaseApp.app(name: app.name))
    XCTAssertFalse(first === ModelDownloader.modelDownloader(app: app), "deleting the app drops its downloader")
  }

  func testWithoutDefaultAppGetModelFailsInsteadOfCrashing() async throws {
    XCTAssertNil(FirebaseApp.app(), "no test configures the default app")
    await assertFails(with: .internalError(description: "Default Firebase app not configured.")) {
      _ = try await ModelDownloader.modelDownloader().getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }
  }

  func testOptionsAreReadFromGoogleServiceInfoPlist() throws {
    let plist: [String: Any] = [
      "API_KEY": "AIzaPlistKey", "PROJECT_ID": "plist-project", "GOOGLE_APP_ID": "1:42:ios:abc", "GCM_SENDER_ID": "42",
      "BUNDLE_ID": "com.example.plist",
    ]
    let path = temporaryDirectory.appendingPathComponent("GoogleService-Info.plist")
    try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: path)

    let options = try XCTUnwrap(FirebaseOptions(contentsOfFile: path.path))

    XCTAssertEqual(options.apiKey, "AIzaPlistKey")
    XCTAssertEqual(options.projectID, "plist-project")
    XCTAssertEqual(options.googleAppID, "1:42:ios:abc")
    XCTAssertEqual(options.gcmSenderID, "42")
    XCTAssertEqual(options.bundleID, "com.example.plist")
    XCTAssertNil(FirebaseOptions(contentsOfFile: temporaryDirectory.appendingPathComponent("missing.plist").path))
    FirebaseApp.configure(name: "bad name!", options: options)
    XCTAssertNil(FirebaseApp.app(name: "bad name!"))
  }

  func testAPIKeyAndTokensNeverReachErrorsOrLogs() async throws {
    let fixture = try startFirebaseFixture()
    try await fixture.publish("digits", bytes: syntheticModel(size: 10_000, seed: 35))
    let downloader = firebaseDownloader(fixture, app: try makeFirebaseApp())
    _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    let token = try await fixture.requests().compactMap { $0.headers["x-goog-firebase-installations-auth"] }.first ?? "?"
    try await fixture.inject(
      "modelInfo", "status", ["status": 500, "message": "API key \(FirebaseFixture.apiKey) with token \(token) rejected."])

    let description = await internalErrorDescription {
      _ = try await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)
    }
    try await fixture.inject("download", "cut", ["bytes": 10])
    try await fixture.publish("digits", bytes: syntheticModel(size: 10_000, seed: 36))
    _ = try? await downloader.getModel(name: "digits", downloadType: .latestModel, conditions: conditions)

    XCTAssertEqual(description, "API key <redacted> with token <redacted> rejected.")
    XCTAssertFalse(log.lines.isEmpty)
    for line in log.lines {
      XCTAssertFalse(line.contains(FirebaseFixture.apiKey), line)
      XCTAssertFalse(line.contains(token), line)
      XCTAssertFalse(line.contains("fis-refresh-"), line)
    }
  }
}
