import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// A minimal HTTP/1.1 client for plain `http://` URLs over POSIX sockets: one request per
// connection (`Connection: close`), IPv4 and IPv6 (`http://[::1]:PORT/`), bodies framed by
// Content-Length, chunked transfer coding or the end of the connection. Every wait is a `poll`
// bounded by two clocks of its own: the stall timeout (no byte for that long) and the deadline of
// the whole exchange. Waiting costs no CPU, unlike swift-corelibs-foundation's URLSession, whose
// libcurl loop keeps a core busy while a server stalls. Redirects are left to ``HTTPClient``.
// It runs on a thread of its own, so blocking never holds a Swift concurrency thread.

/// Limits of one exchange, measured with the monotonic clock.
struct TransferLimits: Sendable {
  /// Seconds without any progress (connecting, sending or receiving) after which it fails.
  var stallTimeout: TimeInterval
  /// Seconds the whole exchange may take.
  var deadline: TimeInterval
}

/// One HTTP/1.1 exchange over a socket.
final class SocketHTTPExchange: @unchecked Sendable {  // `socket` is guarded by `lock`; the rest is used by the exchange's own thread only
  /// Largest response head accepted.
  private static let headLimit = 64 << 10
  /// Bytes read per `recv`.
  private static let receiveBufferSize = 1 << 20
  /// Most bytes handed to the consumer at once.
  private static let deliverySliceSize = 64 << 10

  /// The request.
  private let url: URL
  /// `GET`, `POST`, `DELETE`…
  private let method: String
  /// Request headers besides Host, Connection and User-Agent.
  private let headers: [String: String]
  /// The request body, if any.
  private let body: [UInt8]
  /// Time limits.
  private let limits: TransferLimits
  /// Guards `socketDescriptor` and `cancelled` against ``cancel()`` from another thread.
  private let lock = NSLock()
  /// The connected socket, or -1.
  private var socketDescriptor: Int32 = -1
  /// Set by ``cancel()``.
  private var cancelled = false
  /// Monotonic nanoseconds at which the exchange must end.
  private var deadlineTime: UInt64 = 0
  /// Bytes received but not consumed yet.
  private var pending: [UInt8] = []
  /// Where `recv` writes.
  private var receiveBuffer = [UInt8](repeating: 0, count: receiveBufferSize)

  /// Prepares `request` to `url` (a redirect target, or the request's own URL).
  init(_ request: URLRequest, url: URL, limits: TransferLimits) {
    self.url = url
    method = request.httpMethod ?? "GET"
    headers = request.allHTTPHeaderFields ?? [:]
    body = request.httpBody.map { Array($0) } ?? []
    self.limits = limits
  }

  /// Runs the exchange on a new thread, feeding `consumer`; returns the response head.
  func run(consumer: any HTTPBodyConsumer) async throws -> HTTPResponseHead {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponseHead, any Error>) in
        let thread = Thread { [self] in
          do {
            continuation.resume(returning: try perform(consumer: consumer))
          } catch {
            continuation.resume(throwing: isCancelled ? CancellationError() : error)
          }
          closeSocket()
        }
        thread.name = "FirebaseMLModelDownloader.http"
        thread.start()
      }
    } onCancel: {
      cancel()
    }
  }

  /// Stops the exchange from any thread: the socket is shut down, waking the exchange's `poll`.
  func cancel() {
    lock.withLock {
      cancelled = true
      if socketDescriptor >= 0 { _ = shutdown(socketDescriptor, Int32(SHUT_RDWR)) }
    }
  }

  /// Whether ``cancel()`` was called.
  private var isCancelled: Bool { lock.withLock { cancelled } }

  /// Closes the socket (once).
  private func closeSocket() {
    lock.withLock {
      if socketDescriptor >= 0 { closeDescriptor(socketDescriptor) }
      socketDescriptor = -1
    }
  }

  /// Monotonic time in nanoseconds.
  private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

  /// The blocking exchange: connect, send, read the head, stream the body.
  private func perform(consumer: any HTTPBodyConsumer) throws -> HTTPResponseHead {
    deadlineTime = Self.now() + UInt64(max(0, limits.deadline) * 1e9)
    let host = (url.host ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
    let port = url.port ?? 80
    let descriptor = try connect(host: host, port: port)
    try send(requestText(host: host, port: port), on: descriptor)
    var head = try readHead(from: descriptor)
    while (100..<200).contains(head.statusCode) { head = try readHead(from: descriptor) }
    try consumer.begin(head)
    try readBody(of: head, from: descriptor, to: consumer)
    return head
  }

  /// The request's text.
  private func requestText(host: String, port: Int) -> [UInt8] {
    var target = url.path.isEmpty ? "/" : (URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path)
    if target.isEmpty { target = "/" }
    if let query = url.query { target += "?" + query }
    let hostField = (host.contains(":") ? "[\(host)]" : host) + (url.port.map { ":\($0)" } ?? "")
    var text = "\(method) \(target) HTTP/1.1\r\nHost: \(hostField)\r\nConnection: close\r\nUser-Agent: FirebaseMLModelDownloader\r\n"
    var fields = headers
    if !fields.keys.contains(where: { $0.lowercased() == "accept-encoding" }) { fields["Accept-Encoding"] = "identity" }
    if !body.isEmpty || method == "POST" { fields["Content-Length"] = String(body.count) }
    for (name, value) in fields.sorted(by: { $0.key < $1.key }) where !value.contains("\r") && !value.contains("\n") {
      text += "\(name): \(value)\r\n"
    }
    return Array((text + "\r\n").utf8) + body
  }

  /// Connects to the first address of `host` that answers.
  private func connect(host: String, port: Int) throws -> Int32 {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    #if canImport(Darwin)
      hints.ai_socktype = SOCK_STREAM
    #else
      hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    #endif
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else { throw HTTPFailure.transport("could not resolve the server's host name") }
    defer { freeaddrinfo(first) }
    var lastError = ECONNREFUSED
    var entry: UnsafeMutablePointer<addrinfo>? = first
    while let address = entry {
      entry = address.pointee.ai_next
      let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
      guard descriptor >= 0 else { continue }
      let registered = lock.withLock { () -> Bool in
        guard !cancelled else { return false }
        socketDescriptor = descriptor
        return true
      }
      guard registered else {
        closeDescriptor(descriptor)
        throw CancellationError()
      }
      _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
      _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
      #if canImport(Darwin)
        var on: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
      #endif
      if connectSocket(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return descriptor }
      if errno == EINPROGRESS {
        try wait(for: Int16(POLLOUT), on: descriptor, while: "connecting")
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0 { return descriptor }
        lastError = error
      } else {
        lastError = errno
      }
      closeSocket()
    }
    throw HTTPFailure.transport("could not connect to the server (\(String(cString: strerror(lastError))))")
  }

  /// `connect(2)`, named apart from this type's method.
  private func connectSocket(_ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
    #if canImport(Darwin)
      return Darwin.connect(descriptor, address, length)
    #elseif canImport(Glibc)
      return Glibc.connect(descriptor, address, length)
    #else
      return Musl.connect(descriptor, address, length)
    #endif
  }

  /// Waits until `descriptor` is ready for `events`, failing at the stall timeout, the deadline
  /// or cancellation. `activity` names what was waited for, for messages.
  private func wait(for events: Int16, on descriptor: Int32, while activity: String) throws {
    let stallEnd = Self.now() + UInt64(max(0, limits.stallTimeout) * 1e9)
    while true {
      if isCancelled { throw CancellationError() }
      let now = Self.now()
      if now >= deadlineTime {
        throw HTTPFailure.transport("the transfer did not finish within its deadline of \(Self.seconds(limits.deadline)) s")
      }
      if now >= stallEnd {
        throw HTTPFailure.transport("the server sent nothing for \(Self.seconds(limits.stallTimeout)) s while \(activity)")
      }
      let milliseconds = Int32(clamping: (min(stallEnd, deadlineTime) - now + 999_999) / 1_000_000)
      var entry = pollfd(fd: descriptor, events: events, revents: 0)
      let ready = poll(&entry, 1, milliseconds)
      if ready > 0 { return }
      if ready < 0 && errno != EINTR { throw HTTPFailure.transport("waiting for the server failed (\(String(cString: strerror(errno))))") }
    }
  }

  /// `value` without a needless fraction.
  private static func seconds(_ value: TimeInterval) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }

  /// Sends all of `bytes`.
  private func send(_ bytes: [UInt8], on descriptor: Int32) throws {
    var offset = 0
    while offset < bytes.count {
      try wait(for: Int16(POLLOUT), on: descriptor, while: "sending the request")
      #if canImport(Darwin)
        let flags: Int32 = 0
      #else
        let flags = Int32(MSG_NOSIGNAL)
      #endif
      let sent = bytes.withUnsafeBytes { raw in sendBytes(descriptor, raw.baseAddress! + offset, raw.count - offset, flags) }
      if sent < 0 {
        if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
        throw HTTPFailure.transport("the connection was lost while sending the request")
      }
      offset += sent
    }
  }

  /// `send(2)`, named apart from this type's method.
  private func sendBytes(_ descriptor: Int32, _ start: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    #if canImport(Darwin)
      return Darwin.send(descriptor, start, count, flags)
    #elseif canImport(Glibc)
      return Glibc.send(descriptor, start, count, flags)
    #else
      return Musl.send(descriptor, start, count, flags)
    #endif
  }

  /// Receives at most `limit` bytes into `receiveBuffer`; returns how many (0 at the end of the connection).
  private func receive(atMost limit: Int, from descriptor: Int32, while activity: String) throws -> Int {
    while true {
      try wait(for: Int16(POLLIN), on: descriptor, while: activity)
      let count = receiveBuffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, min(limit, $0.count), 0) }
      if count >= 0 { return count }
      if isCancelled { throw CancellationError() }
      if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
      throw HTTPFailure.transport("the network connection was lost (\(String(cString: strerror(errno))))")
    }
  }

  /// Receives more bytes into `pending`; false at the end of the connection.
  private func receiveMore(from descriptor: Int32, while activity: String) throws -> Bool {
    let count = try receive(atMost: Self.receiveBufferSize, from: descriptor, while: activity)
    pending.append(contentsOf: receiveBuffer[0..<count])
    return count > 0
  }

  /// Reads and parses one response head.
  private func readHead(from descriptor: Int32) throws -> HTTPResponseHead {
    let terminator: [UInt8] = [13, 10, 13, 10]
    var searchFrom = 0
    while true {
      if let end = Self.find(terminator, in: pending, from: searchFrom) {
        let text = String(decoding: pending[0..<end], as: UTF8.self)
        pending.removeFirst(end + 4)
        return try Self.parseHead(text)
      }
      searchFrom = max(0, pending.count - 3)
      guard pending.count <= Self.headLimit else { throw HTTPFailure.transport("the server's response head is larger than 64 KiB") }
      guard try receiveMore(from: descriptor, while: "waiting for the response") else {
        throw HTTPFailure.transport("the server closed the connection without a complete response")
      }
    }
  }

  /// The first index of `needle` in `haystack` at or after `start`.
  private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    var index = start
    while index <= haystack.count - needle.count {
      if haystack[index] == needle[0] && Array(haystack[index..<index + needle.count]) == needle { return index }
      index += 1
    }
    return nil
  }

  /// Parses `HTTP/1.x CODE REASON` and the header lines (names lowercased, repeats joined by `, `).
  static func parseHead(_ text: String) throws -> HTTPResponseHead {
    let lines = text.components(separatedBy: "\r\n")
    let statusParts = lines[0].split(separator: " ", maxSplits: 2)
    guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let code = Int(statusParts[1]), (100...999).contains(code) else {
      throw HTTPFailure.transport("the server's answer is not an HTTP/1.x response")
    }
    var headers: [String: String] = [:]
    for line in lines.dropFirst() where !line.isEmpty {
      guard let colon = line.firstIndex(of: ":") else { throw HTTPFailure.transport("the server sent a malformed header line") }
      let name = line[..<colon].lowercased()
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      headers[name] = headers[name].map { "\($0), \(value)" } ?? value
    }
    return HTTPResponseHead(statusCode: code, headers: headers)
  }

  /// Streams the body as its framing says.
  private func readBody(of head: HTTPResponseHead, from descriptor: Int32, to consumer: any HTTPBodyConsumer) throws {
    if head.statusCode == 204 || head.statusCode == 304 { return }
    if let coding = head.header("transfer-encoding")?.lowercased(), coding != "identity" {
      guard coding == "chunked" else { throw HTTPFailure.transport("the server used an unsupported transfer coding (\(coding))") }
      try readChunkedBody(from: descriptor, to: consumer)
    } else if let lengthText = head.header("content-length") {
      guard let length = Int64(lengthText), length >= 0 else { throw HTTPFailure.transport("the server sent an invalid Content-Length") }
      try forwardBody(length: length, from: descriptor, to: consumer, closedEarly: "before the end of the body")
    } else {
      try forwardBody(length: nil, from: descriptor, to: consumer, closedEarly: "")
    }
  }

  /// Hands `consumer` the next `length` body bytes (every byte until the connection ends when
  /// nil): what is pending first, then straight from the receive buffer, never reading past them.
  /// `closedEarly` ends the message when the connection ends first.
  private func forwardBody(length: Int64?, from descriptor: Int32, to consumer: any HTTPBodyConsumer, closedEarly: String) throws {
    var remaining = length ?? Int64.max
    if !pending.isEmpty {
      let count = Int(min(Int64(pending.count), remaining))
      try pending.withUnsafeBytes { try deliver(UnsafeRawBufferPointer(rebasing: $0[0..<count]), to: consumer) }
      pending.removeFirst(count)
      remaining -= Int64(count)
    }
    while remaining > 0 {
      let count = try receive(atMost: Int(min(Int64(Self.receiveBufferSize), remaining)), from: descriptor, while: "receiving the body")
      if count == 0 {
        guard length == nil else { throw HTTPFailure.transport("the server closed the connection \(remaining) bytes \(closedEarly)") }
        return
      }
      try receiveBuffer.withUnsafeBytes { try deliver(UnsafeRawBufferPointer(rebasing: $0[0..<count]), to: consumer) }
      remaining -= Int64(count)
    }
  }

  /// Hands `bytes` to `consumer` in slices of at most 64 KiB (so that progress moves smoothly
  /// however much one `recv` returned).
  private func deliver(_ bytes: UnsafeRawBufferPointer, to consumer: any HTTPBodyConsumer) throws {
    var start = 0
    while start < bytes.count {
      let end = min(bytes.count, start + Self.deliverySliceSize)
      try consumer.consume(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
      start = end
    }
  }

  /// Decodes `Transfer-Encoding: chunked`: hex size lines, data, and trailers after a 0 size.
  private func readChunkedBody(from descriptor: Int32, to consumer: any HTTPBodyConsumer) throws {
    while true {
      let sizeLine = try readLine(from: descriptor)
      let sizeText = sizeLine.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
      guard let size = Int64(sizeText, radix: 16), size >= 0 else { throw HTTPFailure.transport("the server sent a malformed chunk size") }
      if size == 0 {
        while try !readLine(from: descriptor).isEmpty {}
        return
      }
      try forwardBody(length: size, from: descriptor, to: consumer, closedEarly: "before the end of a chunk")
      guard try readLine(from: descriptor).isEmpty else { throw HTTPFailure.transport("the server sent a malformed chunk") }
    }
  }

  /// The next CRLF-terminated line of pending input (at most 4 KiB).
  private func readLine(from descriptor: Int32) throws -> String {
    while true {
      if let end = Self.find([13, 10], in: pending, from: 0) {
        let line = String(decoding: pending[0..<end], as: UTF8.self)
        pending.removeFirst(end + 2)
        return line
      }
      guard pending.count < 4096 else { throw HTTPFailure.transport("the server sent an overlong chunk line") }
      guard try receiveMore(from: descriptor, while: "receiving the body") else {
        throw HTTPFailure.transport("the server closed the connection inside a chunked body")
      }
    }
  }
}
