#!/usr/bin/env bash
# shellcheck disable=SC2054 # commas inside arguments (/binary:a,b) are meant
# Windows check: cross-compiles sptdump for x86_64-pc-windows-gnu, runs the release .exe under
# Wine and checks that it behaves exactly like the Linux build.
#
# usage: scripts/windows-check.sh [--quick] [--archive ZIP]
#        (--quick: compare the outputs on the files of testdata/ and the traces this script
#        makes only, not on the conformance vectors, and leave out the test suite;
#        --archive: check the binaries of a release archive (scripts/release.sh) as a user
#        unpacks them, instead of building sptdump.exe: the same cases, and spddump.exe
#        against the Linux spddump)
#
# Needs (the script installs nothing; on Debian 12):
#   rustup target add x86_64-pc-windows-gnu
#   apt-get install gcc-mingw-w64-x86-64 wine wine64
#   python3, and `script` (util-linux) for the console case
#
# What it does:
#   1. builds the Linux and the Windows release binaries (mingw as the linker of the Windows
#      target only, set here through CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER);
#   2. copies sptdump.exe to target/windows-check/bin/, next to the Wine work-around of
#      scripts/wine-shim/ when the Wine prefix needs it, and makes a Wine prefix under
#      target/windows-check/ (once);
#   3. runs the conformance vectors (../shared/conformance, or $SPTDUMP_SHARED/conformance) against
#      the .exe, through a wrapper that runs it under Wine;
#   4. runs end-to-end cases against the .exe: the option spellings, C:\ and Z:\ paths,
#      paths with spaces and non-ASCII characters, cmd.exe, standard input, several files,
#      exit statuses, the console; each compares the .exe's standard output, standard error
#      and exit status, separately and byte for byte, with the Linux build's on the same
#      arguments;
#   5. compares the two builds on every file of testdata/, the traces this script makes and
#      the conformance vectors, for several option sets;
#   6. builds the test suite for Windows and runs it under Wine (cargo test --target), one
#      case per test binary.
#
# Prints PASS or FAIL per case and a final "N passed, M failed" line; exits 1 on any
# failure. A failure shows the command and the first bytes that differ (od -c).
# Everything it writes stays under target/ (its own files under target/windows-check/).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
START=$SECONDS

QUICK=0
ARCHIVE=""
while [ $# -gt 0 ]; do
    arg=$1
    shift
    case $arg in
        --quick) QUICK=1 ;;
        --archive) ARCHIVE=${1:?--archive needs a .zip}; shift ;;
        --archive=*) ARCHIVE=${arg#--archive=} ;;
        -h | --help) sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "windows-check: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
    esac
done

TARGET=x86_64-pc-windows-gnu
OUT=$ROOT/target/windows-check
BIN=$OUT/bin
WORK=$OUT/work
CASES=$OUT/cases
LINUX_EXE=$ROOT/target/release/sptdump
WIN_EXE=$BIN/sptdump.exe
CONFORMANCE=${SPTDUMP_SHARED:-$ROOT/../shared}/conformance

step() { printf '\n== %s\n' "$*"; }

# ---------------------------------------------------------------------------------------------
step "tools"
missing=()
need() { # need COMMAND WHAT-TO-INSTALL
    command -v "$1" >/dev/null 2>&1 || missing+=("$1: $2")
}
need cargo "a Rust toolchain (rustup)"
need python3 "Debian: apt-get install python3"
need x86_64-w64-mingw32-gcc "Debian: apt-get install gcc-mingw-w64-x86-64"
need wineserver "Debian: apt-get install wine wine64"
need script "Debian: apt-get install util-linux"
# Debian installs the 64-bit loader as /usr/lib/wine/wine64 and /usr/bin/wine as a wrapper
# that prefers a 32-bit Wine; other distributions put wine64 on the PATH.
WINE=$(command -v wine64 || true)
[ -n "$WINE" ] || { [ -x /usr/lib/wine/wine64 ] && WINE=/usr/lib/wine/wine64; }
[ -n "$WINE" ] || WINE=$(command -v wine || true)
[ -n "$WINE" ] || missing+=("wine64: Debian: apt-get install wine wine64")
if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -qx "$TARGET"; then
    missing+=("the $TARGET standard library: rustup target add $TARGET")
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "windows-check: missing tools; install them and run again:" >&2
    printf '  %s\n' "${missing[@]}" >&2
    exit 2
fi
echo "wine: $WINE ($("$WINE" --version 2>/dev/null || echo 'version unknown'))"
echo "mingw: $(x86_64-w64-mingw32-gcc -dumpversion)"

# Wine: quiet, no window, no offer to install Mono or Gecko, its own prefix under target/.
export WINEDEBUG=-all
export WINEPREFIX=$OUT/wine
export WINEARCH=win64
export WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY
# Wine maps Unix file names to Windows ones with the locale's character set.
export LC_ALL=C.UTF-8

# ---------------------------------------------------------------------------------------------
if [ -n "$ARCHIVE" ]; then
    [ -f "$ARCHIVE" ] || { echo "windows-check: no archive $ARCHIVE" >&2; exit 2; }
    ARCHIVE=$(cd "$(dirname "$ARCHIVE")" && pwd)/$(basename "$ARCHIVE")
    step "build (Linux, release); the Windows binaries from $(basename "$ARCHIVE")"
    cargo build --locked --release || exit 1
else
    step "build (Linux and Windows, release)"
    cargo build --locked --release || exit 1
    CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
        cargo build --locked --release --target "$TARGET" || exit 1
fi

step "Wine prefix"
mkdir -p "$OUT"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "creating $WINEPREFIX (once)"
    "$WINE" wineboot -i >"$OUT/wineboot.log" 2>&1 || { cat "$OUT/wineboot.log"; exit 1; }
    wineserver -w
fi
# One Wine server for the whole run, stopped at the end: every run below starts faster.
wineserver -p
trap 'wineserver -k >/dev/null 2>&1' EXIT

rm -rf "$BIN" "$WORK" "$CASES"
mkdir -p "$BIN" "$WORK" "$CASES"
if [ -n "$ARCHIVE" ]; then
    # The archive as a user unpacks it: its binaries run from its folder, unchanged.
    unzip -q "$ARCHIVE" -d "$BIN" || exit 1
    WIN_DIR=$(find "$BIN" -mindepth 1 -maxdepth 1 -type d | head -1)
    for f in sptdump.exe spddump.exe README.md LICENSE LICENSE-APACHE LICENSE-MIT; do
        [ -f "$WIN_DIR/$f" ] || { echo "windows-check: the archive has no $f" >&2; exit 1; }
    done
    WIN_EXE=$WIN_DIR/sptdump.exe
else
    cp "$ROOT/target/$TARGET/release/sptdump.exe" "$WIN_EXE"
fi
# Wine work-around (test-only): Rust's standard library needs ProcessPrng from
# bcryptprimitives.dll, which Wine 8 lacks. See scripts/wine-shim/.
if [ -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ]; then
    echo "this Wine has bcryptprimitives.dll: no shim"
else
    echo "building the Wine work-around bcryptprimitives.dll (scripts/wine-shim/)"
    x86_64-w64-mingw32-gcc -O2 -shared -s -o "$BIN/bcryptprimitives.dll" \
        scripts/wine-shim/bcryptprimitives.c scripts/wine-shim/bcryptprimitives.def \
        -ladvapi32 || exit 1
    # Beside the archive's binaries too: it stands in for the system's DLL, which Windows has.
    [ -z "$ARCHIVE" ] || cp "$BIN/bcryptprimitives.dll" "$(dirname "$WIN_EXE")/"
fi
# The conformance check runs a binary by path: this wrapper runs the .exe under Wine.
cat >"$BIN/sptdump-wine" <<EOF
#!/bin/sh
# Runs the Windows build under Wine (made by scripts/windows-check.sh).
export WINEDEBUG=-all WINEPREFIX='$WINEPREFIX' WINEARCH=win64 WINEDLLOVERRIDES='mscoree,mshtml='
exec '$WINE' '$WIN_EXE' "\$@"
EOF
chmod +x "$BIN/sptdump-wine"
if ! "$BIN/sptdump-wine" /version >"$OUT/first-run.txt" 2>&1 </dev/null; then
    echo "windows-check: sptdump.exe does not start under Wine:" >&2
    cat "$OUT/first-run.txt" >&2
    exit 1
fi
echo "sptdump.exe under Wine: $(cat "$OUT/first-run.txt")"

# ---------------------------------------------------------------------------------------------
# Results.
PASSED=0
FAILED=0
FAILURES=()
N=0
pass() { PASSED=$((PASSED + 1)); printf 'PASS  %s\n' "$1"; }
fail() { FAILED=$((FAILED + 1)); FAILURES+=("$1"); printf 'FAIL  %s\n' "$1"; }

# Shows where two outputs first differ: the cmp line and 48 bytes of each from 16 before.
show_diff() { # show_diff LABEL LINUX-FILE WINDOWS-FILE
    local at
    at=$(cmp "$2" "$3" 2>&1 | head -1)
    printf '      %s differs: %s\n' "$1" "${at#*: }"
    at=$(cmp "$2" "$3" 2>/dev/null | sed -n 's/.*differ: byte \([0-9]*\).*/\1/p')
    [ -n "$at" ] || at=$(( $(wc -c <"$2") < $(wc -c <"$3") ? $(wc -c <"$2") : $(wc -c <"$3") ))
    local from=$(( at > 16 ? at - 17 : 0 ))
    printf '      Linux   (od -c from byte %d):\n' "$from"
    od -An -c -j "$from" -N 48 "$2" | sed 's/^/        /'
    printf '      Windows (od -c from byte %d):\n' "$from"
    od -An -c -j "$from" -N 48 "$3" | sed 's/^/        /'
}

# A command line as one copy-and-paste line.
quoted() { local q=() a; for a in "$@"; do q+=("$(printf '%q' "$a")"); done; echo "${q[*]}"; }

# Inputs of the next comparison; compare resets them.
LIN=()        # Linux arguments
WIN=()        # Windows arguments (default: the Linux ones)
LCWD=$WORK    # where the Linux build runs
WCWD=$WORK    # where the Windows build runs
INPUT=""      # a file for standard input ("" for none)
PIPE=0        # 1: feed INPUT through a pipe (cat FILE |) instead of a redirection
WCMD=""       # a .cmd file to run with Wine's cmd.exe instead of running the .exe directly

run_one() { # run_one linux|windows PREFIX
    local side=$1 prefix=$2 cwd cmd
    if [ "$side" = linux ]; then cwd=$LCWD; cmd=("$LINUX_EXE" "${LIN[@]}")
    elif [ -n "$WCMD" ]; then cwd=$WCWD; cmd=("$WINE" cmd /c "$WCMD")
    else cwd=$WCWD; cmd=("$WINE" "$WIN_EXE" "${WIN[@]}"); fi
    (
        cd "$cwd" || exit 99
        # shellcheck disable=SC2002 # a pipe, not a file, on purpose
        if [ -z "$INPUT" ]; then "${cmd[@]}" </dev/null
        elif [ "$PIPE" = 1 ]; then cat "$INPUT" | "${cmd[@]}"
        else "${cmd[@]}" <"$INPUT"; fi
    ) >"$prefix.out" 2>"$prefix.err"
    echo $? >"$prefix.rc"
}

# compare NAME [EXIT]: runs both builds, compares exit status, stdout and stderr byte for
# byte; EXIT, when given, is the status both must have.
compare() {
    local name=$1 want=${2:-}
    [ ${#WIN[@]} -gt 0 ] || [ -n "$WCMD" ] || WIN=("${LIN[@]}")
    N=$((N + 1))
    local p=$CASES/$N
    run_one linux "$p.linux"
    run_one windows "$p.windows"
    local lrc wrc problems=()
    lrc=$(cat "$p.linux.rc")
    wrc=$(cat "$p.windows.rc")
    [ -z "$want" ] || [ "$lrc" = "$want" ] || problems+=("Linux exit status $lrc, expected $want")
    [ "$lrc" = "$wrc" ] || problems+=("exit status: Linux $lrc, Windows $wrc")
    cmp -s "$p.linux.out" "$p.windows.out" || problems+=("stdout")
    cmp -s "$p.linux.err" "$p.windows.err" || problems+=("stderr")
    if [ ${#problems[@]} -eq 0 ]; then
        pass "$name"
    else
        fail "$name"
        local in=""
        [ -z "$INPUT" ] || { [ "$PIPE" = 1 ] && in="cat $(quoted "$INPUT") | " || in=" < $(quoted "$INPUT")"; }
        if [ "$PIPE" = 1 ]; then
            printf '      Linux:   (cd %s && %ssptdump %s)\n' "$(quoted "$LCWD")" "$in" "$(quoted "${LIN[@]}")"
        else
            printf '      Linux:   (cd %s && sptdump %s%s)\n' "$(quoted "$LCWD")" "$(quoted "${LIN[@]}")" "$in"
        fi
        if [ -n "$WCMD" ]; then
            printf '      Windows: (cd %s && wine cmd /c %s), which runs:\n' "$(quoted "$WCWD")" "$(quoted "$WCMD")"
            tr -d '\r' <"$WCWD/$WCMD" | sed 's/^/        /'
        elif [ "$PIPE" = 1 ]; then
            printf '      Windows: (cd %s && %swine sptdump.exe %s)\n' "$(quoted "$WCWD")" "$in" "$(quoted "${WIN[@]}")"
        else
            printf '      Windows: (cd %s && wine sptdump.exe %s%s)\n' "$(quoted "$WCWD")" "$(quoted "${WIN[@]}")" "$in"
        fi
        local what
        for what in "${problems[@]}"; do
            case $what in
                stdout) show_diff stdout "$p.linux.out" "$p.windows.out" ;;
                stderr) show_diff stderr "$p.linux.err" "$p.windows.err" ;;
                *) printf '      %s\n' "$what" ;;
            esac
        done
    fi
    LIN=(); WIN=(); LCWD=$WORK; WCWD=$WORK; INPUT=""; PIPE=0; WCMD=""
}

# A cmd.exe batch file in WORK, with CRLF line ends; sptdump.exe is on its PATH.
zpath() { local p=${1//\//\\}; printf 'Z:%s' "$p"; }
batch() { # batch NAME LINE...
    local f=$WORK/$1 line
    shift
    {
        printf '@echo off\r\n'
        printf 'set "PATH=%s;%%PATH%%"\r\n' "$(zpath "$(dirname "$WIN_EXE")")"
        for line in "$@"; do printf '%s\r\n' "$line"; done
        printf 'exit /b %%ERRORLEVEL%%\r\n'
    } >"$f"
}

# ---------------------------------------------------------------------------------------------
step "test inputs (target/windows-check/work)"
cp testdata/sample.spt "$WORK/sample.spt"
# A trace whose binary names are not ASCII: one in UTF-8, one not UTF-8 at all (shown with
# U+FFFD), and a trace cut short inside its header (exit status 1).
python3 - "$WORK" <<'EOF' || exit 1
import struct, sys, os
work = sys.argv[1]
names = ["ünïcødé.dll".encode(), b"a\xffp.exe", "Ωmega\\bin\\日本.exe".encode()]
strtab = b""
offsets = []
for n in names:
    offsets.append(len(strtab))
    strtab += n + b"\0"
str_cap, pid_cap = 64, 4
header = struct.pack("<IIIIIIHHHH", 0x5350543A, 1, 0, 0, 0x20, 0x20 + str_cap,
                     len(strtab), str_cap, len(names), pid_cap)
table = strtab.ljust(str_cap, b"\0")
pids = b"".join(bytes(range(16 * i, 16 * i + 16)) + struct.pack("<II", i + 1, off)
                for i, off in enumerate(offsets)).ljust(24 * pid_cap, b"\0")
stream = b""
for i in range(len(names)):
    body = struct.pack("<BBI", 0x02, 1, 0x1000 + i) + struct.pack("<BBII", 0x42, 2, 0x2000, 0x3000 + i)
    stream += struct.pack("<BBHI", 0x81, 0, i, 4 + len(body)) + body
with open(os.path.join(work, "unicode.spt"), "wb") as f:
    f.write(header + table + pids + stream)
with open(os.path.join(work, "sample.spt"), "rb") as f:
    head = f.read(20)
with open(os.path.join(work, "truncated.spt"), "wb") as f:
    f.write(head)
EOF
mkdir -p "$WORK/my traces" "$WORK/a dir" "$WORK/glob" "$WORK/named"
cp testdata/sample.spt "$WORK/my traces/app 1.spt"
cp testdata/sample.spt "$WORK/café.spt"
cp testdata/sample.spt "$WORK/-odd.spt"
cp testdata/sample.spt "$WORK/glob/a.spt"
cp "$WORK/unicode.spt" "$WORK/glob/b.spt"
# C:\ is the Wine prefix's drive_c. To print the same path text, the Linux build reads a file
# that is literally named "C:\My Traces\app 1.spt" (a legal Unix file name) in work/named/;
# the same for Z:\ (which Wine maps to /) and for relative paths written with backslashes.
CDIR="$WINEPREFIX/drive_c/My Traces"
mkdir -p "$CDIR"
cp testdata/sample.spt "$CDIR/app 1.spt"
CPATH='C:\My Traces\app 1.spt'
cp testdata/sample.spt "$WORK/named/$CPATH"
ZPATH=$(zpath "$WORK/sample.spt")
cp testdata/sample.spt "$WORK/named/$ZPATH"
ZSPACES=$(zpath "$WORK/my traces/app 1.spt")
cp testdata/sample.spt "$WORK/named/$ZSPACES"
cp testdata/sample.spt "$WORK/named/my traces\\app 1.spt"
cp testdata/sample.spt "$WORK/named/glob\\a.spt"
cp "$WORK/unicode.spt" "$WORK/named/glob\\b.spt"
if [ -f testdata/pe/trace.spt ]; then
    cp -r testdata/pe "$WORK/pe"
    mkdir -p "$WINEPREFIX/drive_c/My Build"
    for f in app.exe app.pdb core.pdb trace.spt; do
        cp "testdata/pe/$f" "$WINEPREFIX/drive_c/My Build/$f"
        cp "testdata/pe/$f" "$WORK/named/C:\\My Build\\$f"
    done
    cp testdata/pe/app.exe testdata/pe/trace.spt "$WORK/named/"
    cp testdata/pe/v2/core.dll "$WORK/named/v2\\core.dll"
    cp testdata/pe/age2/core.dll "$WORK/named/age2\\core.dll"
fi

# ---------------------------------------------------------------------------------------------
step "conformance vectors against sptdump.exe"
if [ -x "$CONFORMANCE/check" ] || [ -f "$CONFORMANCE/check" ]; then
    if python3 "$CONFORMANCE/check" "$BIN/sptdump-wine" >"$OUT/conformance.txt" 2>&1; then
        pass "conformance vectors (check said: $(tail -1 "$OUT/conformance.txt"))"
    else
        fail "conformance vectors (check said: $(tail -1 "$OUT/conformance.txt"))"
        sed 's/^/      /' "$OUT/conformance.txt"
    fi
else
    echo "SKIP  conformance: no $CONFORMANCE/check (set SPTDUMP_SHARED to the shared suite)"
fi

# ---------------------------------------------------------------------------------------------
step "end-to-end: sptdump.exe against the Linux build"

LIN=(/version); compare "/version" 0
for h in /? -h -? /help --help /HELP; do
    LIN=(/help); WIN=("$h"); compare "help: $h" 0
done

# Every spelling of an option, against the Linux build's /progid.
for spelling in /progid -progid --progid /PROGID /ProgId -PROGID; do
    LIN=(/progid sample.spt); WIN=("$spelling" sample.spt); compare "option $spelling" 0
done
for spelling in "/top:3" "-top:3" "--top=3" "-TOP=3" "--top 3" "-top 3" "/TOP:3"; do
    LIN=(/summary /top:3 sample.spt)
    # shellcheck disable=SC2206 # split "--top 3" into two arguments on purpose
    WIN=(/summary $spelling sample.spt)
    compare "option value $spelling" 0
done
LIN=(/binary:contoso_core.dll,2 /event sample.spt); WIN=(/BINARY:CONTOSO_CORE.DLL,2 -event sample.spt)
compare "option /BINARY:CONTOSO_CORE.DLL,2 -event" 0
LIN=(/binary:contoso_core.dll,2 /event sample.spt); WIN=(--binary contoso_core.dll --binary=2 /Event sample.spt)
compare "option --binary NAME --binary=2" 0
LIN=(/header /progid /json sample.spt); WIN=(-json --PROGID /Header sample.spt)
compare "options in any order and case" 0
LIN=(/progid -- -odd.spt); compare "-- ends the options" 0

# Windows paths.
LIN=(/progid "$CPATH"); WIN=(/progid "$CPATH"); LCWD=$WORK/named
compare "path $CPATH" 0
LIN=(/json /validate "$CPATH"); WIN=(/json /validate "$CPATH"); LCWD=$WORK/named
compare "path $CPATH, /json" 0
LIN=(/validate "$ZPATH"); WIN=(/validate "$ZPATH"); LCWD=$WORK/named
compare "path Z:\\...\\sample.spt (Wine's Z: is /)" 0
LIN=(/json /progid "$ZPATH"); WIN=(/json /progid "$ZPATH"); LCWD=$WORK/named
compare "path Z:\\...\\sample.spt, /json" 0
LIN=(/progid "my traces/app 1.spt"); compare "path with spaces: my traces/app 1.spt" 0
LIN=(/validate "$ZSPACES"); LCWD=$WORK/named
compare "path with spaces: Z:\\...\\my traces\\app 1.spt" 0
LIN=(/json /summary /top:2 café.spt); compare "non-ASCII file name: café.spt" 0
LIN=(/progid unicode.spt); compare "non-ASCII binary names, text" 0
LIN=(/json /progid /event unicode.spt); compare "non-ASCII binary names, /json" 0
LIN=(/event /binary:日本.exe unicode.spt); compare "non-ASCII /binary:日本.exe" 0

# cmd.exe: how a developer prompt passes the arguments.
batch progid.cmd "sptdump.exe /PROGID \"$CPATH\""
LIN=(/progid "$CPATH"); LCWD=$WORK/named; WCMD=progid.cmd
compare "cmd.exe: sptdump /PROGID \"$CPATH\"" 0
batch binary.cmd "sptdump.exe /summary /top:2 /binary:contoso_core.dll,2 \"my traces\\app 1.spt\""
LIN=(/summary /top:2 /binary:contoso_core.dll,2 'my traces\app 1.spt'); LCWD=$WORK/named; WCMD=binary.cmd
compare "cmd.exe: /binary:contoso_core.dll,2 (the comma stays in the argument)" 0
batch stdin.cmd "sptdump.exe /json /event - < sample.spt"
LIN=(/json /event -); INPUT=$WORK/sample.spt; WCMD=stdin.cmd
compare "cmd.exe: sptdump /json /event - < sample.spt" 0
batch glob.cmd "cd glob" "sptdump.exe /validate *.spt"
LIN=(/validate a.spt b.spt); LCWD=$WORK/glob; WCMD=glob.cmd
compare "cmd.exe: sptdump /validate *.spt (the program expands wildcards)" 0
batch globdir.cmd "sptdump.exe /validate glob\\*.SPT"
LIN=(/validate 'glob\a.spt' 'glob\b.spt'); LCWD=$WORK/named; WCMD=globdir.cmd
compare "cmd.exe: sptdump /validate glob\\*.SPT" 0
batch globnone.cmd "sptdump.exe /validate *.nothing"
LIN=(/validate '*.nothing'); WCMD=globnone.cmd
compare "cmd.exe: a wildcard that matches nothing" 1
batch exit2.cmd "sptdump.exe /bogus:1 -bogus sample.spt"
LIN=(/bogus:1 -bogus sample.spt); WCMD=exit2.cmd
compare "cmd.exe: exit status 2 reaches %ERRORLEVEL%" 2

# /match and /pdb: lists of paths, read as PE images and PDBs.
if [ -f testdata/pe/trace.spt ]; then
    PE=$WORK/pe
    LIN=(/match:app.exe,app.pdb,v2/core.dll,age2/core.dll trace.spt); LCWD=$PE; WCWD=$PE
    compare "/match:app.exe,app.pdb,v2/core.dll,age2/core.dll" 1
    LIN=(/json /match:app.exe,core.pdb,nodebug.exe,app.c trace.spt); LCWD=$PE; WCWD=$PE
    compare "/json /match:app.exe,core.pdb,nodebug.exe,app.c" 1
    LIN=(/event /pdb:app.pdb,core.pdb trace.spt); LCWD=$PE; WCWD=$PE
    compare "/event /pdb:app.pdb,core.pdb" 0
    LIN=(/json /summary /top:3 /pdb:app.pdb --pdb core.pdb trace.spt); LCWD=$PE; WCWD=$PE
    compare "/json /summary /top:3 /pdb:app.pdb --pdb core.pdb" 0
    LIN=(/match:missing.dll,v2 trace.spt); LCWD=$PE; WCWD=$PE
    compare "/match: a file that does not exist, a directory" 1
    LIN=(/pdb:missing.pdb /pdb:v2 /progid trace.spt); LCWD=$PE; WCWD=$PE
    compare "/pdb: a file that does not exist, a directory" 1
    batch match.cmd "cd pe" "sptdump.exe /match:app.exe,v2\\core.dll,age2\\core.dll trace.spt"
    LIN=(/match:app.exe,'v2\core.dll','age2\core.dll' trace.spt); LCWD=$WORK/named; WCMD=match.cmd
    compare "cmd.exe: /match:app.exe,v2\\core.dll,age2\\core.dll" 1
    batch pdb.cmd "sptdump.exe /summary /top:2 \"/pdb:C:\\My Build\\app.pdb,C:\\My Build\\core.pdb\" \"C:\\My Build\\trace.spt\""
    LIN=(/summary /top:2 '/pdb:C:\My Build\app.pdb,C:\My Build\core.pdb' 'C:\My Build\trace.spt')
    LCWD=$WORK/named; WCMD=pdb.cmd
    compare "cmd.exe: \"/pdb:C:\\My Build\\app.pdb,C:\\My Build\\core.pdb\"" 0
else
    echo "SKIP  /match and /pdb: no testdata/pe/trace.spt"
fi

# Standard input.
LIN=(/progid -); INPUT=$WORK/sample.spt; compare "stdin: /progid - < sample.spt" 0
LIN=(/all -); INPUT=$WORK/sample.spt; PIPE=1; compare "stdin: cat sample.spt | sptdump /all -" 0
LIN=(/json /summary /top:3 -); INPUT=$WORK/unicode.spt; PIPE=1
compare "stdin: cat unicode.spt | sptdump /json /summary /top:3 -" 0
LIN=(/validate sample.spt - unicode.spt); INPUT=$WORK/truncated.spt; PIPE=1
compare "stdin between files: /validate sample.spt - unicode.spt" 1
LIN=(/validate -); compare "stdin: empty" 1

# Several files.
LIN=(/progid sample.spt unicode.spt café.spt); compare "several files: /progid" 0
LIN=(/json /header sample.spt truncated.spt unicode.spt); compare "several files: /json /header" 1
LIN=(/summary /top:1 sample.spt "my traces/app 1.spt"); compare "several files: /summary /top:1" 0

# Exit statuses.
LIN=(/validate sample.spt); compare "exit 0: valid" 0
LIN=(/validate unicode.spt); compare "exit 0: warnings only" 0
LIN=(truncated.spt); compare "exit 1: truncated header" 1
LIN=(/validate sample.spt truncated.spt); compare "exit 1: worst of several files" 1
LIN=(/progid no-such-file.spt); compare "exit 1: a file that does not exist" 1
LIN=(/validate sample.spt no-such-file.spt); compare "exit 1: /validate with a file that does not exist" 1
LIN=(/progid "a dir"); compare "exit 1: a directory" 1
LIN=(-bogus sample.spt); compare "exit 2: unknown option" 2
LIN=(/json); compare "exit 2: no file" 2
LIN=(/top:x sample.spt); compare "exit 2: bad value" 2
LIN=(/header:1 sample.spt); compare "exit 2: value for a flag" 2
LIN=(/binary:nothing.dll sample.spt); compare "exit 2: /binary names nothing" 2
LIN=(--top); compare "exit 2: missing value" 2

# The console: Wine turns a terminal into a Windows console, where Rust writes UTF-16
# (WriteConsoleW). Once Wine's terminal escapes and CRs are taken out, the text must be the
# Linux build's, non-ASCII names included.
N=$((N + 1))
p=$CASES/$N
(cd "$WORK" && "$LINUX_EXE" /progid unicode.spt sample.spt >"$p.linux.out" 2>/dev/null)
(cd "$WORK" && script -qfec "stty cols 500 rows 100; $(quoted "$WINE" "$WIN_EXE") /progid unicode.spt sample.spt 2>/dev/null" /dev/null \
    </dev/null >"$p.tty" 2>&1)
LC_ALL=C sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\r//g' "$p.tty" >"$p.windows.out"
if cmp -s "$p.linux.out" "$p.windows.out"; then
    pass "console: /progid unicode.spt sample.spt on a terminal"
else
    fail "console: /progid unicode.spt sample.spt on a terminal"
    printf '      (cd %s && script -qfec "wine sptdump.exe /progid unicode.spt sample.spt" /dev/null)\n' "$(quoted "$WORK")"
    show_diff stdout "$p.linux.out" "$p.windows.out"
fi

# ---------------------------------------------------------------------------------------------
step "same output as the Linux build, file by file"
files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(find testdata -type f -print0 | sort -z)
files+=("$WORK/unicode.spt" "$WORK/truncated.spt")
if [ "$QUICK" = 0 ] && [ -d "$CONFORMANCE/vectors" ]; then
    while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$CONFORMANCE/vectors" -type f -name '*.spt' -print0 | sort -z)
fi
OPTION_SETS=("/all" "/json" "/summary" "/validate" "/json /summary /top:3")
for f in "${files[@]}"; do
    dir=$(cd "$(dirname "$f")" && pwd)
    base=$(basename "$f")
    for set in "${OPTION_SETS[@]}"; do
        # shellcheck disable=SC2206 # an option set is several arguments
        LIN=($set "$base"); LCWD=$dir; WCWD=$dir
        compare "$set $(basename "$dir")/$base"
    done
done

# ---------------------------------------------------------------------------------------------
if [ -n "$ARCHIVE" ]; then
    step "spddump.exe of the archive against the Linux spddump"
    for args in "/all app.spd" "/json /all app.spd" "/func core.spd" "/compare app-old.spd app.spd" \
        "/header ../sample.spt" "/fnuc app.spd"; do
        # shellcheck disable=SC2206 # several arguments
        set -- $args
        p=$CASES/spddump-$N
        N=$((N + 1))
        (cd "$ROOT/testdata/pe" && "$ROOT/target/release/spddump" "$@" </dev/null >"$p.linux.out" 2>"$p.linux.err"; echo $? >"$p.linux.rc")
        (cd "$ROOT/testdata/pe" && "$WINE" "$(dirname "$WIN_EXE")/spddump.exe" "$@" </dev/null >"$p.windows.out" 2>"$p.windows.err"; echo $? >"$p.windows.rc")
        if cmp -s "$p.linux.out" "$p.windows.out" && cmp -s "$p.linux.err" "$p.windows.err" \
            && cmp -s "$p.linux.rc" "$p.windows.rc"; then
            pass "spddump $args"
        else
            fail "spddump $args"
            show_diff stdout "$p.linux.out" "$p.windows.out"
            show_diff stderr "$p.linux.err" "$p.windows.err"
        fi
    done
fi

# ---------------------------------------------------------------------------------------------
step "the test suite, built for Windows, under Wine"
if [ -n "$ARCHIVE" ]; then
    echo "SKIP  the test suite (--archive: the archive holds the binaries, not the tests)"
elif [ "$QUICK" = 1 ]; then
    echo "SKIP  the test suite (--quick)"
else
    # The test binaries and the sptdump.exe they start live in target/$TARGET/debug/: they
    # need the Wine work-around next to them too.
    mkdir -p "target/$TARGET/debug/deps"
    if [ -f "$BIN/bcryptprimitives.dll" ]; then
        cp "$BIN/bcryptprimitives.dll" "target/$TARGET/debug/"
        cp "$BIN/bcryptprimitives.dll" "target/$TARGET/debug/deps/"
    fi
    # Cargo starts each test binary through this runner, which drops its own variable:
    # assert_cmd reads CARGO_TARGET_<TRIPLE>_RUNNER as well, and would start sptdump.exe
    # through it, a shell script that Windows cannot run.
    cat >"$BIN/test-runner" <<RUNNER
#!/bin/sh
exec env -u CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER '$WINE' "\$@"
RUNNER
    chmod +x "$BIN/test-runner"
    CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
        CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$BIN/test-runner \
        cargo test --locked --target "$TARGET" --no-fail-fast </dev/null >"$OUT/cargo-test.txt" 2>&1
    echo "(its whole output: target/windows-check/cargo-test.txt)"
    # One case per test binary, from its "Running" line and its "test result" line.
    while IFS=$'\t' read -r verdict name detail; do
        if [ "$verdict" = ok ]; then
            pass "cargo test under Wine: $name ($detail)"
        else
            fail "cargo test under Wine: $name ($detail)"
        fi
    done < <(python3 - "$OUT/cargo-test.txt" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
runs = list(re.finditer(r"^\s*Running (.+?) \(", text, re.M))
if not runs:
    last = [l.strip() for l in text.splitlines() if l.strip()][-3:]
    print("failed\tbuild\t" + " / ".join(last))
for i, run in enumerate(runs):
    part = text[run.end(): runs[i + 1].start() if i + 1 < len(runs) else len(text)]
    result = re.search(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed", part, re.M)
    if not result:
        print(f"failed\t{run.group(1)}\tno test result: it did not finish")
        continue
    detail = f"{result.group(2)} passed, {result.group(3)} failed"
    failed = re.findall(r"^test (\S+) \.\.\. FAILED", part, re.M)
    if failed:
        detail += ": " + ", ".join(failed)
    print(f"{'ok' if result.group(1) == 'ok' else 'failed'}\t{run.group(1)}\t{detail}")
PY
    )
fi

# ---------------------------------------------------------------------------------------------
printf '\nWindows check took %d s\n' $((SECONDS - START))
if [ "$FAILED" -gt 0 ]; then
    printf 'failed:\n'
    printf '  %s\n' "${FAILURES[@]}"
fi
printf '%d passed, %d failed\n' "$PASSED" "$FAILED"
[ "$FAILED" -eq 0 ]
