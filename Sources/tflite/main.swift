import TFLiteCommandLine

// The `tflite` executable is a thin shell over `TFLiteCommandLine`.
exit(CommandLineTool.main(arguments: Array(CommandLine.arguments.dropFirst())))
