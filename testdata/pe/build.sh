#!/usr/bin/env bash
# Regenerates the PE and PDB fixtures in this folder and the tool dumps the tests compare
# against. Needs Debian's clang-16, lld-16 and llvm-16 (apt-get install clang-16 lld-16
# llvm-16), gcab and python3; the tests themselves need none of them.
#
# Everything is freestanding x86-64 Windows code, built without a C runtime:
#
#   app.exe, app.pdb      a console program (entry point main_entry) with five C functions
#                         of different sizes, one of them static, and one assembly function
#                         at the end of .text that has only a public symbol (app.c)
#   core.dll, core.pdb    a DLL without an entry point exporting three C functions and one
#                         assembly function, the first in .text (core.c)
#   v2/core.dll, v2/core.pdb
#                         the same DLL rebuilt with CORE_V2 defined, which changes the code
#                         of core_scale and core_version. Same file names, same age (lld
#                         writes age 1 and has no option for it), but a different GUID: lld derives the PDB
#                         GUID from a hash of the PDB's contents. Stands for "a newer build
#                         of the binary the trace was recorded with".
#   age2/core.dll         core.dll with the age of its CodeView (RSDS) record set to 2 and
#                         nothing else changed: the GUID of core.pdb with another age, as
#                         after an incremental relink by MSVC's linker; the byte is
#                         patched.
#   infoage2/core.pdb     core.pdb with the age in its PDB information stream set to 2 and
#                         nothing else changed (the DBI stream's age stays 1), as after a
#                         tool that rewrites the PDB, such as pdbstr when indexing sources;
#                         it still matches core.dll
#   nodebug.exe           app.c linked without /DEBUG: a PE image whose debug directory
#                         holds no CodeView record, only the REPRO entry /Brepro adds
#   nodebugdir.exe        app.c linked without /DEBUG and without /Brepro (/timestamp:0
#                         instead, to stay reproducible): a PE image with no debug
#                         directory at all
#   inline.exe, inline.pdb
#                         a console program built with -O2 whose helpers are inlined two
#                         deep, and one of them calls out of line, and one of them is
#                         inlined into a second function, called by nothing (inline.c):
#                         the fixture of source lines and inline frames
#   members.exe, members.pdb
#                         a C++ program built with -O2 whose inlined functions are in
#                         namespaces and members of a struct and a union (members.cpp),
#                         and whose entry point is in a second module (members-entry.cpp):
#                         the fixture of C++ names of inlined functions
#   imports.exe           a console program that calls core.dll's exports through its
#                         import table (imports.c): the image of spddump /cg /image
#   lbr.exe, lbr.pdb      a console program built with -O2 with loops, branches biased one
#                         way, calls, tail calls and inlined code, and no indirect branch
#                         (lbr.c): the image of lbr.spt, whose LBR records lbr.run.txt holds
#                         as they were taken while it ran (scripts/record-lbr.py, under the
#                         unicorn CPU emulator: record them again after a rebuild), and the
#                         image the test kit's random walk goes over to make LBR traces whose
#                         instruction counts are known
#   lbr32.exe, lbr32.pdb  lbr.c built the same way for 32-bit x86 (i686, PE32): the image
#                         the tests of x86 code read, walked as lbr.exe is
#   shapes.exe, shapes.pdb
#                         written in assembly, with its debug records by hand (shapes.s):
#                         line 0 records inside a procedure, inline ranges at line 0 and
#                         past their procedure's end, a procedure nested in another, one
#                         without line records of its own, a scope that is an empty string
#
# Builds are reproducible: /Brepro replaces the PE timestamp with a hash of the image,
# the PDB GUID is a hash of the PDB, and no path of the build machine is recorded
# (-ffile-compilation-dir, /pdbsourcepath, /pdbaltpath). Running this script again
# yields the same bytes.
set -euo pipefail
cd "$(dirname "$0")"

CC=clang-16
CXX=clang++-16
LINK=lld-link-16
READOBJ=llvm-readobj-16
PDBUTIL=llvm-pdbutil-16
SYMBOLIZER=llvm-symbolizer-16
OBJDUMP=llvm-objdump-16

CFLAGS=(
    --target=x86_64-pc-windows-msvc
    -O1 -g -gcodeview
    -ffreestanding -fno-builtin -nostdlib
    -fno-stack-protector -mno-stack-arg-probe
    -ffile-compilation-dir=. -fno-ident
)
LDFLAGS=(/nologo /nodefaultlib /machine:x64 /Brepro /pdbsourcepath:C:\\src)

# Objects go to a scratch folder beside the sources, removed at the end. It has a fixed
# relative name because the PDBs record each object's path (made absolute with
# /pdbsourcepath), and the sources' paths are relative to the compilation directory ".".
work=obj
rm -rf "$work"
mkdir "$work"
trap 'rm -rf "$work"' EXIT

$CC "${CFLAGS[@]}" -c app.c -o "$work/app.obj"
$CC "${CFLAGS[@]}" -c core.c -o "$work/core.obj"
$CC "${CFLAGS[@]}" -DCORE_V2 -c core.c -o "$work/core-v2.obj"
# The same flags but -O2 (the last -O wins).
$CC "${CFLAGS[@]}" -O2 -c inline.c -o "$work/inline.obj"
$CC "${CFLAGS[@]}" -O2 -c lbr.c -o "$work/lbr.obj"
# The same flags for 32-bit x86 (the last --target wins).
$CC "${CFLAGS[@]}" --target=i686-pc-windows-msvc -O2 -c lbr.c -o "$work/lbr32.obj"
for name in members members-entry; do
    $CXX "${CFLAGS[@]}" -O2 -fno-exceptions -fno-rtti -c $name.cpp -o "$work/$name.obj"
done
# shapes.s carries its own debug records: it is assembled as it is, with no -g.
$CC --target=x86_64-pc-windows-msvc -c shapes.s -o "$work/shapes.obj"

$LINK "${LDFLAGS[@]}" /subsystem:console /entry:main_entry /debug \
    /pdb:app.pdb /pdbaltpath:%_PDB% /out:app.exe "$work/app.obj"
# The import library a DLL link writes is of no use here: send it to the scratch folder.
$LINK "${LDFLAGS[@]}" /dll /noentry /debug \
    /pdb:core.pdb /pdbaltpath:%_PDB% /implib:"$work/core.lib" /out:core.dll "$work/core.obj"
mkdir -p v2 age2
$LINK "${LDFLAGS[@]}" /dll /noentry /debug \
    /pdb:v2/core.pdb /pdbaltpath:%_PDB% /implib:"$work/core-v2.lib" /out:v2/core.dll \
    "$work/core-v2.obj"
# imports.exe calls core.dll's exports through its import table, linked with the import
# library the core.dll link wrote.
$CC "${CFLAGS[@]}" -c imports.c -o "$work/imports.obj"
$LINK "${LDFLAGS[@]}" /subsystem:console /entry:main_entry /out:imports.exe \
    "$work/imports.obj" "$work/core.lib"
$LINK "${LDFLAGS[@]}" /subsystem:console /entry:main_entry /out:nodebug.exe "$work/app.obj"
$LINK /nologo /nodefaultlib /machine:x64 /timestamp:0 /subsystem:console /entry:main_entry \
    /out:nodebugdir.exe "$work/app.obj"
$LINK "${LDFLAGS[@]}" /subsystem:console /entry:main_entry /debug \
    /pdb:inline.pdb /pdbaltpath:%_PDB% /out:inline.exe "$work/inline.obj"
$LINK "${LDFLAGS[@]}" /subsystem:console /entry:main_entry /debug \
    /pdb:lbr.pdb /pdbaltpath:%_PDB% /out:lbr.exe "$work/lbr.obj"
$LINK /nologo /nodefaultlib /machine:x86 /Brepro /pdbsourcepath:C:\\src \
    /subsystem:console /entry:main_entry /debug \
    /pdb:lbr32.pdb /pdbaltpath:%_PDB% /out:lbr32.exe "$work/lbr32.obj"
$LINK "${LDFLAGS[@]}" /subsystem:console /entry:main_entry /debug \
    /pdb:members.pdb /pdbaltpath:%_PDB% /out:members.exe "$work/members.obj" \
    "$work/members-entry.obj"
$LINK "${LDFLAGS[@]}" /subsystem:console /entry:main_entry /debug \
    /pdb:shapes.pdb /pdbaltpath:%_PDB% /out:shapes.exe "$work/shapes.obj"

# age2/core.dll: find the one RSDS record of core.dll and set its age (the u32 after the
# "RSDS" signature and the 16-byte GUID) to 2.
python3 - <<'PY'
data = bytearray(open("core.dll", "rb").read())
at = data.find(b"RSDS")
assert at > 0 and data.find(b"RSDS", at + 1) < 0, "expected exactly one RSDS record"
assert data[at + 20:at + 24] == (1).to_bytes(4, "little"), "expected age 1"
data[at + 20:at + 24] = (2).to_bytes(4, "little")
open("age2/core.dll", "wb").write(data)
PY

# infoage2/core.pdb: find the PDB information stream (stream 1) through the MSF superblock
# and the stream directory, and set its age (the u32 after the version and the signature)
# to 2.
mkdir -p infoage2
python3 - <<'PY'
import struct
data = bytearray(open("core.pdb", "rb").read())
assert data.startswith(b"Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0")
block_size, _, _, directory_bytes, _, block_map = struct.unpack_from("<6I", data, 32)
blocks = -(-directory_bytes // block_size)
directory = b"".join(
    data[b * block_size:(b + 1) * block_size]
    for b in struct.unpack_from(f"<{blocks}I", data, block_map * block_size)
)
streams = struct.unpack_from("<I", directory)[0]
sizes = struct.unpack_from(f"<{streams}I", directory, 4)
# The block lists follow the sizes, stream after stream; stream 1's comes after stream 0's.
stream1 = 4 + 4 * streams + 4 * -(-sizes[0] // block_size)
at = struct.unpack_from("<I", directory, stream1)[0] * block_size + 8
assert struct.unpack_from("<I", data, at)[0] == 1, "expected age 1"
struct.pack_into("<I", data, at, 2)
open("infoage2/core.pdb", "wb").write(data)
PY

# Tool dumps the tests cross-check against, so that they need none of the tools. Each
# command's output follows a line "# COMMAND". For an image: its CodeView record (GUID as
# raw bytes, age, PDB path). For a PDB: both of its ages (the PDB stream's and the DBI
# stream's) and GUID, then its procedure and public symbols and its section headers.
run() { echo "# $*"; "$@"; }
for image in app.exe core.dll v2/core.dll age2/core.dll nodebug.exe nodebugdir.exe inline.exe \
    members.exe lbr.exe lbr32.exe; do
    run $READOBJ --coff-debug-directory "$image" > "${image%.*}.readobj.txt"
done
for pdb in app.pdb core.pdb v2/core.pdb infoage2/core.pdb inline.pdb members.pdb lbr.pdb lbr32.pdb; do
    {
        run $PDBUTIL pdb2yaml --pdb-stream --dbi-stream "$pdb"
        run $PDBUTIL dump --summary --symbols --publics --section-headers "$pdb"
    } > "${pdb%.pdb}.pdbutil.txt"
done

# What llvm-objdump disassembles of each image's code (Intel syntax, no bytes): the calls and
# jumps the /callgraph tests build LBR pairs from, an oracle independent of our decoder.
for image in inline.exe app.exe lbr.exe lbr32.exe; do
    run $OBJDUMP -d -M intel --no-show-raw-insn "$image" > "${image%.*}.objdump.txt"
done

# What llvm-symbolizer reads at every byte of each image's .text: each address's inline
# chain, innermost first, with file and line, one JSON array per address.
for image in inline.exe members.exe app.exe core.dll; do
    text() { $READOBJ --sections "$image" | awk -v key="$1:" '/Name: .text/ {t = 1} t && $1 == key {print $2; exit}'; }
    python3 -c "print('\\n'.join(hex(a) for a in range($(text VirtualAddress), $(text VirtualAddress) + $(text VirtualSize))))" |
        $SYMBOLIZER --obj="$image" --inlines --relative-address --output-style=JSON \
        > "${image%.*}.symbolizer.txt"
done

# app.pdb as a symbol store keeps it compressed (NAME.pd_, a cabinet, MSZIP), made by gcab
# (Debian's gcab), a writer independent of the reader /symbols expands it with.
gcab -c -z app.pd_ app.pdb
