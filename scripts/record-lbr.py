#!/usr/bin/env python3
"""Records testdata/pe/lbr.run.txt: LBR records of lbr.exe as it runs.

lbr.exe (testdata/pe/lbr.c, built by testdata/pe/build.sh) is freestanding x86-64 code: no
imports, no C runtime, no system call. This script runs it under the unicorn CPU emulator
(pip install unicorn==2.1.1 pefile), as a processor would: its sections mapped at its image
base, a stack, and execution from its entry point (main_entry) until main_entry returns.

Every taken branch (a jump taken, a call, a return) enters a last-branch stack of 16
(from, to) pairs, as a processor's LBR does. A taken branch is one whose next instruction is
not the one after it in memory; each is checked to be a jump, a call or a return by its
opcode, and a conditional jump not taken is no branch. Every 37th taken branch (a fixed
period, counted over the whole recording) the stack is read into one record, newest pair
first, when it holds 16 pairs. The return from main_entry leaves the image: the run ends
there and that return is not recorded. When more records are wanted, the program is run
again from a fresh state (its sections mapped anew, a new stack, an empty last-branch stack),
and the period goes on counting from where it was, so that each run is sampled at other
branches. The recording stops when the last record wanted is taken.

The output is a text file: a header of '#' lines saying how it was recorded, then one record
per line, each pair as FROM>TO in hexadecimal RVAs, newest first, separated by spaces. The
test kit builds testdata/pe/lbr.spt from it; the tests need neither Python nor unicorn.

    python3 scripts/record-lbr.py                 # writes testdata/pe/lbr.run.txt
    python3 scripts/record-lbr.py --records 1000 --out other.txt

lbr.exe reads one input: `table`, eight unsigned values in its read-only data, which
`sum_table` adds up (those above 1000 rotated first, without a branch: the compiler made
the loop vector code) and whose sum steers `classify`. `--table V,V,V,V,V,V,V,V` writes other values there (the table is found by
its bytes as built, and must be there once) before each run, as another machine's input
would be; the header says so. testdata/pe/fleet/ holds runs recorded so: a small fleet.
"""

import argparse
import os
import sys

import pefile
from unicorn import UC_ARCH_X86, UC_HOOK_CODE, UC_MODE_64, UC_PROT_ALL, Uc
from unicorn.x86_const import UC_X86_REG_RIP, UC_X86_REG_RSP

HERE = os.path.dirname(os.path.abspath(__file__))
PE_DIR = os.path.join(HERE, "..", "testdata", "pe")

STACK_TOP = 0x7FF000000000
STACK_SIZE = 0x100000
# The return address main_entry is given: outside the image and never mapped. The emulator
# stops when execution reaches it.
EXITED = 0x7FFE00000000
# lbr.c's `table`, as built into lbr.exe.
TABLE = (3, 1400, 15, 9, 2000, 7, 11, 5000)


def is_branch(code):
    """Whether the instruction whose bytes start `code` can transfer control: jmp, jcc,
    call, ret (near, direct or indirect), loop and jrcxz. Legacy and REX prefixes are
    skipped."""
    i = 0
    while code[i] in (0x66, 0x67, 0xF2, 0xF3, 0x2E, 0x3E) or 0x40 <= code[i] <= 0x4F:
        i += 1
    op = code[i]
    if op in (0xE8, 0xE9, 0xEB, 0xC3, 0xC2) or 0x70 <= op <= 0x7F or 0xE0 <= op <= 0xE3:
        return True
    if op == 0x0F and 0x80 <= code[i + 1] <= 0x8F:
        return True
    if op == 0xFF and (code[i + 1] >> 3) & 7 in (2, 4):
        return True
    return False


class Recorder:
    def __init__(self, image, records, depth, period, table=None):
        self.pe = pefile.PE(image)
        self.table = None
        if table is not None:
            # Where the table lies, by its bytes as built.
            data = self.pe.get_memory_mapped_image()
            built = b"".join(v.to_bytes(4, "little") for v in TABLE)
            at = data.find(built)
            assert at >= 0 and data.find(built, at + 1) < 0, "the table must be in the image once"
            self.table = (at, b"".join(v.to_bytes(4, "little") for v in table))
        self.base = self.pe.OPTIONAL_HEADER.ImageBase
        self.entry = self.base + self.pe.OPTIONAL_HEADER.AddressOfEntryPoint
        self.size = self.pe.OPTIONAL_HEADER.SizeOfImage
        assert not getattr(self.pe, "DIRECTORY_ENTRY_IMPORT", None), "lbr.exe imports nothing"
        self.wanted = records
        self.depth = depth
        self.period = period
        self.records = []
        self.runs = 0
        self.branches = 0

    def fresh(self):
        """An emulator holding the image as the loader maps it, and a stack."""
        uc = Uc(UC_ARCH_X86, UC_MODE_64)
        uc.mem_map(self.base, (self.size + 0xFFF) & ~0xFFF, UC_PROT_ALL)
        uc.mem_write(self.base, self.pe.header)
        for s in self.pe.sections:
            uc.mem_write(self.base + s.VirtualAddress, s.get_data()[: s.Misc_VirtualSize])
        if self.table is not None:
            at, values = self.table
            uc.mem_write(self.base + at, values)
        uc.mem_map(STACK_TOP - STACK_SIZE, STACK_SIZE, UC_PROT_ALL)
        # As the x64 calling convention leaves it at a function's first instruction: the
        # return address just pushed, so RSP is 8 past a 16-byte boundary.
        rsp = STACK_TOP - 0x1000 - 8
        uc.mem_write(rsp, EXITED.to_bytes(8, "little"))
        uc.reg_write(UC_X86_REG_RSP, rsp)
        return uc

    def run(self):
        """Runs main_entry once, to its return or to the last record wanted."""
        uc = self.fresh()
        self.runs += 1
        lbr = []
        last = [None, 0]  # the previous instruction's address and size

        def on_instruction(uc, address, size, _):
            previous, previous_size = last
            if previous is not None and address != previous + previous_size:
                code = uc.mem_read(previous, previous_size)
                assert is_branch(code), f"control left 0x{previous:x} ({code.hex()}), no branch"
                lbr.insert(0, (previous - self.base, address - self.base))
                del lbr[self.depth :]
                self.branches += 1
                if self.branches % self.period == 0 and len(lbr) == self.depth:
                    self.records.append(list(lbr))
                    if len(self.records) == self.wanted:
                        uc.emu_stop()
            last[0], last[1] = address, size

        uc.hook_add(UC_HOOK_CODE, on_instruction)
        uc.emu_start(self.entry, EXITED)
        finished = uc.reg_read(UC_X86_REG_RIP) == EXITED
        assert finished or len(self.records) == self.wanted, "the run stopped early"
        return finished


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default=os.path.join(PE_DIR, "lbr.exe"))
    parser.add_argument("--records", type=int, default=400)
    parser.add_argument("--depth", type=int, default=16)
    parser.add_argument("--period", type=int, default=37)
    parser.add_argument("--out", default=os.path.join(PE_DIR, "lbr.run.txt"))
    parser.add_argument("--table", help="eight unsigned values for lbr.exe's table")
    args = parser.parse_args()
    table = None
    if args.table is not None:
        table = [int(v, 0) for v in args.table.split(",")]
        if len(table) != 8 or not all(0 <= v < 2**32 for v in table):
            parser.error("--table takes eight unsigned 32-bit values")

    r = Recorder(args.image, args.records, args.depth, args.period, table)
    # The program reads no input but its table: every run takes the same branches.
    per_run = set()
    while len(r.records) < args.records:
        before = r.branches
        if r.run():
            per_run.add(r.branches - before)
    assert len(per_run) == 1, f"runs differ in their taken branches: {per_run}"
    (per_run,) = per_run
    # The image's CodeView record ("RSDS", the 16 GUID bytes as the file stores them, the
    # age): the identity the trace is given, checked by the test kit against lbr.exe's.
    (at,) = [d.struct.PointerToRawData for d in r.pe.DIRECTORY_ENTRY_DEBUG if d.struct.Type == 2]
    rsds = r.pe.__data__[at : at + 24]
    assert rsds[:4] == b"RSDS"
    guid, age = rsds[4:20].hex(), int.from_bytes(rsds[20:24], "little")
    lines = [
        "# LBR records of lbr.exe as it runs, recorded by scripts/record-lbr.py under the",
        "# unicorn x86-64 emulator: main_entry run from a fresh state until it returns, again",
        "# and again; every taken branch (a jump taken, a call, a return) pushed onto a",
        f"# last-branch stack of {args.depth} pairs; the stack read every {args.period}th taken branch,",
        "# counted over the whole recording, once it holds all its pairs. The return from",
        "# main_entry leaves the image and is not recorded.",
        f"# image: lbr.exe, CodeView GUID bytes {guid}, age {age}",
        f"# records: {len(r.records)}, pairs: {args.depth}, period: {args.period} taken branches",
        f"# runs: {r.runs} (the last cut short at the last record), taken branches: "
        f"{r.branches}, {per_run} per run",
        "# one record a line, newest pair first: FROM>TO, hexadecimal RVAs",
    ]
    if table is not None:
        lines.insert(-1, f"# input: table = {','.join(map(str, table))} (as built: "
                     f"{','.join(map(str, TABLE))})")
    for record in r.records:
        lines.append(" ".join(f"{a:x}>{b:x}" for a, b in record))
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(
        f"{args.out}: {len(r.records)} records, {r.runs} runs, {r.branches} taken branches",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
