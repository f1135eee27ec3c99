#!/usr/bin/env python3
"""Writes the PNG corpus of the TFLiteImage tests with the pixels Pillow decodes from it.

    /work/venv/bin/python Scripts/make_image_fixtures.py   (or any Python with Pillow and NumPy)

Output, in TestModels/images/png/:
  NAME.png       a PNG file: written here byte by byte (every colour type and bit depth, tRNS,
                 Adam7, every filter type, stored / fixed / dynamic DEFLATE blocks, IDAT split into
                 several chunks) or saved by Pillow itself (including a downscaled real photo,
                 scikit-learn's china.jpg).
  NAME.npy       uint8 [H, W, C]: the 8-bit pixels the decoder must produce, taken from Pillow
                 (`Image.open(...).convert(...)` to L, LA, RGB or RGBA as the file's channels and
                 transparency say). For the cases Pillow has no 8-bit form of (16-bit gray, whose
                 Pillow mode is I;16, and any tRNS alpha), the value is derived from the samples
                 written and checked against Pillow's own array here where Pillow is right (it
                 compares a 2-, 4- or 16-bit tRNS key with its 8-bit value: see expected()).
  ../ppm/NAME.ppm/.pgm and NAME.npy: the photo saved by Pillow as binary PPM and PGM, with
                 the pixels Pillow reads back.
  ../resize/*    tf.image.resize results (see resize_cases()).
  ../bmp/*       BMP files and the pixels Pillow reads from them (see bmp_cases()).
  ../zip/*       ZIP archives for the ZIP reader (see zip_cases()).
  NAME.16.npy    uint16 [H, W, C], for 16-bit files: every sample as written (checked against
                 Pillow's I;16 array for gray), tRNS alpha 0 or 65535.
The same seed gives the same bytes, so rerunning leaves the files unchanged.
"""
import io
import os
import struct
import zlib

import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "TestModels", "images", "png")
rng = np.random.default_rng(11)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def filter_row(kind, row, prior, bpp):
    out = bytearray(len(row))
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prior[i]
        c = prior[i - bpp] if i >= bpp else 0
        predictor = [0, a, b, (a + b) // 2, paeth(a, b, c)][kind]
        out[i] = (x - predictor) & 0xFF
    return bytes([kind]) + bytes(out)


def pack_row(samples, depth):
    """One row of samples (flattened) at `depth` bits, most significant first."""
    if depth == 16:
        return b"".join(struct.pack(">H", int(v)) for v in samples)
    if depth == 8:
        return bytes(int(v) for v in samples)
    per_byte = 8 // depth
    out = bytearray((len(samples) + per_byte - 1) // per_byte)
    for i, v in enumerate(samples):
        out[i // per_byte] |= int(v) << (8 - depth * (i % per_byte + 1))
    return bytes(out)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(samples, color_type, depth, palette=None, trns=None, interlace=False, compression="dynamic"):
    """A PNG of `samples` ([H, W, C] raw values) with random row filters, split IDAT chunks."""
    height, width, channels = samples.shape
    bpp = max(1, channels * depth // 8)
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    raw = bytearray()
    for x0, y0, dx, dy in passes:
        sub = samples[y0::dy, x0::dx]
        if sub.shape[0] == 0 or sub.shape[1] == 0:
            continue
        prior = bytes(len(pack_row(sub[0].reshape(-1), depth)))
        for row in sub:
            packed = pack_row(row.reshape(-1), depth)
            raw += filter_row(int(rng.integers(0, 5)), packed, prior, bpp)
            prior = packed
    if compression == "stored":
        data = zlib.compress(bytes(raw), 0)
    elif compression == "fixed":
        compressor = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_FIXED)
        data = compressor.compress(bytes(raw)) + compressor.flush()
    else:
        data = zlib.compress(bytes(raw), 9)
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 1 if interlace else 0))
    out += chunk(b"tEXt", b"Comment\x00ancillary chunks are skipped")
    if palette is not None:
        out += chunk(b"PLTE", bytes(palette.reshape(-1).astype(np.uint8)))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    pieces = [data[i:i + 97] for i in range(0, len(data), 97)] or [b""]
    for piece in pieces:
        out += chunk(b"IDAT", piece)
    return out + chunk(b"IEND", b"")


def save(name, png, expected8, expected16=None):
    with open(os.path.join(OUT, name + ".png"), "wb") as f:
        f.write(png)
    if expected8.ndim == 2:
        expected8 = expected8[..., None]
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(expected8.astype(np.uint8)))
    if expected16 is not None:
        np.save(os.path.join(OUT, name + ".16.npy"), np.ascontiguousarray(expected16.astype(np.uint16)))


def pillow_pixels(png, mode):
    return np.asarray(Image.open(io.BytesIO(png)).convert(mode))


def generated_cases():
    sizes = [(13, 7), (1, 1), (37, 29), (8, 9), (3, 17)]
    n = 0
    for interlace in (False, True):
        for color_type, depths in [(0, [1, 2, 4, 8, 16]), (2, [8, 16]), (3, [1, 2, 4, 8]), (4, [8, 16]), (6, [8, 16])]:
            for depth in depths:
                for with_trns in ((False, True) if color_type in (0, 2, 3) else (False,)):
                    width, height = sizes[n % len(sizes)]
                    compression = ["dynamic", "fixed", "stored"][n % 3]
                    n += 1
                    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
                    top = (1 << depth) - 1
                    palette = None
                    trns = None
                    if color_type == 3:
                        entries = int(rng.integers(1, top + 2))
                        samples = rng.integers(0, entries, size=(height, width, 1))
                        palette = rng.integers(0, 256, size=(entries, 3))
                        alpha = rng.integers(0, 256, size=int(rng.integers(1, entries + 1))) if with_trns else None
                        trns = bytes(alpha.astype(np.uint8)) if with_trns else None
                    else:
                        samples = rng.integers(0, top + 1, size=(height, width, channels))
                        if with_trns:
                            key = samples[height // 2, width // 2]
                            samples[0, 0] = key  # at least two transparent pixels
                            trns = b"".join(struct.pack(">H", int(v)) for v in key)
                    name = f"ct{color_type}_d{depth}{'_trns' if with_trns else ''}{'_adam7' if interlace else ''}"
                    png = write_png(samples, color_type, depth, palette, trns, interlace, compression)
                    save(name, png, *expected(png, samples, color_type, depth, palette, trns))


def expected(png, samples, color_type, depth, palette, trns):
    """Expected 8-bit (and 16-bit) pixels, from Pillow, cross-checked against the samples written."""
    image = Image.open(io.BytesIO(png))
    if color_type == 3:
        mode = "RGBA" if trns is not None else "RGB"
        pillow = np.asarray(image.convert(mode))
        colours = palette[samples[..., 0]]
        if trns is not None:
            alpha = np.full(len(palette), 255)
            alpha[:len(trns)] = list(trns)
            colours = np.concatenate([colours, alpha[samples[..., 0]][..., None]], axis=-1)
        assert np.array_equal(pillow, colours), "Pillow disagrees with the palette expansion"
        return pillow, None
    top = (1 << depth) - 1
    wide = samples * (65535 // top)
    narrow = samples >> 8 if depth == 16 else samples * (255 // top)
    if trns is not None:
        key = np.array(struct.unpack(">" + "H" * (len(trns) // 2), trns))
        opaque = np.any(samples != key, axis=-1, keepdims=True)
        narrow = np.concatenate([narrow, opaque * 255], axis=-1)
        wide = np.concatenate([wide, opaque * 65535], axis=-1)
    if color_type == 0 and depth == 16:
        assert image.mode in ("I;16", "I;16B", "I"), image.mode
        assert np.array_equal(np.asarray(image).astype(np.int64), samples[..., 0]), "Pillow disagrees with the 16-bit samples"
    else:
        colour_mode = {0: "L", 2: "RGB", 4: "LA", 6: "RGBA"}[color_type]
        pillow = np.asarray(image.convert(colour_mode)).reshape(samples.shape)
        colour_channels = samples.shape[-1]
        assert np.array_equal(pillow, narrow[..., :colour_channels]), "Pillow disagrees with the scaled samples"
        # Pillow applies a 2-, 4- or 16-bit tRNS key to the 8-bit value it made of the sample
        # (a Pillow bug: key 7 at depth 4 makes no pixel transparent, key 119 = 7 * 17 does), so
        # those alpha channels follow the PNG specification, not Pillow.
        if trns is not None and (depth == 8 or (color_type == 0 and depth == 1)):
            with_alpha = np.asarray(image.convert("LA" if color_type == 0 else "RGBA"))
            assert np.array_equal(with_alpha.reshape(narrow.shape), narrow), (image.mode, depth, color_type)
        narrow = np.concatenate([pillow, narrow[..., colour_channels:]], axis=-1)
    return narrow, (wide if depth == 16 else None)


def pillow_cases():
    """Files Pillow writes itself: its zlib levels and filter choices, and a real photo."""
    from sklearn.datasets import load_sample_image
    photo = Image.fromarray(load_sample_image("china.jpg")).resize((160, 107), Image.BILINEAR)
    gradient = Image.fromarray(rng.integers(0, 256, size=(21, 33, 4), dtype=np.uint8), "RGBA")
    for name, image, options in [
        ("pillow_photo_rgb", photo, {"compress_level": 6}),
        ("pillow_photo_gray_level9", photo.convert("L"), {"compress_level": 9}),
        ("pillow_rgba_level1", gradient, {"compress_level": 1}),
        ("pillow_rgba_level0", gradient, {"compress_level": 0}),
        ("pillow_photo_palette", photo.quantize(37), {"optimize": True}),
    ]:
        buffer = io.BytesIO()
        image.save(buffer, "PNG", **options)
        png = buffer.getvalue()
        mode = {"P": "RGB", "L": "L", "RGB": "RGB", "RGBA": "RGBA"}[image.mode]
        save(name, png, pillow_pixels(png, mode))
    for name, image in [("pillow_photo", photo), ("pillow_photo_gray", photo.convert("L"))]:
        buffer = io.BytesIO()
        image.save(buffer, "PPM")
        ppm = os.path.join(OUT, "..", "ppm", name + (".ppm" if image.mode == "RGB" else ".pgm"))
        os.makedirs(os.path.dirname(ppm), exist_ok=True)
        with open(ppm, "wb") as f:
            f.write(buffer.getvalue())
        pixels = np.asarray(Image.open(io.BytesIO(buffer.getvalue())))
        np.save(os.path.splitext(ppm)[0] + ".npy", pixels.reshape(pixels.shape[0], pixels.shape[1], -1))


def bmp_file(width, height, bits, pixel_rows, header_size=40, compression=0, masks=None, palette=None,
             top_down=False):
    """A BMP file byte by byte: `pixel_rows` are the unpadded rows in file order, `masks` the
    (r, g, b[, a]) bit fields, `palette` the (r, g, b) entries."""
    stride = (width * bits + 31) // 32 * 4
    data = b"".join(row + bytes(stride - len(row)) for row in pixel_rows)
    entry = 3 if header_size == 12 else 4
    table = b"".join(bytes((b, g, r) + ((0,) if entry == 4 else ())) for r, g, b in (palette or []))
    if header_size == 12:
        dib = struct.pack("<IHHHH", 12, width, height, 1, bits)
    else:
        dib = struct.pack("<IiiHHIIiiII", header_size, width, -height if top_down else height, 1, bits, compression,
                          len(data), 2835, 2835, len(palette or []), 0)
        extra = struct.pack("<" + "I" * len(masks), *masks) if masks else b""
        if header_size == 40:
            dib += extra
        else:
            dib += (extra + bytes(header_size - 40))[:header_size - 40]
    offset = 14 + len(dib) + len(table)
    return b"BM" + struct.pack("<IHHI", offset + len(data), 0, 0, offset) + dib + table + data


def bmp_cases():
    """bmp/NAME.bmp and NAME.npy (Pillow's pixels, converted to RGB, or RGBA when Pillow reads
    alpha): files Pillow writes (24-bit photo, 8-bit gray and palette, 1-bit, 32-bit from RGBA)
    and files built here (4-bit palette, 16-bit 5-5-5 and 5-6-5 bit fields, 32-bit BGRA in a V5
    header, top-down rows, an OS/2 core header with a 3-byte palette)."""
    from sklearn.datasets import load_sample_image
    rng = np.random.default_rng(12)  # its own stream: the files do not depend on the cases before
    folder = os.path.join(OUT, "..", "bmp")
    os.makedirs(folder, exist_ok=True)
    photo = Image.fromarray(load_sample_image("china.jpg")).resize((160, 107), Image.BILINEAR)
    files = {}
    for name, image in [("pillow_photo", photo), ("pillow_photo_gray", photo.convert("L")),
                        ("pillow_photo_palette", photo.quantize(37)), ("pillow_1bit", photo.crop((0, 0, 37, 21)).convert("1")),
                        ("pillow_rgba", Image.fromarray(rng.integers(0, 256, size=(9, 13, 4), dtype=np.uint8), "RGBA"))]:
        buffer = io.BytesIO()
        image.save(buffer, "BMP")
        files[name] = buffer.getvalue()
    palette16 = [tuple(int(v) for v in rng.integers(0, 256, 3)) for _ in range(16)]
    indices = rng.integers(0, 16, size=(7, 13))
    files["palette_4bit"] = bmp_file(13, 7, 4, [bytes((row[i] << 4) | (row[i + 1] if i + 1 < 13 else 0)
                                                       for i in range(0, 13, 2)) for row in indices], palette=palette16)
    words = rng.integers(0, 1 << 16, size=(5, 11)).astype("<u2")
    files["rgb555"] = bmp_file(11, 5, 16, [(row & 0x7FFF).tobytes() for row in words])
    files["rgb565_bitfields"] = bmp_file(11, 5, 16, [row.tobytes() for row in words], compression=3,
                                         masks=(0xF800, 0x7E0, 0x1F))
    quads = rng.integers(0, 256, size=(6, 9, 4), dtype=np.uint8)
    files["bgra_v5"] = bmp_file(9, 6, 32, [row.tobytes() for row in quads], header_size=124, compression=3,
                                masks=(0xFF0000, 0xFF00, 0xFF, 0xFF000000))
    triples = rng.integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    files["top_down_24bit"] = bmp_file(7, 5, 24, [row.tobytes() for row in triples], top_down=True)
    palette256 = [tuple(int(v) for v in rng.integers(0, 256, 3)) for _ in range(256)]
    files["os2_core_8bit"] = bmp_file(10, 4, 8, [row.tobytes() for row in rng.integers(0, 256, size=(4, 10), dtype=np.uint8)],
                                      header_size=12, palette=palette256)
    for name, data in files.items():
        image = Image.open(io.BytesIO(data))
        pixels = np.asarray(image.convert("RGBA" if image.mode == "RGBA" else "RGB"))
        with open(os.path.join(folder, name + ".bmp"), "wb") as f:
            f.write(data)
        np.save(os.path.join(folder, name + ".npy"), pixels)


def zip_cases():
    """ZIP archives for ZIPArchive: one appended to other bytes (as TFLite metadata appends its
    associated files to a model), one with a `../` name, one whose deflated entry lies about its size."""
    import zipfile
    folder = os.path.join(OUT, "..", "zip")
    os.makedirs(folder, exist_ok=True)

    def archive(entries):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            for name, data, method in entries:
                info = zipfile.ZipInfo(name, date_time=(2026, 11, 26, 0, 0, 0))
                info.compress_type = method
                z.writestr(info, data)
        return buffer.getvalue()

    vocabulary = "".join(f"word{i}\n" for i in range(500)).encode()
    appended = b"TFL3 stands in for a model" + archive(
        [("labels.txt", b"cat\ndog\n", zipfile.ZIP_STORED), ("vocab.txt", vocabulary, zipfile.ZIP_DEFLATED)])
    with open(os.path.join(folder, "appended.bin"), "wb") as f:
        f.write(appended)
    with open(os.path.join(folder, "traversal.zip"), "wb") as f:
        f.write(archive([("../evil.txt", b"x", zipfile.ZIP_STORED)]))
    lying = bytearray(archive([("vocab.txt", vocabulary, zipfile.ZIP_DEFLATED)]))
    for signature, field in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = lying.index(signature) + field
        lying[at:at + 4] = struct.pack("<I", len(vocabulary) + 1)
    with open(os.path.join(folder, "lying_size.zip"), "wb") as f:
        f.write(bytes(lying))


def resize_cases():
    """tf.image.resize of a 40x30 crop (at x 50, y 40) of pillow_photo_rgb to 57x43 and 23x17:
    resize/bilinear_WxH.npy (float32) and resize/nearest_WxH.npy (uint8); with antialias=True
    also to 9x7 and 40x11 (shrinking by up to 4.4, and along one axis only):
    resize/bilinear_antialias_WxH.npy (float32)."""
    import tensorflow as tf
    photo = np.load(os.path.join(OUT, "pillow_photo_rgb.npy"))
    crop = photo[40:70, 50:90]
    folder = os.path.join(OUT, "..", "resize")
    os.makedirs(folder, exist_ok=True)
    for width, height in ((57, 43), (23, 17)):
        for method in ("bilinear", "nearest"):
            resized = tf.image.resize(crop, [height, width], method=method).numpy()
            if method == "nearest":
                resized = resized.astype(np.uint8)
            np.save(os.path.join(folder, f"{method}_{width}x{height}.npy"), resized)
    for width, height in ((57, 43), (23, 17), (9, 7), (40, 11)):
        resized = tf.image.resize(crop, [height, width], method="bilinear", antialias=True).numpy()
        np.save(os.path.join(folder, f"bilinear_antialias_{width}x{height}.npy"), resized)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    generated_cases()
    pillow_cases()
    zip_cases()
    resize_cases()
    bmp_cases()
    print("wrote", len(os.listdir(OUT)), "files to", os.path.normpath(OUT))
