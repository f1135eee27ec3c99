import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Obtains Firebase Installations auth tokens: registers an installation once, refreshes its
/// token when it expires within an hour, re-registers when the server forgot the installation,
/// and keeps the installation in a private file so later processes reuse it.
actor InstallationsClient {
  /// An installation and its current auth token.
  struct Installation: Codable, Sendable {
    /// The Firebase installation ID.
    var fid: String
    /// Long-lived credential for new auth tokens.
    var refreshToken: String
    /// The current auth token.
    var authToken: String
    /// When ``authToken`` stops working.
    var authTokenExpiry: Date
  }

  /// Why an Installations request failed.
  enum Failure: Error, CustomStringConvertible {
    /// The server answered with a non-2xx status.
    case status(Int)
    /// The answer lacked a required field.
    case malformedResponse(String)

    /// The failure in words.
    var description: String {
      switch self {
      case .status(let code): return "Firebase Installations answered HTTP \(code)"
      case .malformedResponse(let detail): return "malformed Firebase Installations response: \(detail)"
      }
    }
  }

  /// SDK version reported to the server.
  static let sdkVersion = "i:12.19.0"
  /// A token expiring sooner than this (seconds) is refreshed.
  static let refreshMargin: TimeInterval = 3600

  /// The project ID.
  private let projectID: String
  /// The API key, sent as `X-Goog-Api-Key`.
  private let apiKey: String
  /// The app ID registered with the installation.
  private let appID: String
  /// Sent as `X-Ios-Bundle-Identifier`.
  private let bundleIdentifier: String
  /// Base URL of the Installations API.
  private let baseURL: URL
  /// The HTTP client.
  private let http: HTTPClient
  /// Where the installation is kept between processes, if anywhere.
  private let statePath: String?
  /// Delay before retrying a request that failed with HTTP 500.
  private let retryDelay: TimeInterval
  /// Learns the tokens so they never reach logs or errors.
  private let redactor: SecretRedactor

  /// The installation in memory.
  private var installation: Installation?
  /// The token request under way, shared by concurrent callers.
  private var pending: Task<Installation, any Error>?

  /// Creates a client for one Firebase app.
  init(
    projectID: String, apiKey: String, appID: String, bundleIdentifier: String, baseURL: URL, http: HTTPClient,
    statePath: String?, retryDelay: TimeInterval, redactor: SecretRedactor
  ) {
    self.projectID = projectID
    self.apiKey = apiKey
    self.appID = appID
    self.bundleIdentifier = bundleIdentifier
    self.baseURL = baseURL
    self.http = http
    self.statePath = statePath
    self.retryDelay = retryDelay
    self.redactor = redactor
  }

  /// A valid auth token, registering or refreshing as needed.
  func authToken() async throws -> String {
    if let installation, installation.authTokenExpiry.timeIntervalSinceNow > Self.refreshMargin {
      return installation.authToken
    }
    if let pending { return try await pending.value.authToken }
    let task = Task { try await self.obtainInstallation() }
    pending = task
    defer { pending = nil }
    let fresh = try await task.value
    installation = fresh
    return fresh.authToken
  }

  /// Loads, registers or refreshes the installation until it has a fresh token, and saves it.
  private func obtainInstallation() async throws -> Installation {
    guard var current = installation ?? loadSavedInstallation() else {
      let registered = try await register()
      save(registered)
      return registered
    }
    if current.authTokenExpiry.timeIntervalSinceNow <= Self.refreshMargin {
      do {
        current = try await refresh(current)
      } catch Failure.status(let code) where code == 401 || code == 404 {
        try? await deleteRemotely(current)
        current = try await register()
      }
    }
    save(current)
    return current
  }

  /// `POST /v1/projects/{project}/installations/` with a new FID.
  private func register() async throws -> Installation {
    let fid = Self.makeFID()
    let body: [String: Any] = ["fid": fid, "authVersion": "FIS_v2", "appId": appID, "sdkVersion": Self.sdkVersion]
    let response = try await post(path: "installations/", body: body, authorization: nil)
    let fields = try JSONFields(response, what: "installation")
    guard let tokenFields = fields.object("authToken") else { throw Failure.malformedResponse("missing authToken") }
    let refreshToken = try fields.string("refreshToken")
    let token = try tokenFields.string("token")
    redactor.register(refreshToken)
    redactor.register(token)
    return Installation(
      fid: (try? fields.string("fid")) ?? fid, refreshToken: refreshToken, authToken: token,
      authTokenExpiry: try Self.expiry(try tokenFields.string("expiresIn")))
  }

  /// `POST …/installations/{fid}/authTokens:generate` with the refresh token.
  private func refresh(_ installation: Installation) async throws -> Installation {
    let body: [String: Any] = ["installation": ["sdkVersion": Self.sdkVersion]]
    let response = try await post(
      path: "installations/\(percentEncodedPathSegment(installation.fid))/authTokens:generate", body: body,
      authorization: installation.refreshToken)
    let fields = try JSONFields(response, what: "auth token")
    let token = try fields.string("token")
    redactor.register(token)
    var refreshed = installation
    refreshed.authToken = token
    refreshed.authTokenExpiry = try Self.expiry(try fields.string("expiresIn"))
    return refreshed
  }

  /// `DELETE …/installations/{fid}/`, forgetting the saved installation.
  private func deleteRemotely(_ installation: Installation) async throws {
    if let statePath { try? FileSystem.removeFile(atPath: statePath) }
    var request = try makeRequest(path: "installations/\(percentEncodedPathSegment(installation.fid))/", authorization: installation.refreshToken)
    request.httpMethod = "DELETE"
    _ = try await http.send(request, limit: 1 << 16)
  }

  /// POSTs `body` as JSON, retrying once after ``retryDelay`` on HTTP 500; returns a 2xx body.
  private func post(path: String, body: [String: Any], authorization: String?) async throws -> [UInt8] {
    var request = try makeRequest(path: path, authorization: authorization)
    request.httpMethod = "POST"
    request.httpBody = try JSONSerialization.data(withJSONObject: body)
    var attemptsLeft = 2
    while true {
      attemptsLeft -= 1
      let response = try await http.send(request, limit: 1 << 16)
      let status = response.head.statusCode
      if (200..<300).contains(status) { return response.body }
      guard status == 500, attemptsLeft > 0 else { throw Failure.status(status) }
      try await Task.sleep(nanoseconds: UInt64(min(max(0, retryDelay), 3600) * 1e9))
    }
  }

  /// A request to `BASE/v1/projects/{project}/{path}` with the common headers.
  private func makeRequest(path: String, authorization: String?) throws -> URLRequest {
    let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
    guard let url = URL(string: base + "/v1/projects/\(percentEncodedPathSegment(projectID))/" + path) else {
      throw Failure.malformedResponse("invalid Installations URL")
    }
    var request = URLRequest(url: url)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue(apiKey, forHTTPHeaderField: "X-Goog-Api-Key")
    request.setValue(bundleIdentifier, forHTTPHeaderField: "X-Ios-Bundle-Identifier")
    if let authorization { request.setValue("FIS_v2 \(authorization)", forHTTPHeaderField: "Authorization") }
    return request
  }

  /// The saved installation, if a readable one exists.
  private func loadSavedInstallation() -> Installation? {
    guard let statePath, let bytes = try? FileSystem.readFile(atPath: statePath, limit: 64 << 10),
      let saved = try? JSONDecoder().decode(Installation.self, from: Data(bytes))
    else { return nil }
    redactor.register(saved.refreshToken)
    redactor.register(saved.authToken)
    return saved
  }

  /// Saves `installation` (the file is created with mode 0600); failures only cost a re-registration later.
  private func save(_ installation: Installation) {
    guard let statePath, let data = try? JSONEncoder().encode(installation) else { return }
    try? FileSystem.createDirectory(atPath: FileSystem.parentDirectory(of: statePath))
    try? FileSystem.writeAtomically(Array(data), toPath: statePath)
  }

  /// The expiry date for an `expiresIn` such as `"604800s"`.
  private static func expiry(_ expiresIn: String) throws -> Date {
    let digits = expiresIn.hasSuffix("s") ? String(expiresIn.dropLast()) : expiresIn
    guard let seconds = Double(digits), seconds.isFinite, seconds >= 0 else {
      throw Failure.malformedResponse("invalid expiresIn")
    }
    return Date(timeIntervalSinceNow: seconds)
  }

  /// A new FID: 16 random bytes whose first byte's high nibble is `0111`, base64url, 22 characters.
  static func makeFID() -> String {
    var generator = SystemRandomNumberGenerator()
    var bytes = (0..<17).map { _ in UInt8.random(in: 0...255, using: &generator) }
    bytes[0] = 0b0111_0000 | (bytes[0] & 0x0f)
    let base64 = Data(bytes).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    return String(base64.prefix(22))
  }
}
