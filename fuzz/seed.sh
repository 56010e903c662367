#!/bin/sh
# Seeds the fuzz corpora with real traces: the bundled ones in ../testdata (with profile.spt,
# which app.spd profiles, and lbr.spt from ../testdata/pe), the regression
# inputs in ../tests/regressions and, when given, every *.spt in VECTORS_DIR (for example
# the shared conformance vectors); the SPD reader's with SPD files, the PDB reader's with
# PDBs, and the image target's with lbr.exe and lbr.spt.
#
#   fuzz/seed.sh [VECTORS_DIR]
#
# `dump` gets each file as it is. `decode` gets each file as it is too (a control byte of
# 0x3A, the signature's first byte, then the rest as a stream), and also the file's event
# stream on its own behind a control byte that says "size known, ProgramIdsUsed as in the
# header" (see fuzz_targets/decode.rs). The corpora are not committed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
vectors=${1:-}
mkdir -p "$here/corpus/dump" "$here/corpus/decode"

# The little-endian unsigned integer of $3 bytes at offset $2 of file $1 (od reads in the
# host's byte order, so assemble the bytes by hand).
le() {
    od -An -v -t u1 -j "$2" -N "$3" "$1" | awk '{ for (i = NF; i >= 1; i--) v = v * 256 + $i } END { print v + 0 }'
}

count=0
for f in "$here"/../testdata/*.spt "$here"/../testdata/pe/profile.spt "$here"/../testdata/pe/lbr.spt "$here"/../tests/regressions/*.spt ${vectors:+"$vectors"/*.spt}; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .spt)
    cp "$f" "$here/corpus/dump/$name.spt"
    cp "$f" "$here/corpus/decode/$name.spt"
    size=$(wc -c < "$f")
    if [ "$size" -ge 32 ]; then
        start=$(( $(le "$f" 20 4) + $(le "$f" 30 2) * 24 ))
        used=$(le "$f" 28 2)
        [ "$used" -gt 63 ] && used=63
        if [ "$start" -lt "$size" ]; then
            control=$(( 0x80 | used ))
            {
                printf "\\$(printf %o "$control")"
                tail -c +"$((start + 1))" "$f"
            } > "$here/corpus/decode/$name.stream"
        fi
    fi
    count=$((count + 1))
done
echo "seeded $count traces into $here/corpus/{dump,decode}"

# The SPD reader's corpus: the synthetic SPDs of ../testdata/pe and, when VECTORS_DIR lies in
# the shared suite, its real SPDs (../spd beside the conformance folder).
mkdir -p "$here/corpus/spd"
spds=0
for f in "$here"/../testdata/pe/*.spd ${vectors:+"$vectors"/../../spd/*.spd}; do
    [ -f "$f" ] || continue
    cp "$f" "$here/corpus/spd/$(basename "$f")"
    spds=$((spds + 1))
done
echo "seeded $spds SPDs into $here/corpus/spd"

# The PDB reader's: the fixtures' PDBs (inline.pdb has line and inlinee records).
mkdir -p "$here/corpus/pdb"
pdbs=0
for f in "$here"/../testdata/pe/*.pdb "$here"/../testdata/pe/*/*.pdb; do
    [ -f "$f" ] || continue
    cp "$f" "$here/corpus/pdb/$(echo "$f" | sed 's|.*/testdata/pe/||; s|/|-|g')"
    pdbs=$((pdbs + 1))
done
echo "seeded $pdbs PDBs into $here/corpus/pdb"

# The image target's: its first byte chooses what the rest is (fuzz_targets/image.rs): 0, the
# image of lbr.spt; 1, an LBR trace read with lbr.exe.
mkdir -p "$here/corpus/image"
{ printf '\000'; cat "$here/../testdata/pe/lbr.exe"; } > "$here/corpus/image/lbr.exe"
{ printf '\001'; cat "$here/../testdata/pe/lbr.spt"; } > "$here/corpus/image/lbr.spt"
echo "seeded an image and an LBR trace into $here/corpus/image"

# The ETL reader's: the public ETL files of the shared suite (../etl beside the conformance
# folder), the large one cut to its first buffers (a seed of a few hundred KB, not 5 MB).
mkdir -p "$here/corpus/etl"
etls=0
for f in ${vectors:+"$vectors"/../../etl/*.etl}; do
    [ -f "$f" ] || continue
    head -c 262144 "$f" > "$here/corpus/etl/$(basename "$f")"
    # The whole driver reads an ETL where it reads a trace: its target gets them too, cut
    # shorter (every option set runs on each input).
    head -c 65536 "$f" > "$here/corpus/dump/$(basename "$f")"
    etls=$((etls + 1))
done
echo "seeded $etls ETLs into $here/corpus/{etl,dump}"
