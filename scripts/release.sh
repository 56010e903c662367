#!/usr/bin/env bash
# Release archives: what a user without Rust installs from.
#
# usage: scripts/release.sh [--linux-only | --windows-only]
#
# Builds, from this checkout:
#   target/dist/sptdump-VERSION-x86_64-unknown-linux-musl.tar.gz   (static, any Linux x64)
#   target/dist/sptdump-VERSION-x86_64-pc-windows-gnu.zip          (Windows x64, no runtime)
#   target/dist/SHA256SUMS                                          (sha256sum -c reads it)
# each archive holding one folder, sptdump-VERSION-TARGET/, with sptdump and spddump
# (.exe on Windows), README.md, LICENSE, LICENSE-APACHE and LICENSE-MIT. Then it unpacks the
# Linux archive and runs its binaries on the bundled sample, against the tests' expectations:
# an archive that does not run is not written into SHA256SUMS. scripts/windows-check.sh
# --archive target/dist/sptdump-VERSION-x86_64-pc-windows-gnu.zip runs the Windows one under
# Wine.
#
# Needs (on Debian 12; the script installs nothing):
#   rustup target add x86_64-unknown-linux-musl x86_64-pc-windows-gnu
#   apt-get install musl-tools gcc-mingw-w64-x86-64 zip
#
# The archives are reproducible for one toolchain and checkout: files in name order, owned by
# root, dated by the last commit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

LINUX=1
WINDOWS=1
for arg in "$@"; do
    case $arg in
        --linux-only) WINDOWS=0 ;;
        --windows-only) LINUX=0 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "release: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
    esac
done

VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
[ -n "$VERSION" ] || { echo "release: no version in Cargo.toml" >&2; exit 1; }
DIST=$ROOT/target/dist
STAMP=$(git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH=$STAMP

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1: $2"); }
need_target() {
    rustup target list --installed 2>/dev/null | grep -qx "$1" \
        || missing+=("the $1 standard library: rustup target add $1")
}
if [ $LINUX = 1 ]; then
    need musl-gcc "Debian: apt-get install musl-tools"
    need_target x86_64-unknown-linux-musl
fi
if [ $WINDOWS = 1 ]; then
    need x86_64-w64-mingw32-gcc "Debian: apt-get install gcc-mingw-w64-x86-64"
    need zip "Debian: apt-get install zip"
    need_target x86_64-pc-windows-gnu
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "release: missing tools; install them and run again:" >&2
    printf '  %s\n' "${missing[@]}" >&2
    exit 2
fi

mkdir -p "$DIST"
# Copies the binaries and the documents into DIST/NAME/, dated by the last commit.
stage() { # stage NAME TARGET EXE-SUFFIX
    local dir=$DIST/$1
    rm -rf "$dir"
    mkdir -p "$dir"
    for bin in sptdump spddump; do
        cp "target/$2/release/$bin$3" "$dir/"
    done
    cp README.md LICENSE LICENSE-APACHE LICENSE-MIT "$dir/"
    find "$dir" -exec touch -h -d "@$STAMP" {} +
}

if [ $LINUX = 1 ]; then
    TARGET=x86_64-unknown-linux-musl
    NAME=sptdump-$VERSION-$TARGET
    echo "== $NAME"
    # ring's C and assembly are built by musl-gcc; the binaries link statically.
    CC_x86_64_unknown_linux_musl=musl-gcc cargo build --locked --release --target "$TARGET" \
        --bin sptdump --bin spddump
    stage "$NAME" "$TARGET" ""
    (cd "$DIST" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$STAMP" \
        -cf - "$NAME" | gzip -n -9 >"$NAME.tar.gz")
    # The archive as a user unpacks it: both binaries run, on the bundled sample.
    check=$DIST/check-$NAME
    rm -rf "$check"
    mkdir -p "$check"
    tar -xzf "$DIST/$NAME.tar.gz" -C "$check"
    "$check/$NAME/sptdump" /validate testdata/sample.spt | grep -qx 'testdata/sample.spt: valid (0 errors, 0 warnings)'
    "$check/$NAME/spddump" /header testdata/pe/app.spd | grep -q '^  binary *app.exe$'
    [ "$("$check/$NAME/sptdump" /version)" = "sptdump $VERSION" ]
    rm -rf "$check"
    echo "$NAME.tar.gz: unpacked, both binaries run"
fi

if [ $WINDOWS = 1 ]; then
    TARGET=x86_64-pc-windows-gnu
    NAME=sptdump-$VERSION-$TARGET
    echo "== $NAME"
    CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
        cargo build --locked --release --target "$TARGET" --bin sptdump --bin spddump
    stage "$NAME" "$TARGET" ".exe"
    rm -f "$DIST/$NAME.zip"
    (cd "$DIST" && find "$NAME" -print | LC_ALL=C sort | zip -q -X -9 "$NAME.zip" -@)
    echo "$NAME.zip: run scripts/windows-check.sh --archive $DIST/$NAME.zip to check it under Wine"
fi

(cd "$DIST" && rm -f SHA256SUMS && sha256sum -- "sptdump-$VERSION-"*.{tar.gz,zip} 2>/dev/null >SHA256SUMS || true)
echo "== $DIST"
cat "$DIST/SHA256SUMS"
