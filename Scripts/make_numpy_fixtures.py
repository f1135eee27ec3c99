#!/usr/bin/env python3
"""Writes Tests/TFLiteFormatTests/Fixtures/NumPyFixtures.swift.

Each fixture is the exact bytes NumPy writes for a small array (`numpy.save`, or
`numpy.lib.format.write_array` for format versions 2.0 and 3.0), together with
the shape and values NumPy holds, so the Swift `.npy` reader and writer can be
checked against NumPy itself. Float values are written as hexadecimal literals so
they are exact. The float16 fixtures also record NumPy's rounding of float32
values to half precision.

Run with any Python that has numpy installed, for example:
    /work/venv-ref/bin/python Scripts/make_numpy_fixtures.py
"""

import io
import pathlib

import numpy as np

OUTPUT = (pathlib.Path(__file__).resolve().parent.parent
          / "Tests/TFLiteFormatTests/Fixtures/NumPyFixtures.swift")

RNG = np.random.default_rng(20240611)


def saved(array, version=None):
    """The bytes of `array` written by NumPy (numpy.save when version is None)."""
    stream = io.BytesIO()
    if version is None:
        np.save(stream, array)
    else:
        np.lib.format.write_array(stream, array, version=version)
    return stream.getvalue()


def swift_literal(value, dtype):
    if dtype.kind == "b":
        return "true" if value else "false"
    if dtype.kind == "f":
        number = float(value)
        if np.isnan(number):
            return ".nan"
        if np.isinf(number):
            return ".infinity" if number > 0 else "-.infinity"
        return number.hex()
    return str(int(value))


def swift_list(items, per_row=8):
    items = list(items)
    if not items:
        return "[]"
    rows = [", ".join(items[start:start + per_row]) for start in range(0, len(items), per_row)]
    return "[\n" + "".join(f"      {row},\n" for row in rows) + "    ]"


SWIFT_TYPES = {
    "float32": "Float", "float64": "Double", "int8": "Int8", "uint8": "UInt8", "int16": "Int16",
    "uint16": "UInt16", "int32": "Int32", "uint32": "UInt32", "int64": "Int64", "uint64": "UInt64",
    "bool": "Bool",
}


def typed_arrays():
    """One array per element type, with the extreme values of integer types."""
    arrays = {
        "float32": np.array([[0.0, -0.0, 1.5, -2.25], [3.4028235e38, 1e-45, np.inf, -np.inf],
                             [0.1, -0.3, 123456.789, 7.0]], dtype=np.float32),
        "float64": np.array([0.1, -1e300, 5e-324, np.pi, -0.0, np.inf], dtype=np.float64),
        "bool": np.array([[True, False, True], [False, False, True]], dtype=np.bool_),
    }
    for name in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]:
        info = np.iinfo(name)
        middle = RNG.integers(info.min, info.max, size=6, dtype=name, endpoint=True)
        edges = np.array([info.min, info.max, 0], dtype=name)
        arrays[name] = np.concatenate([edges, middle, np.ones(1, dtype=name)]).reshape(2, 5)
    return arrays


def float16_sources():
    """float32 values whose rounding to half precision exercises every case."""
    special = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.996, 65520.0, 1e6, -1e6, np.inf, -np.inf,
               2.0**-14, 2.0**-24, 2.0**-25, 2.0**-25 * 1.0000001, 2.0**-26, 3 * 2.0**-25, 5 * 2.0**-25,
               1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 1.0 + 2.0**-11 + 2.0**-20, 2048.0 + 1.0, 2048.0 + 3.0,
               0.1, 0.2, 0.3333333, 6.1e-5, 6.0e-5, 1e-8, 2.0**-15 * 1.5]
    spread = RNG.normal(0.0, 1.0, size=80) * np.exp2(RNG.integers(-26, 17, size=80))
    return np.concatenate([special, spread]).astype(np.float32)


def declarations():
    lines = []
    for name, array in typed_arrays().items():
        swift_type = SWIFT_TYPES[name]
        prefix = name
        lines.append(f"  static let {prefix}File: [UInt8] = {swift_list(map(str, saved(array)), 24)}")
        lines.append(f"  static let {prefix}Shape = {list(array.shape)}")
        values = swift_list(swift_literal(v, array.dtype) for v in array.ravel())
        lines.append(f"  static let {prefix}Values: [{swift_type}] = {values}")

    sources = float16_sources()
    with np.errstate(over="ignore"):  # values above the half range become infinity, as intended
        halves = sources.astype(np.float16)
    lines.append(f"  static let float16SourceValues: [Float] = {swift_list(swift_literal(v, sources.dtype) for v in sources)}")
    lines.append(f"  static let float16Bits: [UInt16] = {swift_list(str(int(v)) for v in halves.view(np.uint16))}")
    widened = halves.astype(np.float32)
    lines.append(f"  static let float16Widened: [Float] = {swift_list(swift_literal(v, widened.dtype) for v in widened)}")
    lines.append(f"  static let float16File: [UInt8] = {swift_list(map(str, saved(halves.reshape(2, -1))), 24)}")
    lines.append(f"  static let float16Shape = {list(halves.reshape(2, -1).shape)}")

    small = np.arange(6, dtype=np.int16).reshape(3, 2)
    lines.append(f"  static let versionSourceValues: [Int16] = {swift_list(map(str, small.ravel()))}")
    lines.append(f"  static let versionSourceShape = {list(small.shape)}")
    for version in (1, 2, 3):
        lines.append(f"  static let version{version}File: [UInt8] = {swift_list(map(str, saved(small, (version, 0))), 24)}")

    lines.append(f"  static let scalarFile: [UInt8] = {swift_list(map(str, saved(np.float32(2.5))), 24)}")
    lines.append(f"  static let emptyFile: [UInt8] = {swift_list(map(str, saved(np.zeros((0, 3), np.int32))), 24)}")
    lines.append(f"  static let bigEndianFile: [UInt8] = {swift_list(map(str, saved(np.arange(3, dtype='>f4'))), 24)}")
    fortran = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    lines.append(f"  static let fortranOrderFile: [UInt8] = {swift_list(map(str, saved(fortran)), 24)}")
    lines.append(f"  static let unicodeFile: [UInt8] = {swift_list(map(str, saved(np.array(['ab'], dtype='<U2'))), 24)}")
    structured = np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")])
    lines.append(f"  static let structuredFile: [UInt8] = {swift_list(map(str, saved(structured)), 24)}")
    return lines


def main():
    body = "\n".join(declarations())
    OUTPUT.write_text(
        "// Generated by Scripts/make_numpy_fixtures.py with numpy " + np.__version__ + ".\n"
        "// Do not edit; rerun the script instead.\n\n"
        "/// `.npy` files written by NumPy, with the shapes and values NumPy held.\n"
        "enum NumPyFixtures {\n" + body + "\n}\n")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
