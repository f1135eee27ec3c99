// Byte copies and fills for throwing functions, through one call that is never inlined.
//
// Swift 6.3's LLVM can lower a `memmove`, `memcpy` or `memset` at the end of a throwing function
// into a tail call that skips restoring the error register (r12 on x86-64, x21 on arm64). When the
// function had used that register for something else, its caller finds a pointer there on the
// success path, takes it for a thrown error and crashes reading it (swiftlang/swift#90477, fixed in
// LLVM by llvm/llvm-project#214590, not in a released Swift 6.3 toolchain). It happened here only
// in release builds: IF, WHILE and the Keras sequence models crashed when a branch or loop
// variable was copied. A call to a non-throwing function is never made a tail call out of a
// throwing one, and the library call inside these functions is safe to tail-call.
// `Scripts/check_error_register_tail_calls.py` lists any throwing function of a release build that
// still tail-calls one of the three.

/// Copies `byteCount` bytes from `source` to `destination` (they may overlap); for throwing
/// functions in place of `copyMemory(from:byteCount:)`.
@inline(never)
func copyMemoryInThrowingCode(to destination: UnsafeMutableRawPointer, from source: UnsafeRawPointer, byteCount: Int) {
  destination.copyMemory(from: source, byteCount: byteCount)
}

/// Sets `byteCount` bytes at `destination` to zero; for throwing functions in place of
/// `initializeMemory(as:repeating:count:)`.
@inline(never)
func zeroMemoryInThrowingCode(_ destination: UnsafeMutableRawPointer, byteCount: Int) {
  destination.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
}
