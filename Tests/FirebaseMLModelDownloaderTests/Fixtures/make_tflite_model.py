#!/usr/bin/env python3
"""Writes a minimal, valid .tflite file whose size is chosen by the caller.

usage: make_tflite_model.py OUTPUT PAYLOAD_BYTES [SEED]

The model (schema version 3) has one subgraph with one constant UINT8 tensor of shape
[PAYLOAD_BYTES] whose buffer holds PAYLOAD_BYTES pseudo-random bytes (from SEED), and that
tensor as the subgraph's output. It has no operators: it exists to be downloaded and verified,
so the file size is about PAYLOAD_BYTES plus a few hundred bytes. Standard library only; the
FlatBuffer is laid out front to back, every reference pointing forward.
"""

import random
import struct
import sys

UINT8 = 3  # TensorType.UINT8


class Builder:
    """Appends FlatBuffer objects; references are patched once their targets are placed."""

    def __init__(self):
        self.data = bytearray()
        self.patches = []  # (position of a uoffset field, label of its target)
        self.labels = {}

    def align(self, alignment, extra=0):
        while (len(self.data) + extra) % alignment:
            self.data.append(0)

    def place(self, label):
        self.labels[label] = len(self.data)

    def reference(self, label):
        self.patches.append((len(self.data), label))
        self.data += b"\0\0\0\0"

    def table(self, label, fields):
        """fields: list of (kind, value) by field id; kind is 'u32', 'i32', 'u8', 'ref' or None (absent)."""
        sizes = {"u32": 4, "i32": 4, "u8": 1, "ref": 4}
        present = [(field_id, kind, value) for field_id, (kind, value) in enumerate(fields) if kind]
        layout = []  # (offset in table, kind, value)
        slots = [0] * len(fields)
        offset = 4  # after the soffset to the vtable
        for field_id, kind, value in sorted(present, key=lambda field: -sizes[field[1]]):
            layout.append((offset, kind, value))
            slots[field_id] = offset
            offset += sizes[kind]
        inline_size = (offset + 3) // 4 * 4
        self.align(2)
        vtable = len(self.data)
        self.data += struct.pack("<HH", 4 + 2 * len(slots), inline_size)
        for slot in slots:
            self.data += struct.pack("<H", slot)
        self.align(4)
        self.place(label)
        start = len(self.data)
        self.data += struct.pack("<i", start - vtable)
        for position, kind, value in layout:
            while len(self.data) < start + position:
                self.data.append(0)
            if kind == "u32":
                self.data += struct.pack("<I", value)
            elif kind == "i32":
                self.data += struct.pack("<i", value)
            elif kind == "u8":
                self.data += struct.pack("<B", value)
            else:
                self.reference(value)
        while len(self.data) < start + inline_size:
            self.data.append(0)

    def vector_of_references(self, label, targets):
        self.align(4)
        self.place(label)
        self.data += struct.pack("<I", len(targets))
        for target in targets:
            self.reference(target)

    def vector_of_int32(self, label, values):
        self.align(4)
        self.place(label)
        self.data += struct.pack("<I", len(values))
        for value in values:
            self.data += struct.pack("<i", value)

    def string(self, label, text):
        encoded = text.encode()
        self.align(4)
        self.place(label)
        self.data += struct.pack("<I", len(encoded)) + encoded + b"\0"

    def bytes_vector(self, label, payload, alignment=16):
        self.align(alignment, extra=4)  # the bytes themselves start aligned
        self.place(label)
        self.data += struct.pack("<I", len(payload)) + payload

    def finish(self):
        for position, label in self.patches:
            struct.pack_into("<I", self.data, position, self.labels[label] - position)
        return bytes(self.data)


def model(payload):
    b = Builder()
    b.reference("model")
    b.data += b"TFL3"
    b.table("model", [("u32", 3), ("ref", "operator_codes"), ("ref", "subgraphs"), ("ref", "description"),
                      ("ref", "buffers")])
    b.vector_of_references("operator_codes", [])
    b.vector_of_references("subgraphs", ["subgraph"])
    b.table("subgraph", [("ref", "tensors"), ("ref", "inputs"), ("ref", "outputs"), ("ref", "operators"),
                         ("ref", "subgraph_name")])
    b.vector_of_references("tensors", ["tensor"])
    b.table("tensor", [("ref", "shape"), ("u8", UINT8), ("u32", 1), ("ref", "tensor_name")])
    b.vector_of_int32("shape", [len(payload)])
    b.string("tensor_name", "payload")
    b.vector_of_int32("inputs", [])
    b.vector_of_int32("outputs", [0])
    b.vector_of_references("operators", [])
    b.string("subgraph_name", "main")
    b.string("description", "download test model")
    b.vector_of_references("buffers", ["empty_buffer", "payload_buffer"])
    b.table("empty_buffer", [])
    b.table("payload_buffer", [("ref", "payload_bytes")])
    b.bytes_vector("payload_bytes", payload)
    return b.finish()


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    size = int(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    payload = random.Random(seed).randbytes(size)
    with open(sys.argv[1], "wb") as output:
        output.write(model(payload))


if __name__ == "__main__":
    main()
