#!/usr/bin/env python3
"""Writes TestModels/adoption: models whose outputs declare a type or shape LiteRT does not trust.

LiteRT's kernels set some output types and every output shape while preparing, whatever the file
declares. Models written by hand with `flatc` from JSON often leave an output's `type` out, so it
is FLOAT32 (the schema default), and its `shape` empty. Each case below is such a model, written
from a JSON-like definition with LiteRT's own schema classes; LiteRT (builtin reference kernels)
runs it on seeded inputs and its outputs and output types are saved next to it. A case LiteRT
refuses is a mistake in this list and stops the script. `AdoptionTests` runs every case.

Cases with `"litert": "keeps"` are operators whose declared FLOAT32 output LiteRT keeps (MUL reads
its integer inputs as floats then): the runtime refuses those with a descriptive error, so no
outputs are recorded for them.

Usage: /work/venv/bin/python Scripts/make_adoption_models.py   (writes TestModels/adoption)
"""
import json
import os

import ai_edge_litert
import flatbuffers
import numpy as np
from ai_edge_litert import interpreter as litert
from ai_edge_litert import schema_py_generated as schema

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "TestModels", "adoption")

# Every tensor: type (schema name; absent = FLOAT32 as flatc writes it), shape (absent = []) and
# optional quantization [scale, zero point]. Inputs and outputs name tensors of the list.
U8 = {"type": "UINT8", "shape": [1, 6], "quantization": [0.5, 3]}
I8 = {"type": "INT8", "shape": [1, 6], "quantization": [0.25, -2]}
I32 = {"type": "INT32", "shape": [2, 3]}
DECLARED_FLOAT_U8 = {"quantization": [0.5, 3]}
DECLARED_FLOAT_I8 = {"quantization": [0.25, -2]}
DECLARED_FLOAT = {}


def binary(op, operand, output, litert_behaviour="adopts"):
    return {"tensors": [operand, operand, output], "inputs": [0, 1], "outputs": [2],
            "operators": [{"op": op, "inputs": [0, 1], "outputs": [2]}], "litert": litert_behaviour}


def unary(op, operand, output):
    return {"tensors": [operand, output], "inputs": [0], "outputs": [1],
            "operators": [{"op": op, "inputs": [0], "outputs": [1]}], "litert": "adopts"}


CASES = {
    "add_uint8_declared_float": binary("ADD", U8, DECLARED_FLOAT_U8),
    "sub_int8_declared_float": binary("SUB", I8, DECLARED_FLOAT_I8),
    "maximum_uint8_declared_float": binary("MAXIMUM", U8, DECLARED_FLOAT_U8),
    "minimum_int32_declared_float": binary("MINIMUM", I32, DECLARED_FLOAT),
    "div_int32_declared_float": binary("DIV", I32, DECLARED_FLOAT),
    "floor_div_int32_declared_float": binary("FLOOR_DIV", I32, DECLARED_FLOAT),
    "floor_mod_int32_declared_float": binary("FLOOR_MOD", I32, DECLARED_FLOAT),
    "squared_difference_int32_declared_float": binary("SQUARED_DIFFERENCE", I32, DECLARED_FLOAT),
    "pow_int32_declared_float": binary("POW", I32, DECLARED_FLOAT),
    "add_n_int32_declared_float": binary("ADD_N", I32, DECLARED_FLOAT),
    "equal_int32_declared_float": binary("EQUAL", I32, DECLARED_FLOAT),
    "greater_equal_uint8_declared_float": binary("GREATER_EQUAL", U8, DECLARED_FLOAT),
    "neg_int32_declared_float": unary("NEG", I32, DECLARED_FLOAT),
    "zeros_like_int32_declared_float": unary("ZEROS_LIKE", I32, DECLARED_FLOAT),
    "select_v2_int32_declared_float": {
        "tensors": [{"type": "BOOL", "shape": [2, 3]}, I32, I32, DECLARED_FLOAT],
        "inputs": [0, 1, 2], "outputs": [3],
        "operators": [{"op": "SELECT_V2", "inputs": [0, 1, 2], "outputs": [3]}], "litert": "adopts"},
    # The adopted type flows on: ADD's output becomes UINT8, so does MAXIMUM's, which reads it.
    "add_then_maximum_uint8_declared_float": {
        "tensors": [U8, U8, DECLARED_FLOAT_U8, DECLARED_FLOAT_U8], "inputs": [0, 1], "outputs": [3],
        "operators": [{"op": "ADD", "inputs": [0, 1], "outputs": [2]},
                      {"op": "MAXIMUM", "inputs": [2, 0], "outputs": [3]}], "litert": "adopts"},
    "mul_uint8_declared_float": binary("MUL", U8, DECLARED_FLOAT_U8, litert_behaviour="keeps"),
}


def build(case):
    """The model's bytes."""
    model = schema.ModelT()
    model.version = 3
    model.buffers = [schema.BufferT()]
    ops = sorted({operator["op"] for operator in case["operators"]})
    model.operatorCodes = []
    for name in ops:
        code = schema.OperatorCodeT()
        code.builtinCode = getattr(schema.BuiltinOperator, name)
        code.deprecatedBuiltinCode = min(code.builtinCode, 127)
        code.version = 1
        model.operatorCodes.append(code)
    graph = schema.SubGraphT()
    graph.tensors = []
    for index, definition in enumerate(case["tensors"]):
        tensor = schema.TensorT()
        tensor.name = f"t{index}"
        tensor.type = getattr(schema.TensorType, definition.get("type", "FLOAT32"))
        tensor.shape = definition.get("shape", [])
        tensor.buffer = 0
        if "quantization" in definition:
            parameters = schema.QuantizationParametersT()
            parameters.scale = [definition["quantization"][0]]
            parameters.zeroPoint = [definition["quantization"][1]]
            tensor.quantization = parameters
        graph.tensors.append(tensor)
    graph.inputs = case["inputs"]
    graph.outputs = case["outputs"]
    graph.operators = []
    for definition in case["operators"]:
        operator = schema.OperatorT()
        operator.opcodeIndex = ops.index(definition["op"])
        operator.inputs = definition["inputs"]
        operator.outputs = definition["outputs"]
        graph.operators.append(operator)
    model.subgraphs = [graph]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def seeded_input(detail, generator):
    """Values 1...4 (never a zero divisor or a negative exponent), or booleans."""
    if detail["dtype"] == np.bool_:
        return generator.integers(0, 2, size=detail["shape"]).astype(np.bool_)
    return generator.integers(1, 5, size=detail["shape"]).astype(detail["dtype"])


def main():
    os.makedirs(ROOT, exist_ok=True)
    generator = np.random.default_rng(1234)
    entries = []
    for name, case in CASES.items():
        data = build(case)
        with open(os.path.join(ROOT, f"{name}.tflite"), "wb") as handle:
            handle.write(data)
        entry = {"name": name, "file": f"adoption/{name}.tflite", "litert": case["litert"],
                 "inputs": [], "outputs": []}
        interpreter = litert.Interpreter(
            model_content=data, experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
        interpreter.allocate_tensors()
        for position, detail in enumerate(interpreter.get_input_details()):
            values = seeded_input(detail, generator)
            interpreter.set_tensor(detail["index"], values)
            file = f"adoption/{name}.input_{position}.npy"
            np.save(os.path.join(ROOT, "..", file), values, allow_pickle=False)
            entry["inputs"].append(file)
        interpreter.invoke()
        for position, detail in enumerate(interpreter.get_output_details()):
            if case["litert"] == "keeps":
                assert detail["dtype"] == np.float32, name
                continue
            values = interpreter.get_tensor(detail["index"])
            file = f"adoption/{name}.output_{position}.npy"
            np.save(os.path.join(ROOT, "..", file), np.ascontiguousarray(values), allow_pickle=False)
            entry["outputs"].append({"file": file, "type": np.dtype(detail["dtype"]).name,
                                     "shape": [int(d) for d in detail["shape"]]})
        entries.append(entry)
    with open(os.path.join(ROOT, "manifest.json"), "w") as handle:
        json.dump({"generator": {"ai_edge_litert": ai_edge_litert.__version__},
                   "cases": entries}, handle, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()
