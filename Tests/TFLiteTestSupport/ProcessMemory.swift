#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What tests measure of the process's memory: resident set size and the C heap's bytes in use.
/// Each reads what the platform offers and returns nil where it offers nothing.
public enum ProcessMemory {
  /// The process's peak resident set size in bytes.
  public static func peakResidentBytes() -> Int {
    var usage = rusage()
    #if canImport(Darwin)
      getrusage(RUSAGE_SELF, &usage)
      return usage.ru_maxrss
    #else
      getrusage(RUSAGE_SELF.rawValue, &usage)
      return usage.ru_maxrss * 1024
    #endif
  }

  /// The process's current resident set size in bytes: `/proc/self/statm` on Linux, the Mach task
  /// information on Apple platforms.
  public static func residentBytes() -> Int? {
    #if canImport(Darwin)
      var info = mach_task_basic_info()
      var count = mach_msg_type_number_t(MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
      let status = withUnsafeMutablePointer(to: &info) { pointer in
        pointer.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
          task_info(task_self_trap(), task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count)
        }
      }
      return status == KERN_SUCCESS ? Int(info.resident_size) : nil
    #elseif canImport(Glibc) || canImport(Musl)
      // statm: total program size, then resident pages, in pages.
      guard let text = readSmallFile("/proc/self/statm") else { return nil }
      let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
      guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
      return pages * sysconf(Int32(_SC_PAGESIZE))
    #else
      return nil
    #endif
  }

  /// Bytes the C heap has handed out and not taken back (malloc'd and not freed, including large
  /// blocks it mapped): `malloc_zone_statistics` on Apple platforms, glibc's `malloc_info` totals
  /// on Linux.
  public static func heapInUseBytes() -> Int? {
    #if canImport(Darwin)
      var statistics = malloc_statistics_t()
      malloc_zone_statistics(nil, &statistics)
      return Int(statistics.size_in_use)
    #elseif canImport(Glibc)
      return glibcHeapInUse()
    #else
      return nil
    #endif
  }

  #if canImport(Glibc)
    /// glibc's heap in use from `malloc_info`'s closing totals: memory the allocator got from the
    /// system for its arenas, less the free chunks it holds, plus its separately mapped blocks.
    /// `malloc_info` is looked up at run time: Swift's Glibc module does not declare `malloc.h`.
    private static func glibcHeapInUse() -> Int? {
      typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info") else { return nil }
      let mallocInfo = unsafeBitCast(symbol, to: MallocInfo.self)
      var buffer: UnsafeMutablePointer<CChar>?
      var bufferSize = 0
      guard let stream = open_memstream(&buffer, &bufferSize) else { return nil }
      let status = mallocInfo(0, stream)
      fclose(stream)
      defer { free(buffer) }
      guard status == 0, let buffer else { return nil }
      let xml = String(cString: buffer)
      // The totals over every arena follow the last </heap>.
      let totals = xml[(xml.ranges(of: "</heap>").last?.upperBound ?? xml.startIndex)...]
      func sizeField(_ element: String, _ type: String) -> Int? {
        guard let start = totals.firstRange(of: "<\(element) type=\"\(type)\"") else { return nil }
        let rest = totals[start.upperBound...]
        guard let open = rest.firstRange(of: "size=\""), let close = rest[open.upperBound...].firstIndex(of: "\"") else {
          return nil
        }
        return Int(rest[open.upperBound..<close])
      }
      guard let system = sizeField("system", "current"), let fast = sizeField("total", "fast"),
        let rest = sizeField("total", "rest"), let mapped = sizeField("total", "mmap")
      else { return nil }
      return system - fast - rest + mapped
    }
  #endif

  #if canImport(Glibc) || canImport(Musl)
    /// The text of a small file such as `/proc/self/statm`, or nil when it cannot be read.
    private static func readSmallFile(_ path: String) -> String? {
      let descriptor = open(path, O_RDONLY)
      guard descriptor >= 0 else { return nil }
      defer { close(descriptor) }
      var bytes = [UInt8](repeating: 0, count: 256)
      let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      guard count > 0 else { return nil }
      return String(decoding: bytes[..<count], as: UTF8.self)
    }
  #endif
}
