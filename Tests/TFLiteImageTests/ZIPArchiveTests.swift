import Testing
@testable import TFLiteImage

@Suite struct ZIPArchiveTests {
  @Test func readsStoredAndDeflatedEntriesAfterOtherBytes() throws {
    let archive = try ZIPArchive(bytes: try ImageFixtures.bytes("zip/appended.bin"))
    #expect(archive.entries.map(\.name) == ["labels.txt", "vocab.txt"])
    let labels = try #require(archive.entry(named: "labels.txt"))
    #expect(labels.method == 0)
    #expect(try archive.contents(of: labels) == Array("cat\ndog\n".utf8))
    let vocabulary = try #require(archive.entry(named: "vocab.txt"))
    #expect(vocabulary.method == 8)
    #expect(vocabulary.compressedSize < vocabulary.uncompressedSize)
    #expect(try archive.contents(of: vocabulary) == Array((0..<500).map { "word\($0)\n" }.joined().utf8))
    #expect(throws: ImageError.self) { try archive.contents(of: vocabulary, maximumSize: 100) }
  }

  @Test func refusesClimbingNames() throws {
    #expect {
      try ZIPArchive(bytes: try ImageFixtures.bytes("zip/traversal.zip"))
    } throws: { error in
      "\(error)".contains("\"../evil.txt\" leaves the archive's folder")
    }
  }

  @Test func refusesLyingSizes() throws {
    let archive = try ZIPArchive(bytes: try ImageFixtures.bytes("zip/lying_size.zip"))
    #expect {
      try archive.contents(of: archive.entries[0])
    } throws: { error in
      "\(error)".contains("vocab.txt")
    }
  }

  @Test func everyTruncationAndFlipThrowsOrReads() throws {
    let bytes = try ImageFixtures.bytes("zip/appended.bin")
    func readAll(_ bytes: [UInt8]) throws {
      let archive = try ZIPArchive(bytes: bytes)
      for entry in archive.entries { _ = try archive.contents(of: entry, maximumSize: 1 << 20) }
    }
    for length in 0..<bytes.count {
      #expect(throws: ImageError.self) { try readAll(Array(bytes[..<length])) }
    }
    var generator = SeededGenerator(seed: 2)
    for _ in 0..<500 {
      var flipped = bytes
      flipped[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
      do { try readAll(flipped) } catch { #expect(!"\(error)".isEmpty) }
    }
  }
}
