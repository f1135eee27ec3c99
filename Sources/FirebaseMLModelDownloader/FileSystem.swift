import Foundation

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
    let name = String(path[path.index(after: path.lastIndex(of: "/") ?? path.index(before: path.startIndex))...])
    try DirectoryHandle(path: parentDirectory(of: path)).writeAtomically(bytes, to: name)
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

  /// Reads the file at `path` from its start to its end in chunks, calling `body` with each.
  static func readChunks(atPath path: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw FileSystemFailure("open", path: path) }
    defer { closeDescriptor(descriptor) }
    try readChunks(descriptor: descriptor, path: path, body)
  }

  /// Reads the open file `descriptor` from its current position to its end in 1 MiB chunks.
  static func readChunks(descriptor: Int32, path: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
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

  /// Exactly `count` bytes of `descriptor` at `offset` (fewer only at the end of the file).
  static func readBytes(descriptor: Int32, at offset: Int64, count: Int, path: String) throws -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
      let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled)) }
      if got < 0 {
        if errno == EINTR { continue }
        throw FileSystemFailure("read", path: path)
      }
      if got == 0 { break }
      filled += got
    }
    return Array(bytes.prefix(filled))
  }
}

/// A file opened for writing at its end, closed explicitly with ``close()``.
final class OutputFile {
  /// The name or path it was opened with (for messages).
  let path: String
  /// The open descriptor, or -1 after ``close()``.
  private var descriptor: Int32

  /// Takes ownership of `descriptor`, open for writing.
  init(descriptor: Int32, path: String) {
    self.descriptor = descriptor
    self.path = path
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
    closeDescriptor(descriptor)
    descriptor = -1
  }
}

/// Closes `descriptor`, ignoring errors.
func closeDescriptor(_ descriptor: Int32) {
  #if canImport(Darwin)
    _ = Darwin.close(descriptor)
  #elseif canImport(Glibc)
    _ = Glibc.close(descriptor)
  #else
    _ = Musl.close(descriptor)
  #endif
}

/// An open folder: every file is created, opened, renamed and removed relative to it by a plain
/// name, and never through a symbolic link (`O_NOFOLLOW`, `AT_SYMLINK_NOFOLLOW`), so a link
/// planted in the folder cannot redirect a write elsewhere.
final class DirectoryHandle: Sendable {
  /// The folder's absolute path (for the paths handed to users and for messages).
  let path: String
  /// The open folder.
  private let descriptor: Int32

  /// Opens the folder at `path`.
  init(path: String) throws {
    let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { throw FileSystemFailure("open", path: path) }
    self.path = path
    self.descriptor = descriptor
  }

  deinit { closeDescriptor(descriptor) }

  /// The absolute path of entry `name`.
  func path(of name: String) -> String { "\(path)/\(name)" }

  /// The status of entry `name` itself (a link is not followed), or nil when it does not exist.
  func status(of name: String) -> stat? {
    var status = stat()
    return fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 ? status : nil
  }

  /// Size of entry `name` when it is a regular file, else nil.
  func regularFileSize(_ name: String) -> Int64? {
    guard let status = status(of: name), (status.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Int64(status.st_size)
  }

  /// Opens regular file `name` for reading; a link, folder or device is refused.
  func openForReading(_ name: String) throws -> Int32 {
    let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    guard file >= 0 else { throw FileSystemFailure("open", path: path(of: name)) }
    return try Self.requireRegular(file, path: path(of: name))
  }

  /// Opens regular file `name` for appending, creating it with mode 0600 when `creates`;
  /// `truncates` empties it first. A link at `name` is refused.
  func openForWriting(_ name: String, creates: Bool = true, truncates: Bool) throws -> OutputFile {
    let flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (creates ? O_CREAT : 0) | (truncates ? O_TRUNC : 0)
    let file = openat(descriptor, name, flags, 0o600)
    guard file >= 0 else { throw FileSystemFailure("open", path: path(of: name)) }
    return OutputFile(descriptor: try Self.requireRegular(file, path: path(of: name)), path: path(of: name))
  }

  /// Opens (creating when possible) lock file `name`: read-write, or read-only on a read-only
  /// folder (`flock` needs no write access); nil when it neither exists nor can be created there.
  func openLockFile(_ name: String) throws -> (descriptor: Int32, writable: Bool)? {
    var file = openat(descriptor, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
    var writable = true
    if file < 0 && (errno == EROFS || errno == EACCES || errno == EPERM) {
      file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
      writable = false
      if file < 0 && errno == ENOENT { return nil }
    }
    guard file >= 0 else { throw FileSystemFailure("open", path: path(of: name)) }
    return (try Self.requireRegular(file, path: path(of: name)), writable)
  }

  /// Keeps `file` if it is a regular file; otherwise closes it and throws.
  private static func requireRegular(_ file: Int32, path: String) throws -> Int32 {
    var status = stat()
    guard fstat(file, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
      closeDescriptor(file)
      throw FileSystemFailure("open", path: path, code: EINVAL)
    }
    // O_NONBLOCK only kept a FIFO planted at the name from blocking the open.
    _ = fcntl(file, F_SETFL, fcntl(file, F_GETFL) & ~O_NONBLOCK)
    return file
  }

  /// The whole content of regular file `name`, refusing files larger than `limit` bytes.
  func readFile(_ name: String, limit: Int) throws -> [UInt8] {
    let file = try openForReading(name)
    defer { closeDescriptor(file) }
    var bytes: [UInt8] = []
    try FileSystem.readChunks(descriptor: file, path: path(of: name)) { chunk in
      guard bytes.count + chunk.count <= limit else { throw FileSystemFailure("read", path: path(of: name), code: EFBIG) }
      bytes.append(contentsOf: chunk)
    }
    return bytes
  }

  /// Renames entry `source` to `destination`, replacing it atomically.
  func rename(_ source: String, to destination: String) throws {
    guard renameat(descriptor, source, descriptor, destination) == 0 else { throw FileSystemFailure("rename", path: path(of: destination)) }
  }

  /// Removes file `name`; one already gone is not an error.
  func remove(_ name: String) throws {
    guard unlinkat(descriptor, name, 0) == 0 || errno == ENOENT else { throw FileSystemFailure("unlink", path: path(of: name)) }
  }

  /// Names of the folder's entries (without `.` and `..`).
  func entries() throws -> [String] { try FileSystem.directoryEntries(atPath: path) }

  /// Flushes the folder's entries (renames, creations) to the storage device; failures (some
  /// file systems refuse `fsync` on folders) are ignored.
  func synchronize() { _ = fsync(descriptor) }

  /// Writes `bytes` to a temporary file in the folder, flushes it, and renames it over `name`:
  /// readers see the old content or the new, never a mix. `pausePoint` names the moment between
  /// the two steps for ``TestPausePoints``.
  func writeAtomically(_ bytes: [UInt8], to name: String, pausePoint: String? = nil) throws {
    let temporary = ".tmp-\(UInt64.random(in: 0...UInt64.max))"
    do {
      let file = try openForWriting(temporary, truncates: true)
      defer { file.close() }
      try bytes.withUnsafeBytes { try file.write($0) }
      try file.synchronize()
      if let pausePoint { TestPausePoints.pause(at: pausePoint) }
      try rename(temporary, to: name)
      synchronize()
    } catch {
      try? remove(temporary)
      throw error
    }
  }

  /// Bytes available to this user on the folder's file system, or nil when unknown.
  func availableBytes() -> Int64? {
    var info = statvfs()
    guard fstatvfs(descriptor, &info) == 0 else { return nil }
    let (bytes, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: Int64(clamping: info.f_frsize))
    return overflow ? Int64.max : bytes
  }
}

/// Named moments of an installation where a test can stop the process: when the environment
/// variable `TFLITE_DOWNLOADER_PAUSE_AT` equals the name, the process prints
/// `paused at NAME` to standard error and sleeps until it is killed. Unset, it does nothing.
enum TestPausePoints {
  /// The point asked for, read once.
  private static let requested = ProcessInfo.processInfo.environment["TFLITE_DOWNLOADER_PAUSE_AT"]

  /// Stops here forever when `point` is the requested one.
  static func pause(at point: String) {
    guard requested == point else { return }
    FileHandle.standardError.write(Data("paused at \(point)\n".utf8))
    while true { sleep(60) }
  }
}

/// An exclusive `flock` on a lock file, shared by every thread and process using that file. The
/// holder writes its process ID into the file so that a waiting process can say whom it waits for.
final class FileLock: Sendable {
  /// The descriptor holding the lock.
  private let descriptor: Int32

  /// Opens lock file `name` in `directory` and waits for the exclusive lock, polling (at most
  /// every 50 ms, so waiting costs next to no CPU) so that the wait neither blocks a concurrency
  /// thread nor outlives task cancellation. `waiting` is called about once a second while another
  /// process holds the lock, with that process's ID when it wrote one. Returns nil when the folder
  /// is read-only and has no lock file (nothing can be written there, so nothing needs locking).
  static func acquire(
    name: String, in directory: DirectoryHandle, waiting: (_ holder: Int32?) -> Void
  ) async throws -> FileLock? {
    guard let (descriptor, writable) = try directory.openLockFile(name) else { return nil }
    var delay: UInt64 = 2_000_000
    var nextReport = DispatchTime.now().uptimeNanoseconds + 200_000_000
    while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR else {
        let failure = FileSystemFailure("flock", path: directory.path(of: name))
        closeDescriptor(descriptor)
        throw failure
      }
      if DispatchTime.now().uptimeNanoseconds >= nextReport {
        waiting(holder(of: descriptor))
        nextReport = DispatchTime.now().uptimeNanoseconds + 1_000_000_000
      }
      do {
        try await Task.sleep(nanoseconds: delay)
      } catch {
        closeDescriptor(descriptor)
        throw error
      }
      delay = min(delay * 2, 50_000_000)
    }
    if writable {
      let text = Array("\(getpid())\n".utf8)
      if ftruncate(descriptor, 0) == 0 { _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) } }
    }
    return FileLock(descriptor: descriptor)
  }

  /// The process ID written in the lock file, if any.
  private static func holder(of descriptor: Int32) -> Int32? {
    guard let bytes = try? FileSystem.readBytes(descriptor: descriptor, at: 0, count: 16, path: "lock") else { return nil }
    return Int32(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// Wraps a descriptor that holds the lock.
  private init(descriptor: Int32) { self.descriptor = descriptor }

  /// Releases the lock (closing the descriptor in `deinit` would too, but ARC may run it early).
  func release() { _ = flock(descriptor, LOCK_UN) }

  deinit { closeDescriptor(descriptor) }
}
