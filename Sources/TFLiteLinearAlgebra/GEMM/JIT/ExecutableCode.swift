#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Machine code made executable under W^X: the bytes are written to a fresh read-write mapping,
/// which is then switched to read+execute with `mprotect`. No page is ever writable and
/// executable at once, and the code cannot be changed afterwards.
///
/// Only where run-time code generation is allowed: x86-64 Linux, macOS and other Unix systems.
/// iOS, tvOS, watchOS and visionOS forbid it for ordinary apps, and there, as on every other
/// architecture, `init` returns nil and the Swift kernels run.
@usableFromInline package final class ExecutableCode: @unchecked Sendable {
  // @unchecked Sendable: the mapping is immutable (read+execute) from the end of `init` on.

  /// The first instruction.
  @usableFromInline package let entry: UnsafeRawPointer
  /// Size of the mapping in bytes (whole pages).
  private let mappedBytes: Int

  /// Copies `code` into executable memory; nil when the platform or the OS refuses.
  @usableFromInline package init?(_ code: [UInt8]) {
    #if arch(x86_64) && !(os(iOS) || os(tvOS) || os(watchOS) || os(visionOS))
      let pageSize = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
      guard !code.isEmpty, code.count <= 1 << 24 else { return nil }
      let bytes = (code.count + pageSize - 1) / pageSize * pageSize
      #if canImport(Darwin)
        let flags = MAP_PRIVATE | MAP_ANON
      #else
        let flags = MAP_PRIVATE | MAP_ANONYMOUS
      #endif
      guard let mapping = mmap(nil, bytes, PROT_READ | PROT_WRITE, flags, -1, 0), mapping != MAP_FAILED else {
        return nil
      }
      code.withUnsafeBytes { mapping.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
      guard mprotect(mapping, bytes, PROT_READ | PROT_EXEC) == 0 else {
        munmap(mapping, bytes)
        return nil
      }
      entry = UnsafeRawPointer(mapping)
      mappedBytes = bytes
    #else
      return nil
    #endif
  }

  deinit {
    #if arch(x86_64) && !(os(iOS) || os(tvOS) || os(watchOS) || os(visionOS))
      munmap(UnsafeMutableRawPointer(mutating: entry), mappedBytes)
    #endif
  }
}
