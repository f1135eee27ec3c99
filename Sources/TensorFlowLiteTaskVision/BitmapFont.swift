// A built-in 5×7 bitmap font for labelling results without system fonts. Each glyph is seven rows of
// five bits, written as "0"/"1" strings, most significant (leftmost) pixel first; a character cell
// is 6×8 pixels (one column and one row of spacing). The table covers digits, capital letters and
// common punctuation; lower-case letters are drawn as capitals, accented letters without their
// accents ("é" as "E"), and anything else as "?".

import Foundation

/// The 5×7 font.
public enum BitmapFont {
  /// Glyph width in pixels.
  public static let glyphWidth = 5
  /// Glyph height in pixels.
  public static let glyphHeight = 7
  /// Horizontal advance from one character to the next.
  public static let advance = 6
  /// Height of a line of text.
  public static let lineHeight = 8

  /// Rows of each glyph, as "0"/"1" strings separated by spaces.
  private static let glyphRows: [Character: String] = [
    "0": "01110 10001 10011 10101 11001 10001 01110", "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111", "3": "11110 00001 00001 01110 00001 00001 11110",
    "4": "00010 00110 01010 10010 11111 00010 00010", "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110", "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110", "9": "01110 10001 10001 01111 00001 00010 01100",
    "A": "01110 10001 10001 11111 10001 10001 10001", "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110", "D": "11110 10001 10001 10001 10001 10001 11110",
    "E": "11111 10000 10000 11110 10000 10000 11111", "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111", "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110", "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001", "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001", "N": "10001 11001 10101 10011 10001 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110", "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101", "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110", "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110", "V": "10001 10001 10001 10001 10001 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010", "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 01010 00100 00100 00100 00100", "Z": "11111 00001 00010 00100 01000 10000 11111",
    " ": "00000 00000 00000 00000 00000 00000 00000", ".": "00000 00000 00000 00000 00000 01100 01100",
    ",": "00000 00000 00000 00000 01100 00100 01000", ":": "00000 01100 01100 00000 01100 01100 00000",
    "-": "00000 00000 00000 11111 00000 00000 00000", "_": "00000 00000 00000 00000 00000 00000 11111",
    "%": "11000 11001 00010 00100 01000 10011 00011", "(": "00010 00100 01000 01000 01000 00100 00010",
    ")": "01000 00100 00010 00010 00010 00100 01000", "/": "00000 00001 00010 00100 01000 10000 00000",
    "'": "00100 00100 01000 00000 00000 00000 00000", "!": "00100 00100 00100 00100 00100 00000 00100",
    "?": "01110 10001 00001 00010 00100 00000 00100", "#": "01010 01010 11111 01010 11111 01010 01010",
    "+": "00000 00100 00100 11111 00100 00100 00000", "=": "00000 00000 11111 00000 11111 00000 00000",
    "*": "00000 00100 10101 01110 10101 00100 00000", "\"": "01010 01010 01010 00000 00000 00000 00000",
    "&": "01100 10010 10100 01000 10101 10010 01101", "<": "00010 00100 01000 10000 01000 00100 00010",
    ">": "01000 00100 00010 00001 00010 00100 01000", "[": "01110 01000 01000 01000 01000 01000 01110",
    "]": "01110 00010 00010 00010 00010 00010 01110",
  ]

  /// Each glyph as seven 5-bit rows (bit 4 is the leftmost pixel).
  private static let glyphs: [Character: [UInt8]] = glyphRows.mapValues { rows in
    rows.split(separator: " ").map { UInt8($0, radix: 2)! }
  }

  /// The seven rows of `character`'s glyph (lower case as upper case, accents dropped, unknown characters as "?").
  public static func glyph(_ character: Character) -> [UInt8] {
    let plain = String(character).folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).uppercased()
    return plain.count == 1 ? glyphs[Character(plain)] ?? glyphs["?"]! : glyphs["?"]!
  }

  /// Whether pixel (`column`, `row`) of `character`'s glyph is set.
  public static func isSet(_ character: Character, column: Int, row: Int) -> Bool {
    guard (0..<glyphWidth).contains(column), (0..<glyphHeight).contains(row) else { return false }
    return glyph(character)[row] >> (glyphWidth - 1 - column) & 1 == 1
  }
}
