#!/usr/bin/env python3
"""Writes Tests/TFLiteRuntimeTests/X86EncodingTable.swift.

Each entry pairs one instruction in NASM syntax with the call of the Swift encoder
(`X86Assembler` in Sources/TFLiteLinearAlgebra/GEMM/JIT/) that should produce it, and the
bytes NASM assembles it to. The test compares the encoder's bytes with NASM's, so the
generated kernels are checked against a real assembler, also for instruction forms
(AVX-512, high registers) the test machine may not be able to run. NASM runs only
here, never at test time.

The AVX-VNNI `{vex} vpdpbusd` rows come from GNU as (binutils 2.36 or later), as NASM 2.16 does
not encode them. Run from the repository root with NASM 2.15 or later and binutils on the PATH:
    python3 Scripts/make_x86_encoding_table.py
"""

import pathlib
import subprocess
import tempfile

OUTPUT = (pathlib.Path(__file__).resolve().parent.parent
          / "Tests/TFLiteRuntimeTests/X86EncodingTable.swift")

GPRS = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"]
# 32-bit names for the mov32 forms.
GPRS32 = ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
          "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"]


def memory(base, displacement=0, index=None, scale=1):
    """A (nasm text, swift expression) pair for [base + index*scale + displacement]."""
    text = base
    swift = f"MemoryOperand(.{base}"
    if index is not None:
        text += f" + {index}*{scale}"
        swift += f", index: .{index}, scale: {scale}"
    if displacement:
        text += f" {'+' if displacement > 0 else '-'} {abs(displacement)}"
    swift += f", {displacement})" if displacement else ")"
    return f"[{text}]", swift


# Memory operands that cover every ModRM/SIB path: rsp/r12 need a SIB byte, rbp/r13 need a
# displacement even when it is zero, high registers need REX/VEX/EVEX bits, and displacements
# span zero, disp8, EVEX's disp8*N compression and disp32.
MEMORIES = [
    memory("rax"), memory("rdi", 8), memory("rsp"), memory("r12", 4), memory("rbp"),
    memory("r13"), memory("r15", -128), memory("rsi", 128), memory("rdx", 64),
    memory("rcx", 4096), memory("r9", -64), memory("rax", 0, "r8", 4),
    memory("r11", 12, "r9", 2), memory("rbx", -4, "rcx", 8), memory("r13", 0, "r14", 1),
    memory("rsp", 256, "rax", 1), memory("r10", 192, "r15", 2), memory("rdi", 1024, "rdx", 1),
]


# `PackedFloatOperation`: encoded through `packedYMM`/`packedZMM`.
FLOAT_OPERATIONS = {"vaddps", "vsubps", "vmulps", "vdivps", "vmaxps", "vminps", "vfmadd213ps", "vfnmadd213ps",
                    "vfnmadd231ps"}

# Register operands of the three-register forms, with the destination each row derives from its
# index: between them every register-number bit of VEX (ymm0-15) and EVEX (zmm0-31) is set and clear.
YMM_PAIRS = [(0, 1), (3, 8), (8, 3), (15, 15), (12, 0), (1, 9), (9, 14), (4, 11)]
ZMM_PAIRS = [(0, 1), (3, 8), (16, 3), (31, 31), (12, 24), (17, 9), (9, 30), (20, 11)]


def ymm_triples():
    """Yields (row index, destination, left, right) ymm register numbers."""
    for i, (left, right) in enumerate(YMM_PAIRS):
        yield i, (5 * i + 2) % 16, left, right


def zmm_triples():
    """Yields (row index, destination, left, right) zmm register numbers."""
    for i, (left, right) in enumerate(ZMM_PAIRS):
        yield i, (7 * i + 5) % 32, left, right


def vector_case(nasm_name, call, width, *operands):
    """The (nasm text, swift statement) pair of `nasm_name` on `operands` in `width` ("ymm" or
    "zmm"): register numbers, or memory (nasm text, swift) pairs of a whole vector. The Swift
    statement is `assembler.` + `call` (up to its first argument) + the operands."""
    texts, arguments = [], []
    for operand in operands:
        if isinstance(operand, int):
            texts.append(f"{width}{operand}")
            arguments.append(f"VectorRegister({operand})")
        else:
            texts.append(f"{'yword' if width == 'ymm' else 'zword'} {operand[0]}")
            arguments.append(operand[1])
    return f"{nasm_name} {', '.join(texts)}", f"assembler.{call}{', '.join(arguments)})"


def packed(name, width, *operands):
    """`packedYMM`/`packedZMM(.name, ...)` (NASM spells the zmm forms of vpand and vpor with a d)."""
    nasm_name = {"vpand": "vpandd", "vpor": "vpord"}.get(name, name) if width == "zmm" else name
    return vector_case(nasm_name, f"packed{width.upper()}(.{name}, ", width, *operands)


def named(name, width, *operands):
    """`nameYMM`/`nameZMM(...)`: an instruction with an encoder method of its own."""
    return vector_case(name, f"{name}{width.upper()}(", width, *operands)


def cases():
    """Yields (nasm text, swift statement) pairs; the statement runs on `assembler`."""
    for register in GPRS:
        yield f"push {register}", f"assembler.push(.{register})"
        yield f"pop {register}", f"assembler.pop(.{register})"
        yield f"dec {register}", f"assembler.dec(.{register})"
    yield "ret", "assembler.ret()"
    yield "cpuid", "assembler.cpuid()"
    yield "xgetbv", "assembler.xgetbv()"
    yield "vzeroupper", "assembler.vzeroupper()"
    for i, (mem_text, mem_swift) in enumerate(MEMORIES):
        destination = GPRS[(3 * i + 1) % 16]
        yield f"mov {destination}, qword {mem_text}", f"assembler.mov(.{destination}, {mem_swift})"
        yield f"lea {destination}, {mem_text}", f"assembler.lea(.{destination}, {mem_swift})"
        yield f"add {destination}, qword {mem_text}", f"assembler.add(.{destination}, {mem_swift})"
        number = (5 * i + 2) % 16
        yield (f"mov {GPRS32[number]}, dword {mem_text}",
               f"assembler.mov32(.{GPRS[number]}, {mem_swift})")
        yield (f"mov dword {mem_text}, {GPRS32[number]}",
               f"assembler.mov32({mem_swift}, .{GPRS[number]})")
        ymm = (7 * i + 3) % 16
        yield named("vmovups", "ymm", ymm, (mem_text, mem_swift))
        yield named("vmovups", "ymm", (mem_text, mem_swift), ymm)
        yield (f"vbroadcastss ymm{ymm}, dword {mem_text}",
               f"assembler.vbroadcastssYMM(VectorRegister({ymm}), {mem_swift})")
        yield (f"vpbroadcastd ymm{ymm}, dword {mem_text}",
               f"assembler.vpbroadcastdYMM(VectorRegister({ymm}), {mem_swift})")
        zmm = (11 * i + 5) % 32
        other = (13 * i + 17) % 32
        yield named("vmovups", "zmm", zmm, (mem_text, mem_swift))
        yield named("vmovups", "zmm", (mem_text, mem_swift), zmm)
        yield (f"vbroadcastss zmm{zmm}, dword {mem_text}",
               f"assembler.vbroadcastssZMM(VectorRegister({zmm}), {mem_swift})")
        yield (f"vpbroadcastd zmm{zmm}, dword {mem_text}",
               f"assembler.vpbroadcastdZMM(VectorRegister({zmm}), {mem_swift})")
        yield (f"vfmadd231ps zmm{zmm}, zmm{other}, dword {mem_text}{{1to16}}",
               f"assembler.vfmadd231psZMM(VectorRegister({zmm}), VectorRegister({other}), broadcast: {mem_swift})")
        yield (f"vpmovzxbd ymm{ymm}, qword {mem_text}",
               f"assembler.vpmovzxbdYMM(VectorRegister({ymm}), {mem_swift})")
        yield (f"vpmovzxbd zmm{zmm}, oword {mem_text}",
               f"assembler.vpmovzxbdZMM(VectorRegister({zmm}), {mem_swift})")
    for _, destination, left, right in ymm_triples():
        yield (f"mov {GPRS[destination]}, {GPRS[left]}",
               f"assembler.mov(.{GPRS[destination]}, .{GPRS[left]})")
        yield f"add {GPRS[left]}, {GPRS[right]}", f"assembler.add(.{GPRS[left]}, .{GPRS[right]})"
        yield f"test {GPRS[left]}, {GPRS[right]}", f"assembler.test(.{GPRS[left]}, .{GPRS[right]})"
        for name in ["vfmadd231ps", "vxorps", "vaddps", "vmaxps", "vminps"]:
            form = packed if name in FLOAT_OPERATIONS else named
            yield form(name, "ymm", destination, left, right)
        yield vector_case("{vex} vpdpbusd", "vpdpbusdYMM(", "ymm", destination, left, right)
    for _, destination, left, right in zmm_triples():
        for name in ["vfmadd231ps", "vpxord", "vaddps", "vmaxps", "vminps", "vpdpbusd", "vmulps", "vsubps",
                     "vdivps"]:
            form = packed if name in FLOAT_OPERATIONS else named
            yield form(name, "zmm", destination, left, right)
    for i, (source, count) in enumerate([(0, 1), (3, 23), (16, 31), (31, 0), (12, 8), (25, 30)]):
        destination = (11 * i + 7) % 32
        for name in ["vpslld", "vpsrad"]:
            yield (f"{name} zmm{destination}, zmm{source}, {count}",
                   f"assembler.shiftZMM(.{name}, VectorRegister({destination}), VectorRegister({source}), by: {count})")
    for register, immediate in [("rax", 1), ("rcx", -1), ("rdx", 127), ("r8", -128), ("rax", 128),
                                ("r15", 4096), ("rsi", -129), ("rax", -100000), ("r11", 64)]:
        yield f"add {register}, {immediate}", f"assembler.add(.{register}, {immediate})"
        yield f"sub {register}, {immediate}", f"assembler.sub(.{register}, {immediate})"
        yield f"cmp {register}, {immediate}", f"assembler.cmp(.{register}, {immediate})"
    # The depthwise kernels' word-pair multiply-adds and FMAs from memory.
    for i, (mem_text, mem_swift) in enumerate(MEMORIES):
        ymm, other_ymm = (7 * i + 3) % 16, (5 * i + 1) % 16
        zmm, other_zmm = (11 * i + 5) % 32, (13 * i + 17) % 32
        yield named("vfmadd231ps", "ymm", ymm, other_ymm, (mem_text, mem_swift))
        yield named("vfmadd231ps", "zmm", zmm, other_zmm, (mem_text, mem_swift))
    for _, destination, left, right in zmm_triples():
        yield named("vpdpwssd", "zmm", destination, left, right)

# Jumps need labels: each case is the NASM source and the Swift statements, run in order.
JUMP_CASES = [
    ("back: jnz strict near back",
     "let back = assembler.makeLabel(); assembler.bind(back); assembler.jump(if: .notZero, to: back)"),
    ("jb strict near ahead\nahead:",
     "let ahead = assembler.makeLabel(); assembler.jump(if: .below, to: ahead); assembler.bind(ahead)"),
    ("jz strict near ahead\nret\nret\nahead:",
     "let ahead = assembler.makeLabel(); assembler.jump(if: .zero, to: ahead); assembler.ret(); "
     "assembler.ret(); assembler.bind(ahead)"),
    ("back: ret\njae strict near back",
     "let back = assembler.makeLabel(); assembler.bind(back); assembler.ret(); "
     "assembler.jump(if: .aboveOrEqual, to: back)"),
    ("jmp strict near ahead\nret\nahead:",
     "let ahead = assembler.makeLabel(); assembler.jump(to: ahead); assembler.ret(); assembler.bind(ahead)"),
    ("back: jmp strict near back",
     "let back = assembler.makeLabel(); assembler.bind(back); assembler.jump(to: back)"),
]


# The requantization's instructions (RequantizationEmission.swift): lane-wise integer operations
# with a register or memory source, immediate shifts, and the narrowing and 128-bit forms.
PACKED_OPERATIONS = ["vpaddd", "vpsubd", "vpaddq", "vpand", "vpor", "vpmuldq", "vpsllvd", "vpsllvq",
                     "vpsravd", "vpmaxsd", "vpminsd", "vpackssdw", "vpmaddwd"]


def requantization_cases():
    """Yields (nasm text, swift statement) pairs for the requantization's instruction forms."""
    for i, (mem_text, mem_swift) in enumerate(MEMORIES):
        for j, name in enumerate(PACKED_OPERATIONS):
            if (i + j) % 3:
                continue  # each operation meets every third memory form; together they meet all
            ymm = (7 * i + j) % 16
            left = (3 * i + 5 * j + 1) % 16
            zmm = (11 * i + 3 * j + 5) % 32
            other = (13 * i + 7 * j + 17) % 32
            yield packed(name, "ymm", ymm, left, (mem_text, mem_swift))
            yield packed(name, "zmm", zmm, other, (mem_text, mem_swift))
        xmm = (5 * i + 4) % 16
        zmm = (11 * i + 9) % 32
        yield f"vmovups oword {mem_text}, xmm{xmm}", f"assembler.vmovupsXMM({mem_swift}, VectorRegister({xmm}))"
        yield f"vpmovdb oword {mem_text}, zmm{zmm}", f"assembler.vpmovdbZMM({mem_swift}, VectorRegister({zmm}))"
        other = (13 * i + 6) % 32
        yield (f"vpxord zmm{zmm}, zmm{other}, dword {mem_text}{{1to16}}",
               f"assembler.vpxordZMM(VectorRegister({zmm}), VectorRegister({other}), broadcast: {mem_swift})")
    for _, destination, left, right in ymm_triples():
        for name in PACKED_OPERATIONS:
            yield packed(name, "ymm", destination, left, right)
        for name, count in [("vpsrlq", 32), ("vpsrad", 31), ("vpsrlq", 1), ("vpslld", 16)]:
            yield (f"{name} ymm{destination}, ymm{left}, {count}",
                   f"assembler.shiftYMM(.{name}, VectorRegister({destination}), VectorRegister({left}), by: {count})")
        yield (f"vpermq ymm{destination}, ymm{left}, 0xD8",
               f"assembler.vpermqYMM(VectorRegister({destination}), VectorRegister({left}), 0xD8)")
        yield (f"vextracti128 xmm{destination}, ymm{left}, 1",
               f"assembler.vextracti128(VectorRegister({destination}), VectorRegister({left}), half: 1)")
        yield (f"vpacksswb xmm{destination}, xmm{left}, xmm{right}",
               f"assembler.vpacksswbXMM(VectorRegister({destination}), VectorRegister({left}), VectorRegister({right}))")
        yield (f"vpackuswb xmm{destination}, xmm{left}, xmm{right}",
               f"assembler.vpackuswbXMM(VectorRegister({destination}), VectorRegister({left}), VectorRegister({right}))")
    for _, destination, left, right in zmm_triples():
        for name in PACKED_OPERATIONS:
            yield packed(name, "zmm", destination, left, right)
        for name, count in [("vpsrlq", 32), ("vpsrad", 31), ("vpsrlq", 1), ("vpslld", 16)]:
            yield (f"{name} zmm{destination}, zmm{left}, {count}",
                   f"assembler.shiftZMM(.{name}, VectorRegister({destination}), VectorRegister({left}), by: {count})")


def depthwise_cases():
    """Yields (nasm text, swift statement) pairs for the 8-bit depthwise kernel's block loop: the
    64-bit spill store, the tail mask load and the masked byte store."""
    for i, (mem_text, mem_swift) in enumerate(MEMORIES):
        source = GPRS[(7 * i + 3) % 16]
        mask = i % 7 + 1
        zmm = (5 * i + 3) % 32
        yield f"mov qword {mem_text}, {source}", f"assembler.mov({mem_swift}, .{source})"
        yield f"kmovw k{mask}, word {mem_text}", f"assembler.kmovw(MaskRegister({mask}), {mem_swift})"
        yield (f"vpmovdb oword {mem_text}{{k{mask}}}, zmm{zmm}",
               f"assembler.vpmovdbZMM({mem_swift}, VectorRegister({zmm}), mask: MaskRegister({mask}))")


# The four-tap 8-bit depthwise kernel (QuadTapDepthwiseKernelGenerator.swift): the byte permute
# that turns four pixels' 16 channels into 16 lanes of four taps.
def quad_tap_depthwise_cases():
    """Yields (nasm text, swift statement) pairs for the four-tap depthwise kernel's byte permute."""
    for i, (mem_text, mem_swift) in enumerate(MEMORIES):
        destination, indices = (7 * i + 1) % 32, (11 * i + 30) % 32
        yield (f"vpermb zmm{destination}, zmm{indices}, zword {mem_text}",
               f"assembler.vpermbZMM(VectorRegister({destination}), indices: VectorRegister({indices}), {mem_swift})")


# The float GEMM's partial panels (FloatKernelGenerator.swift): masked loads and stores of C.
def masked_move_cases():
    """Yields (nasm text, swift statement) pairs for the masked float moves of the GEMM's edge tiles."""
    for i, (mem_text, mem_swift) in enumerate(MEMORIES):
        ymm, mask_ymm = (5 * i + 1) % 16, (3 * i + 14) % 16
        zmm, mask = (7 * i + 4) % 32, i % 7 + 1
        yield (f"vmaskmovps ymm{ymm}, ymm{mask_ymm}, yword {mem_text}",
               f"assembler.vmaskmovpsYMM(VectorRegister({ymm}), mask: VectorRegister({mask_ymm}), {mem_swift})")
        yield (f"vmaskmovps yword {mem_text}, ymm{mask_ymm}, ymm{ymm}",
               f"assembler.vmaskmovpsYMM({mem_swift}, mask: VectorRegister({mask_ymm}), VectorRegister({ymm}))")
        yield (f"vmovups zmm{zmm}{{k{mask}}}, zword {mem_text}",
               f"assembler.vmovupsZMM(VectorRegister({zmm}), {mem_swift}, mask: MaskRegister({mask}))")
        yield (f"vmovups zword {mem_text}{{k{mask}}}, zmm{zmm}",
               f"assembler.vmovupsZMM({mem_swift}, VectorRegister({zmm}), mask: MaskRegister({mask}))")


# The float logistic kernels (LogisticKernelGenerator.swift): scaling by 2^n, the sign mask and
# the merge-masked multiply.
def logistic_cases():
    """Yields (nasm text, swift statement) pairs for the logistic kernels' AVX-512 forms."""
    for i, destination, left, right in zmm_triples():
        mask = i % 7 + 1
        yield named("vscalefps", "zmm", destination, left, right)
        yield (f"vptestmd k{mask}, zmm{left}, zmm{right}",
               f"assembler.vptestmdZMM(MaskRegister({mask}), VectorRegister({left}), VectorRegister({right}))")
        yield (f"vmulps zmm{destination}{{k{mask}}}, zmm{left}, zmm{right}",
               f"assembler.packedZMM(.vmulps, VectorRegister({destination}), VectorRegister({left}), "
               f"VectorRegister({right}), mask: MaskRegister({mask}))")
        # The fused reduction, polynomial and Newton step, and the reciprocal estimate.
        for name in ["vfmadd213ps", "vfnmadd213ps", "vfnmadd231ps"]:
            yield packed(name, "zmm", destination, left, right)
            if max(destination, left, right) < 16:
                yield packed(name, "ymm", destination, left, right)
        yield (f"vrcp14ps zmm{destination}, zmm{right}",
               f"assembler.vrcp14psZMM(VectorRegister({destination}), VectorRegister({right}))")


# The quantized elementwise kernels (ElementwiseKernelGenerator.swift): the 32-bit product, signed
# byte widening, and the AVX-512 byte table look-up (VBMI permutes, byte-mask blend).
def elementwise_cases():
    """Yields (nasm text, swift statement) pairs for the elementwise kernels' instruction forms."""
    for i, (mem_text, mem_swift) in enumerate(MEMORIES):
        ymm, left_ymm = (7 * i + 2) % 16, (3 * i + 4) % 16
        zmm, other = (11 * i + 6) % 32, (13 * i + 19) % 32
        yield (f"vpmovsxbd ymm{ymm}, qword {mem_text}",
               f"assembler.vpmovsxbdYMM(VectorRegister({ymm}), {mem_swift})")
        yield (f"vpmovsxbd zmm{zmm}, oword {mem_text}",
               f"assembler.vpmovsxbdZMM(VectorRegister({zmm}), {mem_swift})")
        yield packed("vpmulld", "ymm", ymm, left_ymm, (mem_text, mem_swift))
        yield packed("vpmulld", "zmm", zmm, other, (mem_text, mem_swift))
    for i, destination, left, right in zmm_triples():
        mask = i % 7 + 1
        yield packed("vpmulld", "zmm", destination, left, right)
        if left < 16 and right < 16 and destination < 16:
            yield packed("vpmulld", "ymm", destination, left, right)
        yield named("vpermi2b", "zmm", destination, left, right)
        yield (f"vpblendmb zmm{destination}{{k{mask}}}, zmm{left}, zmm{right}",
               f"assembler.vpblendmbZMM(VectorRegister({destination}), mask: MaskRegister({mask}), VectorRegister({left}), "
               f"VectorRegister({right}))")
        yield f"vpmovb2m k{mask}, zmm{left}", f"assembler.vpmovb2mZMM(MaskRegister({mask}), VectorRegister({left}))"
    # The pair table look-up (gather by vector index, the mask set before each gather).
    for i, (base, displacement) in enumerate([("rsi", 0), ("r13", 64), ("rbp", 0), ("rsp", -12), ("r9", 4096),
                                              ("rax", 0x8080), ("r12", 0), ("rdx", 124)]):
        destination, index, mask = (9 * i + 2) % 32, (5 * i + 4) % 32, i % 7 + 1
        scale = [1, 4, 8, 2][i % 4]
        offset = f" {'+' if displacement > 0 else '-'} {abs(displacement)}" if displacement else ""
        argument = f", {displacement}" if displacement else ""
        yield (f"vpgatherdd zmm{destination}{{k{mask}}}, [{base} + zmm{index}*{scale}{offset}]",
               f"assembler.vpgatherddZMM(VectorRegister({destination}), base: .{base}, index: VectorRegister({index}), "
               f"scale: {scale}{argument}, mask: MaskRegister({mask}))")
        yield (f"kxnorw k{mask}, k{(i + 2) % 7 + 1}, k{(i + 4) % 7 + 1}",
               f"assembler.kxnorw(MaskRegister({mask}), MaskRegister({(i + 2) % 7 + 1}), MaskRegister({(i + 4) % 7 + 1}))")


def wide_rescale_cases():
    """Yields (nasm text, swift statement) pairs for the AVX-512 form of the requantization (64-bit
    arithmetic shifts and differences, merge-masked sums, 64-bit compares into masks, `vpermi2d`)."""
    for i, (mem_text, mem_swift) in enumerate(MEMORIES):
        zmm, other, mask = (11 * i + 7) % 32, (13 * i + 3) % 32, i % 7 + 1
        for name in ["vpsubq", "vpsravq", "vpaddq"]:
            yield packed(name, "zmm", zmm, other, (mem_text, mem_swift))
            yield (f"{name} zmm{zmm}{{k{mask}}}, zmm{other}, zword {mem_text}",
                   f"assembler.packedZMM(.{name}, VectorRegister({zmm}), VectorRegister({other}), {mem_swift}, "
                   f"mask: MaskRegister({mask}))")
        yield (f"vpcmpgtq k{mask}, zmm{other}, zword {mem_text}",
               f"assembler.vpcmpgtqZMM(MaskRegister({mask}), VectorRegister({other}), {mem_swift})")
        for name in ["vpmovsdb", "vpmovusdb"]:
            yield (f"{name} oword {mem_text}, zmm{zmm}",
                   f"assembler.{name}ZMM({mem_swift}, VectorRegister({zmm}))")
    for _, destination, left, right in zmm_triples():
        yield named("vpermi2d", "zmm", destination, left, right)
        for name in ["vpsubq", "vpsravq"]:
            yield packed(name, "zmm", destination, left, right)


# The dynamic-range kernels (HybridKernelGenerator.swift): float/Int32 conversions.
def hybrid_cases():
    """Yields (nasm text, swift statement) pairs for the conversions of the hybrid kernels."""
    for _, destination, left, right in zmm_triples():
        for name in ["vcvttps2dq", "vcvtdq2ps"]:
            yield named(name, "zmm", destination, left)
            if destination < 16 and right < 16:
                yield named(name, "ymm", destination, right)


# The float GEMM kernels' negative slopes (a folded PRELU, FloatKernelGenerator.swift): the
# less-than compare into a vector (AVX2) or a mask (AVX-512) and the AVX2 variable blend.
def negative_slope_cases():
    """Yields (nasm text, swift statement) pairs for the negative-slope epilogue's forms."""
    for i, destination, left, right in zmm_triples():
        mask = i % 7 + 1
        yield (f"vcmpps k{mask}, zmm{left}, zmm{right}, 1",
               f"assembler.vcmppsZMM(MaskRegister({mask}), VectorRegister({left}), VectorRegister({right}), .lessThan)")
    for i, destination, left, right in ymm_triples():
        selector = (3 * i + 7) % 16
        yield (f"vcmpps ymm{destination}, ymm{left}, ymm{right}, 1",
               f"assembler.vcmppsYMM(VectorRegister({destination}), VectorRegister({left}), VectorRegister({right}), "
               f".lessThan)")
        yield (f"vblendvps ymm{destination}, ymm{left}, ymm{right}, ymm{selector}",
               f"assembler.vblendvpsYMM(VectorRegister({destination}), VectorRegister({left}), VectorRegister({right}), "
               f"selector: VectorRegister({selector}))")


def assemble(source):
    """NASM's bytes for `source` (64-bit mode, flat binary); GNU as's for the AVX-VNNI `{vex}`
    forms, which NASM 2.16 cannot encode."""
    if source.startswith("{vex}"):
        return assemble_with_gas(source)
    with tempfile.TemporaryDirectory() as directory:
        path = pathlib.Path(directory)
        (path / "input.asm").write_text("bits 64\n" + source + "\n")
        subprocess.run(["nasm", "-f", "bin", "-o", str(path / "output.bin"), str(path / "input.asm")],
                       check=True)
        return (path / "output.bin").read_bytes()


def assemble_with_gas(source):
    """GNU as's bytes for `source` in Intel syntax (binutils `as` and `objcopy`)."""
    with tempfile.TemporaryDirectory() as directory:
        path = pathlib.Path(directory)
        (path / "input.s").write_text(".intel_syntax noprefix\n" + source + "\n")
        subprocess.run(["as", "--64", "-o", str(path / "input.o"), str(path / "input.s")], check=True)
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.text", str(path / "input.o"),
                        str(path / "output.bin")], check=True)
        return (path / "output.bin").read_bytes()


def swift_bytes(data):
    return "[" + ", ".join(f"0x{b:02X}" for b in data) + "]"


def main():
    version = subprocess.run(["nasm", "-v"], capture_output=True, text=True, check=True).stdout.strip()
    version += " and " + subprocess.run(["as", "--version"], capture_output=True, text=True,
                                        check=True).stdout.splitlines()[0]
    sections = [cases(), JUMP_CASES, requantization_cases(), depthwise_cases(), elementwise_cases(),
                quad_tap_depthwise_cases(), masked_move_cases(), logistic_cases(), wide_rescale_cases(),
                hybrid_cases(), negative_slope_cases()]
    entries = [(text, statement, assemble(text)) for section in sections for text, statement in section]
    lines = [
        "// Generated by Scripts/make_x86_encoding_table.py from " + version + ". Do not edit.",
        "",
        "import TFLiteLinearAlgebra",
        "",
        "/// One instruction: its NASM source, the bytes NASM assembled it to, and the encoder calls",
        "/// that should produce the same bytes.",
        "struct X86EncodingCase: Sendable {",
        "  /// The NASM source line(s).",
        "  let source: String",
        "  /// NASM's bytes.",
        "  let expected: [UInt8]",
        "  /// Encodes the same instruction(s) with `X86Assembler`.",
        "  let encode: @Sendable (inout X86Assembler) -> Void",
        "}",
        "",
        "/// Every instruction form the generated kernels use, as NASM encodes it.",
        "let x86EncodingCases: [X86EncodingCase] = [",
    ]
    for text, statement, data in entries:
        source = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        lines.append(f'  X86EncodingCase(source: "{source}", expected: {swift_bytes(data)}) {{ assembler in')
        lines.append(f"    {statement}")
        lines.append("  },")
    lines.append("]")
    OUTPUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(entries)} cases to {OUTPUT}")


if __name__ == "__main__":
    main()
