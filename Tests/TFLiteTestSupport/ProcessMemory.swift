#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What tests measure of the process's memory.
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
}
