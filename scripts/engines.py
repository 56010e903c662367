#!/usr/bin/env python3
"""Proves that engines read sptdump's Parquet tables and sum them exactly.

Writes the tables of several traces of testdata/pe into a fleet layout
(fleet/date=.../host=.../{samples,arcs,stacks}), runs the guide's DuckDB query or its
PySpark job over them (the code is taken from docs/guide.md, between its markers), and holds
the sums per binary and source against what `sptdump /merge /summary /functions /json` reports
for the same traces. Exit status 0 when every sum is equal.

    python3 scripts/engines.py --engine duckdb target/release/sptdump
    python3 scripts/engines.py --engine spark target/release/sptdump   (scripts/spark-check.sh)
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from decimal import Decimal

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PE = os.path.join(ROOT, "testdata", "pe")

# Two machines of one day, each with its traces: profile.spt is on both, so it weighs twice
# in the fleet's sums, as in /merge; huge.spt holds a key of 2^65 hits, past 64 bits.
FLEET = {
    "date=2026-12-01/host=web01": ["profile.spt", "trace.spt"],
    "date=2026-12-01/host=web02": ["profile.spt", "app-only.spt", "huge.spt"],
}


def readme_block(marker):
    """The fenced code block after `<!-- engines: MARKER -->` in the guide."""
    text = open(os.path.join(ROOT, "docs", "guide.md"), encoding="utf-8").read()
    m = re.search(r"<!-- engines: " + re.escape(marker) + r" -->\s*```\w*\n(.*?)```", text, re.S)
    if not m:
        sys.exit(f"engines.py: no '<!-- engines: {marker} -->' code block in docs/guide.md")
    return m.group(1)


def write_fleet(sptdump, work):
    for folder, traces in FLEET.items():
        out = os.path.join(work, "fleet", folder)
        subprocess.run([sptdump, "/parquet:" + out, "/pdb:app.pdb,core.pdb", *traces],
                       cwd=PE, check=True)


def expected_sums(sptdump, traces):
    """Per (binary, source): what /merge counts of `traces`; and per binary the call stacks'
    hits."""
    out = subprocess.run([sptdump, "/merge", "/summary", "/functions", "/json", *traces],
                         cwd=PE, check=True, capture_output=True, text=True).stdout
    sums, stacks = {}, {}
    for line in out.splitlines():
        v = json.loads(line, parse_int=int)
        if v["type"] == "summary":
            for ip in v["ip"]:
                sums[(v["name"], ip["event"])] = int(ip["samples"])
            if v.get("lbr"):
                sums[(v["name"], "LBR")] = int(v["lbr"]["branches"])
            if v.get("callstack"):
                sums[(v["name"], "ETW_CALLSTACK")] = int(v["callstack"]["arcs"])
        elif v["type"] == "functions" and v["source"] == "ETW_CALLSTACK":
            stacks[v["name"]] = int(v["hits"])
    return sums, stacks


def run_duckdb(work):
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET file_search_path = '{work}'")
    rows = con.sql(readme_block("duckdb")).fetchall()
    stacks = con.sql("SELECT \"binary\", sum(hits) FROM read_parquet('fleet/*/*/stacks/*.parquet', "
                     "hive_partitioning = true) GROUP BY ALL").fetchall()
    # One machine's rows, by its folder.
    web01 = con.sql("SELECT sum(hits) FROM read_parquet('fleet/*/*/samples/*.parquet', "
                    "hive_partitioning = true) WHERE host = 'web01'").fetchall()[0][0]
    return rows, stacks, web01


def run_spark(work):
    os.chdir(work)
    scope = {}
    exec(readme_block("pyspark"), scope)
    spark, rows = scope["spark"], scope["rows"]
    from pyspark.sql import functions as F

    stacks = (spark.read.option("basePath", "fleet").parquet("fleet/*/*/stacks")
              .groupBy("binary").agg(F.sum("hits")).collect())
    samples = spark.read.option("basePath", "fleet").parquet("fleet/*/*/samples")
    web01 = samples.where(F.col("host") == "web01").agg(F.sum("hits")).collect()[0][0]
    result = [tuple(r) for r in rows.collect()], [tuple(r) for r in stacks], web01
    spark.stop()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb")
    parser.add_argument("sptdump", help="the sptdump binary")
    args = parser.parse_args()
    sptdump = os.path.abspath(args.sptdump)
    expected, expected_stacks = expected_sums(sptdump, [t for ts in FLEET.values() for t in ts])
    web01_traces = FLEET["date=2026-12-01/host=web01"]
    expected_web01 = sum(h for (_, source), h in expected_sums(sptdump, web01_traces)[0].items()
                         if source not in ("LBR", "ETW_CALLSTACK"))
    with tempfile.TemporaryDirectory() as work:
        write_fleet(sptdump, work)
        rows, stacks, web01 = (run_duckdb if args.engine == "duckdb" else run_spark)(work)
    got = {(b, s): h for b, s, h in rows}
    got_stacks = {b: h for b, h in stacks}
    print(f"{args.engine}: the guide's query over {sum(map(len, FLEET.values()))} traces' tables")
    print(f"  {'binary':10} {'source':15} {'engine':>22} {'/merge':>22}")
    failed = False
    for key in sorted(set(got) | set(expected)):
        g, e = got.get(key), expected.get(key)
        same = g is not None and e is not None and Decimal(g) == Decimal(e)
        failed |= not same
        print(f"  {key[0]:10} {key[1]:15} {str(g):>22} {str(e):>22}  {'equal' if same else 'DIFFERENT'}")
    for binary in sorted(set(got_stacks) | set(expected_stacks)):
        g, e = got_stacks.get(binary), expected_stacks.get(binary)
        same = g is not None and e is not None and Decimal(g) == Decimal(e)
        failed |= not same
        print(f"  {binary:10} {'stacks':15} {str(g):>22} {str(e):>22}  {'equal' if same else 'DIFFERENT'}")
    same = web01 is not None and Decimal(web01) == Decimal(expected_web01)
    failed |= not same
    print(f"  host=web01 IP samples      {str(web01):>22} {expected_web01:>22}  "
          f"{'equal' if same else 'DIFFERENT'} (one machine's folder, pruned by its path)")
    if failed:
        print(f"{args.engine}: the sums differ from /merge's")
        return 1
    print(f"{args.engine}: every sum equals /merge /summary's and /merge /functions'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
