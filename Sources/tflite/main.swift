import TFLiteCommandLine

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// The `tflite` executable is a thin shell over `TFLiteCommandLine`.
exit(CommandLineTool.main(arguments: Array(CommandLine.arguments.dropFirst())))
