#!/usr/bin/env bash
# Runs cargo-mutants over part of src/ and prints what it found, file by file.
#
#   scripts/mutants.sh [--focus FILTERSET [--only TARGETS]] [FILE...] [-- CARGO-MUTANTS-OPTIONS]
#
# FILE defaults to the analyses, the exporters, images and symbols, and the driver
# (src/analysis, src/output, src/image, src/dump); any file or folder under src/ can be
# named. Options after `--` go to cargo mutants as they are, e.g. `-- --shard 1/4`.
#
# The mutants are made in a scratch clone of HEAD (target/mutants/tree), never in the
# working tree, and built there with the `mutants` profile (.cargo/mutants.toml). Results go
# to target/mutants/out; a second run over the same files with `-- --iterate` tries only
# the mutants the last one did not catch. Two cores take about half a minute per mutant.
#
# --focus FILTERSET (with cargo-nextest) runs each mutant against the tests the filterset
# picks (nextest's -E syntax, e.g. 'test(/spd/)'), then the mutants those missed against the
# whole suite: only the second pass says what is missed, so a filter changes the time a run
# takes, never its answer. The focused pass's results go to target/mutants/focused.
# --only TARGETS makes the focused pass build only those test targets, as cargo names them
# (`--lib` for the unit tests, `--test it` for the integration tests): a mutant's time is
# mostly building and linking, and a filter alone still builds every test binary.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

focus=
only=
if [ "${1:-}" = "--focus" ]; then focus=$2; shift 2; fi
if [ "${1:-}" = "--only" ]; then only=$2; shift 2; fi
files=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do files+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#files[@]} -eq 0 ] && files=(src/analysis src/output src/image src/dump)

command -v cargo-mutants >/dev/null || {
  echo "scripts/mutants.sh: cargo-mutants is not installed: cargo install --locked cargo-mutants" >&2
  exit 1
}

tree=target/mutants/tree
if [ -d "$tree/.git" ]; then
  git -C "$tree" fetch -q "$repo" HEAD
  git -C "$tree" reset -q --hard FETCH_HEAD
else
  mkdir -p target/mutants
  git clone -q "$repo" "$tree"
fi

# The shared conformance suite sits beside the repository, not beside the scratch clone.
if [ -z "${SPTDUMP_SHARED:-}" ] && [ -d ../shared/conformance ]; then
  export SPTDUMP_SHARED="$repo/../shared"
fi
# The properties test the decoder with random traces; 16 cases each find what 256 do in the
# code the mutants change, at a tenth of the time.
export SPTDUMP_PROPTEST_CASES=${SPTDUMP_PROPTEST_CASES:-16}

args=()
for f in "${files[@]}"; do
  if [ -d "$f" ]; then args+=(-f "$f/**/*.rs" -f "$f/*.rs"); else args+=(-f "$f"); fi
done

# nextest stops a mutant's tests at the first failure, where cargo test runs the whole
# binary: most mutants are caught in seconds.
if cargo nextest --version >/dev/null 2>&1; then
  args+=(--test-tool=nextest)
fi

mutants() { (cd "$tree" && cargo mutants --in-place --no-shuffle "$@"); }
status=0
outcomes=()
if [ -n "$focus" ] && cargo nextest --version >/dev/null 2>&1; then
  focused=target/mutants/focused
  config=()
  if [ -n "$only" ]; then
    # The same configuration, with those targets for the tests to build.
    targets=$(printf '%s\n' $only | sed 's/.*/"&"/' | paste -sd, -)
    # Their tests take a second: a mutant that loops is stopped after 15, not the 60 the
    # whole suite needs.
    sed -e "s/^additional_cargo_test_args = .*/additional_cargo_test_args = [$targets]/" \
      -e "s/^minimum_test_timeout = .*/minimum_test_timeout = 15/" \
      .cargo/mutants.toml > target/mutants/only.toml
    config=(--config "$repo/target/mutants/only.toml")
  fi
  mutants -o "$repo/$focused" ${config[@]+"${config[@]}"} "${args[@]}" \
    --cargo-test-arg=-E --cargo-test-arg="$focus" "$@" || status=$?
  outcomes+=("$focused/mutants.out/outcomes.json")
  # The mutants the focused pass missed, each by its exact name.
  again=()
  mkdir -p "$focused/mutants.out" && touch "$focused/mutants.out/missed.txt"
  while IFS= read -r name; do
    again+=(-F "^$(printf '%s' "$name" | sed 's/[][\.+*?(){}|^$]/\\&/g')\$")
  done < "$focused/mutants.out/missed.txt"
  # The names alone pick the mutants: a -F of the caller's would add to them.
  rest=()
  while [ $# -gt 0 ]; do
    case $1 in
      -F | --re) shift 2 ;;
      *) rest+=("$1"); shift ;;
    esac
  done
  if [ ${#again[@]} -gt 0 ]; then
    status=0
    mutants -o "$repo/target/mutants/out" "${args[@]}" "${again[@]}" ${rest[@]+"${rest[@]}"} || status=$?
    outcomes+=(target/mutants/out/mutants.out/outcomes.json)
  fi
else
  [ -n "$focus" ] && echo "scripts/mutants.sh: --focus needs cargo-nextest: the whole suite runs" >&2
  mutants -o "$repo/target/mutants/out" "${args[@]}" "$@" || status=$?
  outcomes+=(target/mutants/out/mutants.out/outcomes.json)
fi
python3 scripts/mutants-report.py "${outcomes[@]}"
# cargo-mutants exits 2 when a mutant was missed, 3 on a timeout: the report says which.
exit "$status"
