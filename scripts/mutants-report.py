#!/usr/bin/env python3
"""Prints cargo-mutants' outcomes file by file: mutants, caught, missed, timeouts, unviable;
then every missed mutant. With --markdown, the table as docs/notes/testing-runs.md records it.
Given several outcome files (a focused pass, then the whole suite over what it missed), a
mutant's outcome is the one of the last file that tried it.

Usage: scripts/mutants-report.py [--markdown] OUTCOMES.json [OUTCOMES.json...]"""
import collections
import json
import sys

KINDS = {
    "CaughtMutant": "caught",
    "MissedMutant": "missed",
    "Timeout": "timeout",
    "Unviable": "unviable",
}


def main(paths, markdown=False):
    last = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for o in data["outcomes"]:
            scenario = o["scenario"]
            if isinstance(scenario, dict) and "Mutant" in scenario:
                m = scenario["Mutant"]
                last[m.get("name") or json.dumps(m, sort_keys=True)] = (m, o["summary"])
    per_file = collections.defaultdict(collections.Counter)
    missed = []
    for m, summary in last.values():
        kind = KINDS.get(summary, summary)
        per_file[m["file"]][kind] += 1
        if kind == "missed":
            line = m["span"]["start"]["line"]
            missed.append(f"{m['file']}:{line}: {describe(m)}")
    if markdown:
        row = lambda name, c: print(
            f"| {name} | {sum(c.values())} | {c['caught']} | {c['timeout']} | {c['missed']} | {c['unviable']} |"
        )
        print("| file | mutants | caught | timeouts | missed | unviable |")
        print("|---|---:|---:|---:|---:|---:|")
    else:
        row = lambda name, c: print(
            f"{name:40} {sum(c.values()):7} {c['caught']:7} {c['timeout']:7} {c['missed']:7} {c['unviable']:8}"
        )
        print(f"{'file':40} {'mutants':>7} {'caught':>7} {'timeout':>7} {'missed':>7} {'unviable':>8}")
    total = collections.Counter()
    for file in sorted(per_file):
        total.update(per_file[file])
        row(f"`{file}`" if markdown else file, per_file[file])
    row("**all**" if markdown else "all", total)
    if missed:
        print("\nmissed:")
        for m in missed:
            print("  " + m)


def describe(m):
    function = (m.get("function") or {}).get("function_name", "")
    replacement = m.get("replacement", "")
    genre = m.get("genre", "")
    return f"{genre} {replacement!r} in {function}"


if __name__ == "__main__":
    args = sys.argv[1:]
    markdown = "--markdown" in args
    main([a for a in args if a != "--markdown"], markdown)
