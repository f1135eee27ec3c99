// The frame of a JPEG (its SOF segment) and the per-component geometry derived from it, as
// libjpeg derives it (jdinput.c): a component with sampling factors h×v in a frame whose largest
// factors are Hmax×Vmax covers ceil(width × h / Hmax) × ceil(height × v / Vmax) samples; an MCU
// of an interleaved scan covers Hmax×Vmax blocks of 8×8 pixels, and a component's plane is padded
// to whole MCUs.

/// One colour component of the frame.
struct JPEGComponent {
  /// The identifier scans use to refer to the component.
  let identifier: UInt8
  /// Horizontal sampling factor, 1...4.
  let horizontalFactor: Int
  /// Vertical sampling factor, 1...4.
  let verticalFactor: Int
  /// Which of the four quantization tables the component uses.
  let quantizationTable: Int
  /// Samples per row (before padding).
  var sampleWidth = 0
  /// Rows of samples (before padding).
  var sampleHeight = 0
  /// Blocks per row that hold samples: `ceil(sampleWidth / 8)` (a non-interleaved scan's width).
  var blocksPerRow = 0
  /// Rows of blocks that hold samples.
  var blockRows = 0
  /// Blocks per row of the plane, padded to whole MCUs.
  var paddedBlocksPerRow = 0
  /// Rows of blocks of the plane, padded to whole MCUs.
  var paddedBlockRows = 0
}

/// The frame header and the MCU grid.
struct JPEGFrame {
  /// Image width in pixels.
  let width: Int
  /// Image height in pixels.
  let height: Int
  /// Whether the frame is progressive (SOF2) rather than sequential (SOF0, SOF1).
  let isProgressive: Bool
  /// The components, in frame order.
  var components: [JPEGComponent]
  /// Largest horizontal sampling factor.
  let maxHorizontalFactor: Int
  /// Largest vertical sampling factor.
  let maxVerticalFactor: Int
  /// MCUs per row of an interleaved scan.
  let mcusPerRow: Int
  /// MCU rows of an interleaved scan.
  let mcuRows: Int

  /// Parses an SOF segment body (`segment` excludes the marker and length), checks it against
  /// `limits` before anything is allocated, and computes the component geometry.
  init(segment: ArraySlice<UInt8>, isProgressive: Bool, limits: ImageDecodingLimits, offset: Int) throws(ImageError) {
    func malformed(_ message: String) -> ImageError { .malformed(format: "JPEG", message: message, offset: offset) }
    let base = segment.startIndex
    guard segment.count >= 6 else { throw malformed("frame header of \(segment.count) bytes") }
    let precision = Int(segment[base])
    guard precision == 8 else {
      throw ImageError.unsupported(format: "JPEG", message: "\(precision)-bit samples (only 8-bit JPEG is decoded)")
    }
    height = Int(segment[base + 1]) << 8 | Int(segment[base + 2])
    width = Int(segment[base + 3]) << 8 | Int(segment[base + 4])
    let componentCount = Int(segment[base + 5])
    guard width > 0 else { throw malformed("frame width 0") }
    guard height > 0 else {
      throw ImageError.unsupported(format: "JPEG", message: "height given later by a DNL marker")
    }
    guard [1, 3, 4].contains(componentCount) else {
      throw ImageError.unsupported(format: "JPEG", message: "\(componentCount) components (1, 3 or 4 are decoded)")
    }
    guard segment.count == 6 + 3 * componentCount else {
      throw malformed("frame header of \(segment.count) bytes for \(componentCount) components")
    }
    try limits.check(width: width, height: height)
    self.isProgressive = isProgressive
    var components: [JPEGComponent] = []
    for index in 0..<componentCount {
      let entry = base + 6 + 3 * index
      let factors = Int(segment[entry + 1])
      let component = JPEGComponent(
        identifier: segment[entry], horizontalFactor: factors >> 4, verticalFactor: factors & 15,
        quantizationTable: Int(segment[entry + 2]))
      guard (1...4).contains(component.horizontalFactor), (1...4).contains(component.verticalFactor) else {
        throw malformed("component \(component.identifier) has sampling factors \(factors >> 4)×\(factors & 15)")
      }
      guard component.quantizationTable < 4 else {
        throw malformed("component \(component.identifier) uses quantization table \(component.quantizationTable)")
      }
      if components.contains(where: { $0.identifier == component.identifier }) {
        throw malformed("two components with identifier \(component.identifier)")
      }
      components.append(component)
    }
    maxHorizontalFactor = components.map(\.horizontalFactor).max()!
    maxVerticalFactor = components.map(\.verticalFactor).max()!
    mcusPerRow = (width + 8 * maxHorizontalFactor - 1) / (8 * maxHorizontalFactor)
    mcuRows = (height + 8 * maxVerticalFactor - 1) / (8 * maxVerticalFactor)
    for index in components.indices {
      var component = components[index]
      guard maxHorizontalFactor % component.horizontalFactor == 0,
        maxVerticalFactor % component.verticalFactor == 0
      else {
        throw ImageError.unsupported(
          format: "JPEG",
          message: "sampling factors \(component.horizontalFactor)×\(component.verticalFactor) that do not divide "
            + "\(maxHorizontalFactor)×\(maxVerticalFactor)")
      }
      component.sampleWidth = (width * component.horizontalFactor + maxHorizontalFactor - 1) / maxHorizontalFactor
      component.sampleHeight = (height * component.verticalFactor + maxVerticalFactor - 1) / maxVerticalFactor
      component.blocksPerRow = (component.sampleWidth + 7) / 8
      component.blockRows = (component.sampleHeight + 7) / 8
      component.paddedBlocksPerRow = mcusPerRow * component.horizontalFactor
      component.paddedBlockRows = mcuRows * component.verticalFactor
      components[index] = component
    }
    self.components = components
  }
}
