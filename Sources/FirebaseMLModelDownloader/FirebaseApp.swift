import Foundation

/// The settings of a Firebase project that the model downloader needs, as in FirebaseCore.
public final class FirebaseOptions {
  /// The API key (`API_KEY`); sent only to Firebase's servers, never logged.
  public var apiKey: String?
  /// The project ID (`PROJECT_ID`).
  public var projectID: String?
  /// The app ID (`GOOGLE_APP_ID`), used to register a Firebase installation.
  public var googleAppID: String
  /// The Cloud Messaging sender ID (`GCM_SENDER_ID`); stored, unused by the downloader.
  public var gcmSenderID: String
  /// The bundle identifier (`BUNDLE_ID`), sent as `x-ios-bundle-identifier`; defaults to the main bundle's.
  public var bundleID: String

  /// Creates options from the two values FirebaseCore requires; set ``apiKey`` and ``projectID`` next.
  public init(googleAppID: String, gcmSenderID: String) {
    self.googleAppID = googleAppID
    self.gcmSenderID = gcmSenderID
    self.bundleID = Bundle.main.bundleIdentifier ?? ""
  }

  /// Reads a `GoogleService-Info.plist`; nil when the file is unreadable or lacks `GOOGLE_APP_ID`.
  public convenience init?(contentsOfFile plistPath: String) {
    guard let data = FileManager.default.contents(atPath: plistPath),
      let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
      let appID = plist["GOOGLE_APP_ID"] as? String
    else { return nil }
    self.init(googleAppID: appID, gcmSenderID: plist["GCM_SENDER_ID"] as? String ?? "")
    apiKey = plist["API_KEY"] as? String
    projectID = plist["PROJECT_ID"] as? String
    if let bundleID = plist["BUNDLE_ID"] as? String { self.bundleID = bundleID }
  }

  /// Options read from `GoogleService-Info.plist` in the main bundle, or else in the current directory.
  public static func defaultOptions() -> FirebaseOptions? {
    let candidates = [
      Bundle.main.path(forResource: "GoogleService-Info", ofType: "plist"),
      FileManager.default.currentDirectoryPath + "/GoogleService-Info.plist",
    ]
    for case let path? in candidates {
      if let options = FirebaseOptions(contentsOfFile: path) { return options }
    }
    return nil
  }

  /// A copy of the current values.
  var snapshot: Snapshot {
    Snapshot(apiKey: apiKey, projectID: projectID, googleAppID: googleAppID, gcmSenderID: gcmSenderID, bundleID: bundleID)
  }

  /// Creates options holding `snapshot`'s values.
  convenience init(_ snapshot: Snapshot) {
    self.init(googleAppID: snapshot.googleAppID, gcmSenderID: snapshot.gcmSenderID)
    apiKey = snapshot.apiKey
    projectID = snapshot.projectID
    bundleID = snapshot.bundleID
  }

  /// Immutable copy of the options, as an app keeps them after `configure`.
  struct Snapshot: Sendable, Hashable {
    var apiKey: String?
    var projectID: String?
    var googleAppID: String
    var gcmSenderID: String
    var bundleID: String
  }
}

/// A configured Firebase app: a name and the options it was configured with.
public final class FirebaseApp: Sendable {
  /// Name of the app that ``configure()`` and ``configure(options:)`` create.
  public static let defaultAppName = "__FIRAPP_DEFAULT"

  /// The app's name.
  public let name: String
  /// The options the app was configured with.
  let optionValues: FirebaseOptions.Snapshot

  /// A copy of the options the app was configured with.
  public var options: FirebaseOptions { FirebaseOptions(optionValues) }

  /// Whether data collection is enabled by default; always false (the downloader sends no telemetry).
  public var isDataCollectionDefaultEnabled: Bool { false }

  /// Creates an app (apps are made by `configure`).
  private init(name: String, options: FirebaseOptions.Snapshot) {
    self.name = name
    self.optionValues = options
  }

  /// Configured apps by name.
  private static let registry = Locked<[String: FirebaseApp]>([:])

  /// Configures the default app from `GoogleService-Info.plist` (main bundle, then current
  /// directory). Without a readable file nothing is configured and a warning is written to
  /// standard error.
  public static func configure() {
    guard let options = FirebaseOptions.defaultOptions() else {
      warn("could not read GoogleService-Info.plist; the default Firebase app is not configured")
      return
    }
    configure(options: options)
  }

  /// Configures the default app with `options`.
  public static func configure(options: FirebaseOptions) {
    configure(name: defaultAppName, options: options)
  }

  /// Configures an app named `name` (letters, digits, `-` and `_`) with `options`. Configuring a
  /// name twice keeps the first app and writes a warning to standard error.
  public static func configure(name: String, options: FirebaseOptions) {
    guard isValidAppName(name) else {
      warn("invalid Firebase app name '\(name)': use letters, digits, '-' and '_'")
      return
    }
    let snapshot = options.snapshot
    let added = registry.withLock { apps -> Bool in
      guard apps[name] == nil else { return false }
      apps[name] = FirebaseApp(name: name, options: snapshot)
      return true
    }
    if !added { warn("Firebase app '\(name)' is already configured") }
  }

  /// The default app, if configured.
  public static func app() -> FirebaseApp? { app(name: defaultAppName) }

  /// The app named `name`, if configured.
  public static func app(name: String) -> FirebaseApp? { registry.withLock { $0[name] } }

  /// Every configured app by name, or nil when there is none.
  public static var allApps: [String: FirebaseApp]? {
    let apps = registry.withLock { $0 }
    return apps.isEmpty ? nil : apps
  }

  /// Removes the app (and its cached model downloader); `completion` receives whether it existed.
  public func delete(_ completion: @escaping (Bool) -> Void) {
    let removed = Self.registry.withLock { apps -> Bool in
      guard apps[name] === self else { return false }
      apps[name] = nil
      return true
    }
    if removed { ModelDownloader.forgetInstance(appName: name) }
    completion(removed)
  }

  /// Whether `name` is usable as an app name: non-empty letters, digits, `-` and `_`.
  static func isValidAppName(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= 64
      && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
  }

  /// Writes a configuration warning to standard error.
  private static func warn(_ message: String) {
    FileHandle.standardError.write(Data("[FirebaseApp] \(message)\n".utf8))
  }
}
