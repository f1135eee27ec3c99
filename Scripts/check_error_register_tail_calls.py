#!/usr/bin/env python3
"""Lists the functions of an x86-64 release build that jump to memmove, memcpy or memset as a tail
call after writing r12 without saving it: in a throwing Swift function r12 is the error register,
and Swift 6.3's LLVM can leave it holding a pointer on such a tail call, so the caller takes the
success for a thrown error and crashes (swiftlang/swift#90477; see
Sources/TFLiteRuntime/Core/ThrowingCodeCopies.swift for the workaround). A function that saves r12
(push) is an ordinary function using a callee-saved register and is not listed.

  swift build -c release --product tflite
  python3 Scripts/check_error_register_tail_calls.py .build/release/tflite [MORE BINARIES...]

Object files (.o) work too (the jump's target is then read from its relocation), which covers the
library functions a linked executable leaves out, e.g. `.build/release/*.build/*.o`.
Needs objdump (binutils). Prints one line per function and exits 1 when any is found, else 0.
A straight-line reading: a write to r12 anywhere before the jump in the function's code counts,
so a listed function may still be safe (an error path placed before the jump); read its code.
"""

import re
import subprocess
import sys

MEMORY_CALLS = ("memmove", "memcpy", "memset")
FUNCTION_START = re.compile(r"^[0-9a-f]+ <(.*)>:$")
WRITES_R12 = re.compile(r"^(mov|lea|add|sub|xor|and|or|imul|sh[lr]|sar|movz\w*|movs\w*|pop|cmov\w*|inc|dec|neg|not)\w*\s+(?:[^,]*,)?%r12$")
TAIL_JUMP = re.compile(r"^jmp\s+[0-9a-f]+ <([^>@+]*)(?:@plt)?(?:\+0x[0-9a-f]+)?>$")
RELOCATION = re.compile(r"^\s*[0-9a-f]+: R_X86_64_\w+\s+(\w+)")


def functions(disassembly):
  """(name, instructions) for every function of `objdump -d` output."""
  name, instructions = None, []
  for line in disassembly.splitlines():
    start = FUNCTION_START.match(line)
    if start:
      if name:
        yield name, instructions
      name, instructions = start.group(1), []
    elif name and RELOCATION.match(line) and instructions:
      # In an object file the jump's operand is a relocation: name its symbol as the target.
      target = RELOCATION.match(line).group(1)
      if instructions[-1].startswith("jmp"):
        instructions[-1] = f"jmp    0 <{target}>"
    elif name and "\t" in line:
      instructions.append(line.split("\t")[-1].strip())
  if name:
    yield name, instructions


def hazards(binary):
  disassembly = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", binary], check=True,
                               capture_output=True, text=True).stdout
  for name, instructions in functions(disassembly):
    if any(instruction.startswith("push") and instruction.endswith("%r12") for instruction in instructions):
      continue
    written = False
    for instruction in instructions:
      written = written or bool(WRITES_R12.match(instruction))
      jump = TAIL_JUMP.match(instruction)
      if written and jump and jump.group(1) in MEMORY_CALLS:
        yield name, jump.group(1)
        break


def main():
  if len(sys.argv) < 2:
    sys.exit(__doc__)
  found = 0
  for binary in sys.argv[1:]:
    for name, callee in hazards(binary):
      print(f"{binary}: {name} tail-calls {callee} after writing r12")
      found += 1
  print(f"{found} function(s) found", file=sys.stderr)
  sys.exit(1 if found else 0)


if __name__ == "__main__":
  main()
