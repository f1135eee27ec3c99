#!/usr/bin/env python3
"""Writes the JPEG exactness corpus to TestModels/images/jpeg/: small JPEG files and, beside each,
`NAME.npy` with the pixels Pillow decodes from it (uint8 [H, W, C]; C = 1 for gray, 3 otherwise;
CMYK files as Pillow's `convert("RGB")`; EXIF orientation applied with `ImageOps.exif_transpose`),
and `manifest.txt` listing every file with what it covers.

Files come from two encoders:
- Pillow (libjpeg-turbo): baseline 4:4:4 / 4:2:2 / 4:2:0, progressive, grayscale, CMYK, EXIF
  orientations 1-8, qualities 50-100, odd sizes; plus variants made by editing marker segments
  of Pillow's output (Adobe APP14 instead of JFIF = RGB colour space; CMYK with Adobe transform 2
  = YCCK).
- A small baseline encoder below (float DCT, per-file optimal Huffman tables) for what Pillow
  cannot write: restart intervals, sampling factors 4:4:0, 4:1:1, 3x1 and mixed ones, one scan
  per component. Only the decoder's output matters: the expected pixels are always Pillow's.
The two photos scikit-learn ships (china.jpg, flower.jpg; CC BY 2.0, see their README in
sklearn/datasets/images) are copied unchanged.

Run with the project's venv: /work/venv/bin/python Scripts/make_jpeg_fixtures.py
Deterministic: the same Pillow gives the same files.
"""

import heapq
import io
import os
import shutil
import struct

import numpy as np
import sklearn.datasets
from PIL import Image, ImageOps

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "TestModels", "images", "jpeg")
RNG = np.random.default_rng(11)


def pattern(width, height, channels=3):
    """Smooth colour gradients plus noise and a few sharp edges: exercises all frequencies."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    planes = []
    for channel in range(channels):
        phase = channel * 1.7
        value = 128 + 90 * np.sin(x / (2.5 + channel) + phase) * np.cos(y / (3.1 + channel) - phase)
        value += 40 * ((x + 2 * y + channel * 5) % 11 < 4)
        value += RNG.normal(0, 12, size=value.shape)
        planes.append(value)
    return np.clip(np.stack(planes, axis=-1), 0, 255).astype(np.uint8)


def expected_pixels(data):
    image = Image.open(io.BytesIO(data))
    image = ImageOps.exif_transpose(image)
    if image.mode == "CMYK":
        image = image.convert("RGB")
    pixels = np.asarray(image)
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    return np.ascontiguousarray(pixels, dtype=np.uint8)


MANIFEST = []


def write(name, data, note):
    with open(os.path.join(ROOT, name + ".jpg"), "wb") as file:
        file.write(data)
    np.save(os.path.join(ROOT, name + ".npy"), expected_pixels(data))
    MANIFEST.append(f"{name}.jpg  {note}")


def pillow_jpeg(array, **options):
    mode = "L" if array.shape[2] == 1 else "RGB"
    image = Image.fromarray(array[:, :, 0] if mode == "L" else array, mode)
    if options.pop("cmyk", False):
        image = image.convert("CMYK")
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", **options)
    return buffer.getvalue()


def segments(data):
    """(marker, whole segment bytes) up to SOS; then ('rest', remaining bytes)."""
    position = 2
    result = []
    while True:
        marker = data[position + 1]
        length = struct.unpack(">H", data[position + 2 : position + 4])[0]
        if marker == 0xDA:
            result.append(("rest", data[position:]))
            return result
        result.append((marker, data[position : position + 2 + length]))
        position += 2 + length


def rebuild(parts):
    return b"\xff\xd8" + b"".join(part for _, part in parts)


def adobe_segment(transform):
    body = b"Adobe" + struct.pack(">HHHB", 100, 0, 0, transform)
    return b"\xff\xee" + struct.pack(">H", len(body) + 2) + body


# ---------------------------------------------------------------------------------------------
# A small baseline encoder.

ZIGZAG = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7,
          14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39,
          46, 53, 60, 61, 54, 47, 55, 62, 63]
BASE_LUMA = np.array([16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
                      14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113,
                      92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99])
DCT_MATRIX = np.array([[(np.sqrt(0.125) if u == 0 else 0.5) * np.cos((2 * x + 1) * u * np.pi / 16)
                        for x in range(8)] for u in range(8)])


def quant_table(quality, scale_chroma=1.0):
    scale = 5000 / quality if quality < 50 else 200 - 2 * quality
    table = np.floor((BASE_LUMA * scale_chroma * scale + 50) / 100)
    return np.clip(table, 1, 255).astype(np.int64)


def magnitude(value):
    value = abs(int(value))
    return value.bit_length()


def huffman_lengths(frequencies):
    """Code lengths for the symbols used, plus a reserved symbol 256 that takes the all-ones code."""
    counts = dict(frequencies)
    counts[256] = 0
    heap = [(count, symbol, [symbol]) for symbol, count in counts.items()]
    heapq.heapify(heap)
    lengths = {symbol: 0 for symbol in counts}
    if len(heap) == 1:
        lengths[heap[0][1]] = 1
    while len(heap) > 1:
        count_a, key_a, members_a = heapq.heappop(heap)
        count_b, key_b, members_b = heapq.heappop(heap)
        for symbol in members_a + members_b:
            lengths[symbol] += 1
        heapq.heappush(heap, (count_a + count_b, min(key_a, key_b), members_a + members_b))
    assert max(lengths.values()) <= 16, "code too long for this tiny encoder"
    # The reserved symbol must sort last among the longest codes so it gets the all-ones code.
    longest = max(lengths.values())
    lengths[256] = longest
    return lengths


def canonical_codes(lengths):
    ordered = sorted(lengths.items(), key=lambda item: (item[1], item[0]))
    codes, code, previous_length = {}, 0, ordered[0][1]
    for symbol, length in ordered:
        code <<= length - previous_length
        codes[symbol] = (code, length)
        code += 1
        previous_length = length
    counts = [0] * 16
    for symbol, length in ordered:
        if symbol != 256:
            counts[length - 1] += 1
    symbols = [symbol for symbol, _ in ordered if symbol != 256]
    return codes, counts, symbols


class BitWriter:
    def __init__(self):
        self.out = bytearray()
        self.accumulator = 0
        self.count = 0

    def write(self, value, length):
        for bit_index in range(length - 1, -1, -1):
            self.accumulator = (self.accumulator << 1) | ((value >> bit_index) & 1)
            self.count += 1
            if self.count == 8:
                self.out.append(self.accumulator)
                if self.accumulator == 0xFF:
                    self.out.append(0)
                self.accumulator = self.count = 0

    def pad(self):
        if self.count:
            self.write((1 << (8 - self.count)) - 1, 8 - self.count)


def encode_baseline(pixels, factors, quality=75, restart=0, separate_scans=False, identifiers=None,
                    extra_segments=b""):
    """pixels: [H, W, C] uint8, already in the JPEG colour space (YCbCr or gray)."""
    height, width, channel_count = pixels.shape
    identifiers = identifiers or list(range(1, channel_count + 1))
    max_h = max(h for h, _ in factors)
    max_v = max(v for _, v in factors)
    mcus_x = -(-width // (8 * max_h))
    mcus_y = -(-height // (8 * max_v))
    tables = [quant_table(quality), quant_table(quality, 1.4)]
    component_tables = [0] + [1] * (channel_count - 1)
    blocks = []  # per component: [block_row][block_col] -> zigzag coefficients
    for index, (h, v) in enumerate(factors):
        plane = pixels[:, :, index].astype(np.float64)
        ratio_x, ratio_y = max_h // h, max_v // v
        padded = np.pad(plane, ((0, (-height) % ratio_y), (0, (-width) % ratio_x)), mode="edge")
        small = padded.reshape(padded.shape[0] // ratio_y, ratio_y, padded.shape[1] // ratio_x, ratio_x).mean((1, 3))
        target_h, target_w = mcus_y * v * 8, mcus_x * h * 8
        small = np.pad(small, ((0, target_h - small.shape[0]), (0, target_w - small.shape[1])), mode="edge")
        table = tables[component_tables[index]]
        component_blocks = []
        for block_row in range(mcus_y * v):
            row = []
            for block_col in range(mcus_x * h):
                block = small[block_row * 8 : block_row * 8 + 8, block_col * 8 : block_col * 8 + 8] - 128
                coefficients = (DCT_MATRIX @ block @ DCT_MATRIX.T).flatten()
                quantized = np.round(coefficients / table).astype(np.int64)
                row.append([int(quantized[ZIGZAG[k]]) for k in range(64)])
            component_blocks.append(row)
        blocks.append(component_blocks)

    if separate_scans:
        scans = [[index] for index in range(channel_count)]
    else:
        scans = [list(range(channel_count))]

    def scan_blocks(scan):
        """(component, block) in MCU order, with the MCU index of each."""
        if len(scan) == 1:
            index = scan[0]
            h, v = factors[index]
            columns = -(-(-(-width * h // max_h)) // 8)
            rows = -(-(-(-height * v // max_v)) // 8)
            for row in range(rows):
                for column in range(columns):
                    yield row * columns + column, index, blocks[index][row][column]
        else:
            for mcu_row in range(mcus_y):
                for mcu_col in range(mcus_x):
                    for index in scan:
                        h, v = factors[index]
                        for y in range(v):
                            for x in range(h):
                                yield (mcu_row * mcus_x + mcu_col, index,
                                       blocks[index][mcu_row * v + y][mcu_col * h + x])

    def symbols_of(scan):
        """Yields ('restart', n) and (component, 'dc'|'ac', symbol, extra_bits, extra_length)."""
        predictions = {index: 0 for index in scan}
        previous_mcu = -1
        restarts = 0
        for mcu, index, block in scan_blocks(scan):
            if restart and mcu != previous_mcu and mcu > 0 and mcu % restart == 0:
                yield ("restart", restarts % 8)
                restarts += 1
                predictions = {key: 0 for key in scan}
            previous_mcu = mcu
            difference = block[0] - predictions[index]
            predictions[index] = block[0]
            size = magnitude(difference)
            bits = difference if difference >= 0 else difference + (1 << size) - 1
            yield (index, "dc", size, bits, size)
            run = 0
            last_nonzero = max([k for k in range(1, 64) if block[k] != 0], default=0)
            for k in range(1, last_nonzero + 1):
                value = block[k]
                if value == 0:
                    run += 1
                    continue
                while run > 15:
                    yield (index, "ac", 0xF0, 0, 0)
                    run -= 16
                size = magnitude(value)
                bits = value if value >= 0 else value + (1 << size) - 1
                yield (index, "ac", (run << 4) | size, bits, size)
                run = 0
            if last_nonzero < 63:
                yield (index, "ac", 0x00, 0, 0)

    out = bytearray(b"\xff\xd8")
    out += extra_segments
    for number, table in enumerate(tables[: 1 if channel_count == 1 else 2]):
        out += b"\xff\xdb" + struct.pack(">HB", 67, number) + bytes(int(table[ZIGZAG[k]]) for k in range(64))
    frame = struct.pack(">BHHB", 8, height, width, channel_count)
    for index, (h, v) in enumerate(factors):
        frame += struct.pack(">BBB", identifiers[index], (h << 4) | v, component_tables[index])
    out += b"\xff\xc0" + struct.pack(">H", len(frame) + 2) + frame
    if restart:
        out += b"\xff\xdd" + struct.pack(">HH", 4, restart)
    for scan in scans:
        events = list(symbols_of(scan))
        # One DC and one AC table per component of the scan (table number = position in scan).
        coders = {}
        header = b""
        for position, index in enumerate(scan):
            for kind, class_id in (("dc", 0), ("ac", 1)):
                frequencies = {}
                for event in events:
                    if event[0] == index and event[1] == kind:
                        frequencies[event[2]] = frequencies.get(event[2], 0) + 1
                codes, counts, symbols = canonical_codes(huffman_lengths(frequencies))
                coders[(index, kind)] = codes
                body = bytes([(class_id << 4) | position]) + bytes(counts) + bytes(symbols)
                out += b"\xff\xc4" + struct.pack(">H", len(body) + 2) + body
            header += bytes([identifiers[index], (position << 4) | position])
        header = bytes([len(scan)]) + header + bytes([0, 63, 0])
        out += b"\xff\xda" + struct.pack(">H", len(header) + 2) + header
        writer = BitWriter()
        for event in events:
            if event[0] == "restart":
                writer.pad()
                writer.out += bytes([0xFF, 0xD0 + event[1]])
                continue
            index, kind, symbol, bits, length = event
            code, code_length = coders[(index, kind)][symbol]
            writer.write(code, code_length)
            writer.write(bits, length)
        writer.pad()
        out += writer.out
    out += b"\xff\xd9"
    return bytes(out)


def to_ycbcr(rgb):
    rgb = rgb.astype(np.float64)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    y = 0.299 * r + 0.587 * g + 0.114 * b
    cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
    cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
    return np.clip(np.round(np.stack([y, cb, cr], -1)), 0, 255).astype(np.uint8)


JFIF = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    sizes = [(1, 1), (7, 5), (33, 17), (17, 33), (4, 4), (3, 9), (64, 48)]
    qualities = [50, 65, 75, 85, 90, 95, 100]
    subsamplings = {"444": 0, "422": 1, "420": 2}
    counter = 0
    for width, height in sizes:
        colour = pattern(width, height)
        for name, code in subsamplings.items():
            quality = qualities[counter % len(qualities)]
            counter += 1
            write(f"baseline_{name}_{width}x{height}_q{quality}",
                  pillow_jpeg(colour, quality=quality, subsampling=code),
                  f"Pillow baseline {name} quality {quality}")
            quality = qualities[counter % len(qualities)]
            counter += 1
            write(f"progressive_{name}_{width}x{height}_q{quality}",
                  pillow_jpeg(colour, quality=quality, subsampling=code, progressive=True),
                  f"Pillow progressive {name} quality {quality}")
        gray = pattern(width, height, 1)
        quality = qualities[counter % len(qualities)]
        counter += 1
        write(f"gray_{width}x{height}_q{quality}", pillow_jpeg(gray, quality=quality), f"Pillow grayscale q{quality}")
        write(f"gray_progressive_{width}x{height}_q{quality}", pillow_jpeg(gray, quality=quality, progressive=True),
              f"Pillow grayscale progressive q{quality}")
    for quality in (50, 100):
        write(f"baseline_420_33x17_q{quality}_optimized",
              pillow_jpeg(pattern(33, 17), quality=quality, optimize=True), "Pillow optimized Huffman tables")
    for width, height in [(7, 5), (33, 17)]:
        data = pillow_jpeg(pattern(width, height), quality=90, cmyk=True)
        write(f"cmyk_{width}x{height}", data, "Pillow CMYK (Adobe APP14 transform 0), expected = convert('RGB')")
        parts = segments(data)
        ycck = [(m, adobe_segment(2) if m == 0xEE else part) for m, part in parts]
        write(f"ycck_{width}x{height}", rebuild(ycck), "CMYK file relabelled YCCK (Adobe transform 2)")
        rgb_parts = [(m, adobe_segment(0) if m == 0xE0 else part)
                     for m, part in segments(pillow_jpeg(pattern(width, height), quality=90, subsampling=0))]
        write(f"adobe_rgb_{width}x{height}", rebuild(rgb_parts), "JFIF replaced by Adobe transform 0: RGB planes")
    upright = pattern(13, 6)  # the same pixels in all eight files
    for orientation in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = orientation
        write(f"exif_orientation_{orientation}",
              pillow_jpeg(upright, quality=92, subsampling=2, exif=exif.tobytes()),
              f"EXIF orientation {orientation}, expected = ImageOps.exif_transpose")
    # The small encoder: sampling factors Pillow cannot write, restart intervals, separate scans.
    cases = [
        ("sampling_440", [(1, 2), (1, 1), (1, 1)], 33, 17, 0, False),
        ("sampling_440_4x9", [(1, 2), (1, 1), (1, 1)], 4, 9, 0, False),
        ("sampling_411", [(4, 1), (1, 1), (1, 1)], 37, 11, 0, False),
        ("sampling_410", [(4, 2), (1, 1), (1, 1)], 29, 19, 0, False),
        ("sampling_31", [(3, 1), (1, 1), (1, 1)], 26, 9, 0, False),
        ("sampling_22_12_21", [(2, 2), (1, 2), (2, 1)], 35, 21, 0, False),
        ("sampling_22_11_11_width3", [(2, 2), (1, 1), (1, 1)], 3, 21, 0, False),
        ("sampling_420_restart1", [(2, 2), (1, 1), (1, 1)], 33, 17, 1, False),
        ("sampling_420_restart3", [(2, 2), (1, 1), (1, 1)], 47, 33, 3, False),
        ("sampling_444_restart5_separate_scans", [(1, 1), (1, 1), (1, 1)], 33, 17, 5, True),
        ("sampling_420_separate_scans", [(2, 2), (1, 1), (1, 1)], 31, 23, 0, True),
    ]
    for name, factors, width, height, restart, separate in cases:
        data = encode_baseline(to_ycbcr(pattern(width, height)), factors, quality=80, restart=restart,
                               separate_scans=separate, extra_segments=JFIF)
        write(name, data, f"small encoder, factors {factors}, restart {restart}, separate scans {separate}")
    write("gray_restart2", encode_baseline(pattern(21, 19, 1), [(1, 1)], quality=70, restart=2),
          "small encoder, grayscale, restart interval 2")
    images = os.path.join(os.path.dirname(sklearn.datasets.__file__), "images")
    for photo in ("china", "flower"):
        with open(os.path.join(images, photo + ".jpg"), "rb") as file:
            write("photo_" + photo, file.read(), "scikit-learn sample photo (CC BY 2.0)")
    with open(os.path.join(ROOT, "manifest.txt"), "w") as file:
        file.write("\n".join(MANIFEST) + "\n")
    print(f"{len(MANIFEST)} files in {os.path.normpath(ROOT)}")


if __name__ == "__main__":
    main()
