#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A failed system call on a file, with the `errno` it set.
struct FileSystemFailure: Error, CustomStringConvertible {
  /// What was being done (`open`, `write`, `rename`).
  var operation: String
  /// The file concerned.
  var path: String
  /// The `errno` value.
  var code: Int32

  /// Captures the current `errno` for `operation` on `path`.
  init(_ operation: String, path: String, code: Int32 = errno) {
    self.operation = operation
    self.path = path
    self.code = code
  }

  /// Whether the failure means the disk (or the user's quota) is full.
  var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT }

  /// `operation path: reason`.
  var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
}

/// File-system operations the downloader needs, on POSIX calls so they behave alike on every platform.
enum FileSystem {
  /// Size in bytes of the regular file at `path`, or nil when there is none.
  static func regularFileSize(atPath path: String) -> Int64? {
    var status = stat()
    guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Int64(status.st_size)
  }

  /// Bytes available to this user on the file system holding `directory`, or nil when unknown.
  static func availableBytes(inDirectory directory: String) -> Int64? {
    var info = statvfs()
    guard statvfs(directory, &info) == 0 else { return nil }
    let (bytes, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: Int64(clamping: info.f_frsize))
    return overflow ? Int64.max : bytes
  }

  /// Creates `path` and its missing parents with mode 0700 (no-op when it exists as a directory).
  static func createDirectory(atPath path: String) throws {
    var status = stat()
    if stat(path, &status) == 0 {
      guard (status.st_mode & S_IFMT) == S_IFDIR else { throw FileSystemFailure("mkdir", path: path, code: ENOTDIR) }
      return
    }
    let parent = parentDirectory(of: path)
    if parent != path && !parent.isEmpty { try createDirectory(atPath: parent) }
    guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw FileSystemFailure("mkdir", path: path) }
  }

  /// The directory part of `path` (`/a/b` for `/a/b/c`).
  static func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }

  /// Names of the entries of `directory` (without `.` and `..`).
  static func directoryEntries(atPath directory: String) throws -> [String] {
    guard let stream = opendir(directory) else { throw FileSystemFailure("opendir", path: directory) }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// Removes the file at `path`; a file that is already gone is not an error.
  static func removeFile(atPath path: String) throws {
    guard unlink(path) == 0 || errno == ENOENT else { throw FileSystemFailure("unlink", path: path) }
  }

  /// Atomically replaces `destination` with `source` (same file system).
  static func rename(_ source: String, to destination: String) throws {
    #if canImport(Darwin)
      let result = Darwin.rename(source, destination)
    #elseif canImport(Glibc)
      let result = Glibc.rename(source, destination)
    #else
      let result = Musl.rename(source, destination)
    #endif
    guard result == 0 else { throw FileSystemFailure("rename", path: destination) }
  }

  /// Writes `bytes` to a temporary file beside `path`, flushes it, and renames it over `path`.
  static func writeAtomically(_ bytes: [UInt8], toPath path: String) throws {
    let temporaryPath = parentDirectory(of: path) + "/.tmp-\(UInt64.random(in: 0...UInt64.max))"
    do {
      let file = try OutputFile(path: temporaryPath, truncate: true)
      defer { file.close() }
      try bytes.withUnsafeBytes { try file.write($0) }
      try file.synchronize()
      try rename(temporaryPath, to: path)
    } catch {
      try? removeFile(atPath: temporaryPath)
      throw error
    }
  }

  /// The whole content of the regular file at `path`, refusing files larger than `limit` bytes.
  static func readFile(atPath path: String, limit: Int) throws -> [UInt8] {
    var bytes: [UInt8] = []
    try readChunks(atPath: path) { chunk in
      guard bytes.count + chunk.count <= limit else { throw FileSystemFailure("read", path: path, code: EFBIG) }
      bytes.append(contentsOf: chunk)
    }
    return bytes
  }

  /// Reads the file at `path` from `offset` to its end in chunks, calling `body` with each.
  static func readChunks(
    atPath path: String, from offset: Int64 = 0, _ body: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw FileSystemFailure("open", path: path) }
    defer { _ = close(descriptor) }
    guard lseek(descriptor, off_t(offset), SEEK_SET) >= 0 else { throw FileSystemFailure("lseek", path: path) }
    let chunkSize = 1 << 20
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
    defer { buffer.deallocate() }
    while true {
      let count = read(descriptor, buffer.baseAddress, chunkSize)
      if count < 0 {
        if errno == EINTR { continue }
        throw FileSystemFailure("read", path: path)
      }
      if count == 0 { return }
      try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }
  }
}

/// A file opened for writing at its end, closed explicitly with ``close()``.
final class OutputFile {
  /// The path it was opened with.
  let path: String
  /// The open descriptor, or -1 after ``close()``.
  private var descriptor: Int32

  /// Opens (creating with mode 0600) `path` for appending; `truncate` empties it first.
  init(path: String, truncate: Bool) throws {
    self.path = path
    descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0o600)
    guard descriptor >= 0 else { throw FileSystemFailure("open", path: path) }
  }

  deinit { close() }

  /// Writes all of `bytes`, retrying interrupted and short writes.
  func write(_ bytes: UnsafeRawBufferPointer) throws {
    guard var start = bytes.baseAddress else { return }
    var remaining = bytes.count
    while remaining > 0 {
      #if canImport(Darwin)
        let written = Darwin.write(descriptor, start, remaining)
      #elseif canImport(Glibc)
        let written = Glibc.write(descriptor, start, remaining)
      #else
        let written = Musl.write(descriptor, start, remaining)
      #endif
      if written < 0 {
        if errno == EINTR { continue }
        throw FileSystemFailure("write", path: path)
      }
      start += written
      remaining -= written
    }
  }

  /// Flushes the file's data to the storage device.
  func synchronize() throws {
    guard fsync(descriptor) == 0 else { throw FileSystemFailure("fsync", path: path) }
  }

  /// Closes the descriptor (idempotent).
  func close() {
    guard descriptor >= 0 else { return }
    #if canImport(Darwin)
      _ = Darwin.close(descriptor)
    #elseif canImport(Glibc)
      _ = Glibc.close(descriptor)
    #else
      _ = Musl.close(descriptor)
    #endif
    descriptor = -1
  }
}

/// An exclusive `flock` on a lock file, shared by every thread and process using that file.
final class FileLock: Sendable {
  /// The descriptor holding the lock.
  private let descriptor: Int32

  /// Opens `path`, creating it when needed, and waits for the exclusive lock, polling so that
  /// the wait neither blocks a concurrency thread nor outlives task cancellation.
  static func acquire(path: String) async throws -> FileLock {
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw FileSystemFailure("open", path: path) }
    var delay: UInt64 = 2_000_000
    while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR else {
        let failure = FileSystemFailure("flock", path: path)
        _ = close(descriptor)
        throw failure
      }
      do {
        try await Task.sleep(nanoseconds: delay)
      } catch {
        _ = close(descriptor)
        throw error
      }
      delay = min(delay * 2, 50_000_000)
    }
    return FileLock(descriptor: descriptor)
  }

  /// Holds the lock on `path` while `body` runs.
  static func withExclusiveLock<Result>(path: String, _ body: () async throws -> Result) async throws -> Result {
    let lock = try await acquire(path: path)
    defer { lock.release() }
    return try await body()
  }

  /// Wraps a descriptor that holds the lock.
  private init(descriptor: Int32) { self.descriptor = descriptor }

  /// Releases the lock (closing the descriptor in `deinit` would too, but ARC may run it early).
  func release() { _ = flock(descriptor, LOCK_UN) }

  deinit { _ = close(descriptor) }
}
