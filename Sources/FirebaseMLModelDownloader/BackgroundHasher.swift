import Foundation

/// The checksums of a download: SHA-256 always, CRC-32C and MD5 when the source states them.
struct ContentDigests: Sendable {
  /// The SHA-256 so far.
  var sha256 = SHA256()
  /// The CRC-32C so far, when wanted.
  var crc32c: CRC32C?
  /// The MD5 so far, when wanted.
  var md5: MD5?

  /// Starts digests of an empty message, with the optional ones that `remote` states.
  init(for remote: RemoteModel) {
    crc32c = remote.crc32c == nil ? nil : CRC32C()
    md5 = remote.md5 == nil ? nil : MD5()
  }

  /// Appends `bytes` to every digest.
  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    sha256.update(bytes)
    crc32c?.update(bytes)
    md5?.update(bytes)
  }

  /// The final values.
  mutating func finalize() -> ContentChecksums {
    ContentChecksums(
      sha256: sha256.finalizeHex(), crc32c: crc32c?.base64, md5: md5.map { var md5 = $0; return Data(md5.finalize()).base64EncodedString() })
  }
}

/// The final values of ``ContentDigests``.
struct ContentChecksums: Sendable, Equatable {
  /// Lowercase hex SHA-256.
  var sha256: String
  /// Base64 big-endian CRC-32C, when computed.
  var crc32c: String?
  /// Base64 MD5, when computed.
  var md5: String?
}

/// Checksums computed on a thread of its own, so that hashing overlaps receiving and writing
/// instead of slowing the receive path. ``update(_:)`` copies the bytes into a bounded queue (at
/// most 8 MiB waiting; beyond that the caller waits for the hasher to catch up).
final class BackgroundHasher: @unchecked Sendable {  // every mutable property is guarded by `condition`
  /// Most bytes queued before ``update(_:)`` waits.
  private static let queueLimit = 8 << 20

  /// Guards the queue and the flags, and signals changes to both sides.
  private let condition = NSCondition()
  /// Chunks waiting to be hashed, oldest first.
  private var queue: [[UInt8]] = []
  /// Bytes in `queue`.
  private var queuedBytes = 0
  /// Set by ``finalizeHex()``: hash what is queued, then publish the digest.
  private var finishing = false
  /// Set by ``abandon()``: stop without a digest.
  private var abandoned = false
  /// The result, once computed.
  private var digest: ContentChecksums?

  /// Starts the hashing thread, continuing `initial` (the digests of bytes already on disk).
  init(continuing initial: ContentDigests) {
    let thread = Thread { [self] in run(initial) }
    thread.name = "FirebaseMLModelDownloader.sha256"
    thread.start()
  }

  /// The hashing thread's loop.
  private func run(_ initial: ContentDigests) {
    var hasher = initial
    while true {
      condition.lock()
      while queue.isEmpty && !finishing && !abandoned { condition.wait() }
      if abandoned || (queue.isEmpty && finishing) {
        if !abandoned { digest = hasher.finalize() }
        condition.broadcast()
        condition.unlock()
        return
      }
      let chunks = queue
      queue.removeAll(keepingCapacity: true)
      condition.unlock()
      for chunk in chunks { chunk.withUnsafeBytes { hasher.update($0) } }
      condition.lock()
      queuedBytes -= chunks.reduce(0) { $0 + $1.count }
      condition.broadcast()
      condition.unlock()
    }
  }

  /// Queues a copy of `bytes`.
  func update(_ bytes: UnsafeRawBufferPointer) {
    let chunk = [UInt8](bytes)
    condition.lock()
    while queuedBytes > Self.queueLimit && !abandoned { condition.wait() }
    queue.append(chunk)
    queuedBytes += chunk.count
    condition.signal()
    condition.unlock()
  }

  /// Waits for every queued byte to be hashed and returns the checksums.
  func finalize() -> ContentChecksums {
    condition.lock()
    defer { condition.unlock() }
    finishing = true
    condition.broadcast()
    while digest == nil { condition.wait() }
    return digest ?? ContentChecksums(sha256: "", crc32c: nil, md5: nil)
  }

  /// Stops the thread without a digest (the transfer failed); idempotent.
  func abandon() {
    condition.lock()
    if digest == nil { abandoned = true }
    condition.broadcast()
    condition.unlock()
  }
}
