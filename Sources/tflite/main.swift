import TFLiteCommandLine

// The `tflite` executable is a thin shell over `TFLiteCommandLine`.
exit(Int32(CommandLineTool.main(arguments: Array(CommandLine.arguments.dropFirst()))))
