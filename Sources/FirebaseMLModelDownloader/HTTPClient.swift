import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Status line and headers of an HTTP response, with case-insensitive header lookup.
struct HTTPResponseHead: Sendable {
  /// The status code.
  var statusCode: Int
  /// Header values by lowercased field name.
  var headers: [String: String]

  /// A head from its parts (`headers` keyed by lowercased names).
  init(statusCode: Int, headers: [String: String]) {
    self.statusCode = statusCode
    self.headers = headers
  }

  /// Copies the parts of `response` the downloader reads.
  init(_ response: HTTPURLResponse) {
    statusCode = response.statusCode
    var headers: [String: String] = [:]
    for (name, value) in response.allHeaderFields {
      if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
    }
    self.headers = headers
  }

  /// The value of header `name`, looked up case-insensitively (Linux keeps the server's spelling).
  func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A complete, size-limited HTTP response.
struct HTTPResponse: Sendable {
  /// Status and headers.
  var head: HTTPResponseHead
  /// The body.
  var body: [UInt8]
}

/// Receives one response's head and then its body, on URLSession's serial delegate queue.
protocol HTTPBodyConsumer: AnyObject, Sendable {
  /// Called once with the final response's head; throwing stops the transfer with that error.
  func begin(_ head: HTTPResponseHead) throws
  /// Called with each piece of the body in order; throwing stops the transfer with that error.
  func consume(_ bytes: UnsafeRawBufferPointer) throws
}

/// Why an HTTP exchange failed before a response was complete.
enum HTTPFailure: Error, CustomStringConvertible {
  /// A network-level failure, described without URLs (they may carry secrets).
  case transport(String)
  /// A URL the security policy refuses (plain HTTP to a non-loopback host, or another scheme).
  case refusedURL(String)
  /// Redirects that loop or go on too long, or lack a usable location.
  case badRedirect(String)

  /// The failure in words.
  var description: String {
    switch self {
    case .transport(let text), .refusedURL(let text), .badRedirect(let text): return text
    }
  }

  /// The words of a failure the user must fix (a refused URL, bad redirects), nil for transport
  /// failures that a retry may cure.
  var permanentReason: String? {
    switch self {
    case .transport: return nil
    case .refusedURL(let text), .badRedirect(let text): return text
    }
  }
}

/// Which URLs the downloader may contact.
struct URLPolicy: Sendable {
  /// Whether plain `http://` is allowed for hosts other than loopback.
  var allowsInsecureHTTP: Bool

  /// Throws ``HTTPFailure/refusedURL(_:)`` unless `url` is `https`, or `http` to loopback or allowed.
  func check(_ url: URL) throws {
    let scheme = url.scheme?.lowercased() ?? ""
    guard url.host?.isEmpty == false else {
      throw HTTPFailure.refusedURL("refusing URL without a host: \(url.redactedDescription)")
    }
    switch scheme {
    case "https": return
    case "http" where allowsInsecureHTTP || Self.isLoopback(host: url.host ?? ""): return
    case "http":
      throw HTTPFailure.refusedURL(
        "refusing plain HTTP URL \(url.redactedDescription): only loopback hosts may use http:// "
          + "unless ModelDownloaderSettings.allowsInsecureHTTP is set")
    default:
      throw HTTPFailure.refusedURL("refusing URL with unsupported scheme: \(url.redactedDescription)")
    }
  }

  /// Whether `host` names this machine's loopback interface.
  static func isLoopback(host: String) -> Bool {
    let bare = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
    if bare == "localhost" || bare == "::1" { return true }
    let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
  }
}

/// `text` percent-encoded as one URL path segment (unreserved characters stay as they are).
func percentEncodedPathSegment(_ text: String) -> String {
  let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
  return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
}

extension URL {
  /// `scheme://host[:port]/path`, without user info, query or fragment (which may hold keys or signatures).
  var redactedDescription: String {
    var text = "\(scheme ?? "?")://\(host ?? "")"
    if let port { text += ":\(port)" }
    return text + path
  }
}

/// Sends requests and streams bodies to consumers, enforcing the ``URLPolicy``, the stall
/// timeout and the whole-exchange deadline with its own clock, and following at most
/// ``maximumRedirects`` redirects without loops. Plain `http://` goes through
/// ``SocketHTTPExchange`` (no busy waiting, IPv6 literals); `https://` through URLSession.
final class HTTPClient: Sendable {
  /// Most redirects followed for one request.
  static let maximumRedirects = 10
  /// The session; its delegate routes callbacks to per-task state.
  private let session: URLSession
  /// Routes delegate callbacks to the consumer of each task.
  private let router: TaskRouter
  /// Which URLs may be contacted, including redirect targets.
  let policy: URLPolicy
  /// Stall timeout and deadline of each exchange.
  let limits: TransferLimits

  /// Creates a client with stall timeout `requestTimeout` and whole-exchange deadline `resourceTimeout` (seconds).
  init(policy: URLPolicy, requestTimeout: TimeInterval, resourceTimeout: TimeInterval) {
    self.policy = policy
    limits = TransferLimits(stallTimeout: requestTimeout, deadline: resourceTimeout)
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = requestTimeout
    configuration.timeoutIntervalForResource = resourceTimeout
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpCookieStorage = nil
    configuration.httpShouldSetCookies = false
    #if canImport(Darwin)
      configuration.waitsForConnectivity = true
    #endif
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    queue.name = "FirebaseMLModelDownloader.HTTPClient"
    router = TaskRouter(policy: policy)
    session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
  }

  deinit { session.invalidateAndCancel() }

  /// Sends `request` and returns the whole response, failing when the body exceeds `limit` bytes.
  func send(_ request: URLRequest, limit: Int) async throws -> HTTPResponse {
    let collector = BodyCollector(limit: limit)
    let head = try await stream(request, to: collector)
    return HTTPResponse(head: head, body: collector.bytes)
  }

  /// Sends `request`, feeds the final response to `consumer` as it arrives, and returns its head
  /// once the body is complete.
  func stream(_ request: URLRequest, to consumer: any HTTPBodyConsumer) async throws -> HTTPResponseHead {
    guard var url = request.url else { throw HTTPFailure.refusedURL("request without URL") }
    var visited: [URL] = []
    while true {
      try policy.check(url)
      visited.append(url)
      guard url.scheme?.lowercased() == "http" else {
        var hop = request
        hop.url = url
        return try await streamThroughURLSession(hop, to: consumer)
      }
      let interceptor = RedirectInterceptor(consumer: consumer, base: url)
      let exchange = SocketHTTPExchange(request, url: url, limits: limits)
      let head = try await exchange.run(consumer: interceptor)
      guard let target = interceptor.redirectTarget else { return head }
      try Self.checkRedirect(to: target, after: visited)
      url = target
    }
  }

  /// Throws when following `target` after `visited` would loop or exceed ``maximumRedirects``.
  static func checkRedirect(to target: URL, after visited: [URL]) throws {
    if visited.contains(where: { $0.absoluteString == target.absoluteString }) {
      throw HTTPFailure.badRedirect("redirect loop: \(target.redactedDescription) redirects back to an address already visited")
    }
    guard visited.count <= maximumRedirects else {
      throw HTTPFailure.badRedirect("too many redirects (more than \(maximumRedirects)); the last went to \(target.redactedDescription)")
    }
  }

  /// The URLSession path, with the deadline enforced by a watchdog of ours (URLSession's resource
  /// timeout is not honoured by swift-corelibs-foundation).
  private func streamThroughURLSession(_ request: URLRequest, to consumer: any HTTPBodyConsumer) async throws -> HTTPResponseHead {
    let task = session.dataTask(with: request)
    let router = router
    let deadline = limits.deadline
    let watchdog = Task {
      try await Task.sleep(nanoseconds: UInt64(max(0, deadline) * 1e9))
      router.expire(task, with: HTTPFailure.transport("the transfer did not finish within its deadline of \(Int(deadline)) s"))
    }
    defer { watchdog.cancel() }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        router.register(task: task, consumer: consumer, continuation: continuation)
        task.resume()
      }
    } onCancel: {
      task.cancel()
    }
  }
}

/// Passes a final response to its consumer; swallows the head and body of a redirect, keeping
/// its target.
private final class RedirectInterceptor: HTTPBodyConsumer, @unchecked Sendable {  // used by one exchange's thread only
  /// Receives the final response.
  let consumer: any HTTPBodyConsumer
  /// The URL requested, against which a relative Location resolves.
  let base: URL
  /// Where a redirect points, once one was received.
  private(set) var redirectTarget: URL?

  /// Wraps `consumer` for a request of `base`.
  init(consumer: any HTTPBodyConsumer, base: URL) {
    self.consumer = consumer
    self.base = base
  }

  func begin(_ head: HTTPResponseHead) throws {
    guard [301, 302, 303, 307, 308].contains(head.statusCode) else { return try consumer.begin(head) }
    guard let location = head.header("location"), let target = URL(string: location, relativeTo: base)?.absoluteURL else {
      throw HTTPFailure.badRedirect("the server answered HTTP \(head.statusCode) without a usable Location")
    }
    redirectTarget = target
  }

  func consume(_ bytes: UnsafeRawBufferPointer) throws {
    if redirectTarget == nil { try consumer.consume(bytes) }
  }
}

/// Collects a whole body in memory up to a byte limit.
private final class BodyCollector: HTTPBodyConsumer, @unchecked Sendable {  // used only on the serial delegate queue, read after completion
  /// Most bytes accepted.
  let limit: Int
  /// The body so far.
  private(set) var bytes: [UInt8] = []

  /// Creates a collector accepting at most `limit` bytes.
  init(limit: Int) { self.limit = limit }

  func begin(_ head: HTTPResponseHead) throws {
    if let coding = head.header("content-encoding"), coding.lowercased() != "identity" {
      throw HTTPFailure.transport("the server sent a \(coding)-encoded body, which this client does not decode")
    }
  }

  func consume(_ chunk: UnsafeRawBufferPointer) throws {
    guard bytes.count + chunk.count <= limit else {
      throw HTTPFailure.transport("response body larger than \(limit) bytes")
    }
    bytes.append(contentsOf: chunk)
  }
}

/// The URLSession delegate: dispatches each task's callbacks to its consumer and completes its continuation.
private final class TaskRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // `tasks` is guarded by its lock
  /// What is known about one running task.
  struct TaskState {
    /// Where the body goes.
    var consumer: any HTTPBodyConsumer
    /// Resumed when the task ends.
    var continuation: CheckedContinuation<HTTPResponseHead, any Error>
    /// The final response's head, once received.
    var head: HTTPResponseHead?
    /// The first error raised by a consumer or the redirect policy; it wins over URLSession's.
    var failure: (any Error)?
    /// URLs requested so far (the first and each redirect target).
    var visited: [URL] = []
  }

  /// Redirect targets must pass this policy too.
  let policy: URLPolicy
  /// Running tasks by task identifier.
  private let tasks = Locked<[Int: TaskState]>([:])

  /// Creates a router enforcing `policy` on redirects.
  init(policy: URLPolicy) { self.policy = policy }

  /// Starts tracking `task`.
  func register(task: URLSessionTask, consumer: any HTTPBodyConsumer, continuation: CheckedContinuation<HTTPResponseHead, any Error>) {
    var state = TaskState(consumer: consumer, continuation: continuation)
    state.visited = task.originalRequest?.url.map { [$0] } ?? []
    tasks.withLock { $0[task.taskIdentifier] = state }
  }

  /// Ends `task` with `error` (its deadline passed).
  func expire(_ task: URLSessionTask, with error: any Error) { fail(task, with: error) }

  /// Records `error` as the task's failure (the first one wins) and cancels it.
  private func fail(_ task: URLSessionTask, with error: any Error) {
    recordFailure(of: task, error)
    task.cancel()
  }

  /// Records `error` as the task's failure unless one is already recorded.
  private func recordFailure(of task: URLSessionTask, _ error: any Error) {
    tasks.withLock { table in
      if table[task.taskIdentifier]?.failure == nil { table[task.taskIdentifier]?.failure = error }
    }
  }

  /// The consumer of a task still healthy, or nil once it has failed or ended.
  private func activeConsumer(of task: URLSessionTask) -> (any HTTPBodyConsumer)? {
    tasks.withLock { table in
      guard let state = table[task.taskIdentifier], state.failure == nil else { return nil }
      return state.consumer
    }
  }

  /// Hands the task's response head to its consumer the first time the task produces data or
  /// ends (read from the task rather than from a delegate call, whose Sendable annotations differ
  /// between Darwin and Linux). The final URL must pass the policy too, whatever redirects led there.
  private func beginIfNeeded(_ task: URLSessionTask) throws {
    let pending = tasks.withLock { table -> (any HTTPBodyConsumer)? in
      guard let state = table[task.taskIdentifier], state.failure == nil, state.head == nil else { return nil }
      return state.consumer
    }
    guard let consumer = pending else { return }
    guard let response = task.response as? HTTPURLResponse else {
      throw HTTPFailure.transport("the server's answer is not an HTTP response")
    }
    if let finalURL = response.url ?? task.currentRequest?.url { try policy.check(finalURL) }
    let head = HTTPResponseHead(response)
    tasks.withLock { $0[task.taskIdentifier]?.head = head }
    try consumer.begin(head)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    do {
      try beginIfNeeded(dataTask)
      guard let consumer = activeConsumer(of: dataTask) else { return }
      try data.withUnsafeBytes { try consumer.consume($0) }
    } catch {
      fail(dataTask, with: error)
    }
  }

  #if canImport(Darwin)
    func urlSession(
      _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
      newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
      completionHandler(allowedRedirect(request, for: task))
    }
  #else
    func urlSession(
      _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
      newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
      completionHandler(allowedRedirect(request, for: task))
    }
  #endif

  /// `request` if its URL passes the policy; otherwise nil: the redirect response becomes the
  /// final one and the task ends with the refusal (cancelling inside this callback would upset
  /// swift-corelibs-foundation).
  private func allowedRedirect(_ request: URLRequest, for task: URLSessionTask) -> URLRequest? {
    do {
      guard let url = request.url else { throw HTTPFailure.badRedirect("redirect without a location") }
      try policy.check(url)
      try tasks.withLock { table in
        try HTTPClient.checkRedirect(to: url, after: table[task.taskIdentifier]?.visited ?? [])
        table[task.taskIdentifier]?.visited.append(url)
      }
      return request
    } catch {
      recordFailure(of: task, error)
      return nil
    }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    if error == nil {
      do {
        try beginIfNeeded(task)
      } catch {
        recordFailure(of: task, error)
      }
    }
    guard let state = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
    if let failure = state.failure {
      state.continuation.resume(throwing: failure)
    } else if let error {
      state.continuation.resume(throwing: Self.describe(error))
    } else if let head = state.head {
      state.continuation.resume(returning: head)
    } else {
      state.continuation.resume(throwing: HTTPFailure.transport("the server sent no HTTP response"))
    }
  }

  /// A transport error as cancellation or as words that never include the URL.
  static func describe(_ error: any Error) -> any Error {
    guard let urlError = error as? URLError else {
      return HTTPFailure.transport("network error (\((error as NSError).domain) \((error as NSError).code))")
    }
    switch urlError.code {
    case .cancelled: return CancellationError()
    case .timedOut: return HTTPFailure.transport("the request timed out")
    case .httpTooManyRedirects: return HTTPFailure.badRedirect("too many redirects")
    case .redirectToNonExistentLocation: return HTTPFailure.badRedirect("a redirect without a usable location")
    case .cannotConnectToHost: return HTTPFailure.transport("could not connect to the server")
    case .cannotFindHost, .dnsLookupFailed: return HTTPFailure.transport("could not resolve the server's host name")
    case .networkConnectionLost: return HTTPFailure.transport("the network connection was lost")
    case .notConnectedToInternet: return HTTPFailure.transport("not connected to the internet")
    case .unknown: return HTTPFailure.transport("the transfer failed (the connection closed early or the answer was malformed)")
    case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
      .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
      return HTTPFailure.transport("the secure connection to the server failed")
    default: return HTTPFailure.transport("network error (URLError \(urlError.code.rawValue))")
    }
  }
}
