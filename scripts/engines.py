#!/usr/bin/env python3
"""Proves that engines read sptdump's Parquet tables and sum them exactly.

Writes the tables of several traces of testdata/pe into a fleet layout
(fleet/date=.../host=.../{samples,arcs,stacks}), runs the guide's DuckDB query or its
PySpark job over them (the code is taken from docs/guide.md, between its markers), and holds
the sums per binary and source against what `sptdump /merge /summary /functions /json` reports
for the same traces.

Then the fleet's blocks: the four runs of lbr.exe in testdata/pe/fleet, each beside
testdata/pe/lbr.spd (and its image and PDB), written as blocks and edges; the guide's three
block queries (the same SQL in both engines, over views named `blocks` and `edges`) run on
them, and their answers must be those the guide shows; the fleet's summed flow must conserve
at every block (a query); the fleet's overlap must be the one summed from each trace's
`/cfg` JSON, and a fleet of one trace's `/compare TRACE SPD`'s `flow_overlap`. Exit status 0
when every check holds.

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


# The fleet of lbr.exe's runs, one machine each, and the SPD they are held against.
FLEET_DIR = os.path.join(PE, "fleet")
BLOCK_FLEET = ["web01", "web02", "web03", "web04"]

# Every block's summed flow against the summed flow of its incoming and of its outgoing
# edges, over every graph and function of the fleet: the blocks where they differ.
CONSERVES = """
WITH b AS (
  SELECT graph, guid, age, coalesce(hash, '') AS f, function_rva, block, sum(flow) AS flow
  FROM blocks GROUP BY graph, guid, age, coalesce(hash, ''), function_rva, block
),
i AS (
  SELECT graph, guid, age, coalesce(hash, '') AS f, function_rva, to_block AS block,
         sum(flow) AS flow_in
  FROM edges WHERE to_block IS NOT NULL
  GROUP BY graph, guid, age, coalesce(hash, ''), function_rva, to_block
),
o AS (
  SELECT graph, guid, age, coalesce(hash, '') AS f, function_rva, from_block AS block,
         sum(flow) AS flow_out
  FROM edges WHERE from_block IS NOT NULL
  GROUP BY graph, guid, age, coalesce(hash, ''), function_rva, from_block
)
SELECT count(*) AS blocks,
       sum(CASE WHEN coalesce(flow_in, 0) <> flow OR coalesce(flow_out, 0) <> flow
           THEN 1 ELSE 0 END) AS unconserved
FROM b LEFT JOIN i USING (graph, guid, age, f, function_rva, block)
       LEFT JOIN o USING (graph, guid, age, f, function_rva, block)
"""


def write_block_fleet(sptdump, work):
    for host in BLOCK_FLEET:
        out = os.path.join(work, "blocks", "date=2026-12-07", f"host={host}")
        subprocess.run([sptdump, "/parquet:" + out, "/match:../lbr.spd", "/image:../lbr.exe",
                        "/pdb:../lbr.pdb", f"{host}.spt"],
                       cwd=FLEET_DIR, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def json_of(sptdump, args, cwd=FLEET_DIR, ok=(0,)):
    p = subprocess.run([sptdump, "/json", *args], cwd=cwd, capture_output=True, text=True)
    if p.returncode not in ok:
        sys.exit(f"engines.py: sptdump {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return [json.loads(line) for line in p.stdout.splitlines()]


def spd_weights(sptdump, names):
    """Per (hash, block) of lbr.spd with code: (instructions, the SPD's count), as `/compare
    /blocks` gives them."""
    lines = json_of(sptdump, ["/compare", *[f"/blocks:{n}" for n in names],
                              f"{BLOCK_FLEET[0]}.spt", "../lbr.spd"])
    return {(v["hash"], v["id"]): (v["instructions"], v["spd_count"])
            for v in lines if v["type"] == "spd_block_compare"}


def spd_names(sptdump):
    spddump = os.path.join(os.path.dirname(sptdump), "spddump")
    p = subprocess.run([spddump, "/func", "/json", "../lbr.spd"], cwd=FLEET_DIR, check=True,
                       capture_output=True, text=True)
    return [v["name"] for v in map(json.loads, p.stdout.splitlines())
            if v["type"] == "spd_function"]


def trace_flows(sptdump, trace, names):
    """Per (hash, block): the flow `/cfg` gives on lbr.spd's graph for `trace` (the functions
    with an observation, then each other function by name, 0 where none ran)."""
    flows = {}
    shown = json_of(sptdump, ["/cfg", "/top:all", "/match:../lbr.spd", trace])
    for name in names:
        if not any(v.get("function") == name for v in shown):
            shown += json_of(sptdump, [f"/cfg:{name}", "/match:../lbr.spd", trace], ok=(0, 1))
    for v in shown:
        if v["type"] == "cfg_block":
            flows[(v["hash"], v["id"])] = v["flow"] or 0
    return flows


def overlap(flows, weights):
    """Section 17's overlap of summed flows against the SPD, over blocks with code."""
    p = {k: flows.get(k, 0) * n for k, (n, _) in weights.items()}
    q = {k: c * n for k, (n, c) in weights.items()}
    tp, tq = sum(p.values()), sum(q.values())
    return sum(min(p[k] / tp, q[k] / tq) for k in weights)


def answer_text(rows):
    """An answer as the guide shows it: a row a line, columns apart by two spaces, shares
    and overlaps as percentages to two places."""
    def cell(v):
        if v is None:
            return "NULL"
        return f"{v * 100:.2f}%" if isinstance(v, float) else str(v)
    return "\n".join("  ".join(cell(v) for v in row) for row in rows)


def guide_answer(marker):
    """The text block after `<!-- engines: MARKER answer -->` in the guide."""
    text = open(os.path.join(ROOT, "docs", "guide.md"), encoding="utf-8").read()
    m = re.search(r"<!-- engines: " + re.escape(marker) + r" answer -->\s*```\w*\n(.*?)```",
                  text, re.S)
    if not m:
        sys.exit(f"engines.py: no '<!-- engines: {marker} answer -->' block in docs/guide.md")
    return m.group(1).strip()


BLOCK_QUERIES = ["blocks-overlap", "blocks-cold", "blocks-traces"]


def duckdb_blocks(work, only=None):
    import duckdb

    con = duckdb.connect()
    where = f"WHERE trace = '{only}'" if only else ""
    for table in ("blocks", "edges"):
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet("
                    f"'{work}/blocks/*/*/{table}/*.parquet', hive_partitioning = true) {where}")
    answers = {q: con.sql(readme_block(q)).fetchall() for q in BLOCK_QUERIES}
    return answers, con.sql(CONSERVES).fetchall()[0]


def spark_blocks(work, only=None):
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master("local[2]").getOrCreate()
    for table in ("blocks", "edges"):
        frame = spark.read.option("basePath", f"{work}/blocks").parquet(
            f"{work}/blocks/*/*/{table}")
        if only:
            frame = frame.where(frame.trace == only)
        frame.createOrReplaceTempView(table)
    answers = {q: [tuple(r) for r in spark.sql(readme_block(q)).collect()] for q in BLOCK_QUERIES}
    return answers, tuple(spark.sql(CONSERVES).collect()[0])


def plain(rows):
    """An engine's rows as Python values: decimals as integers, doubles as floats."""
    return [tuple(int(v) if isinstance(v, Decimal) else v for v in row) for row in rows]


def check_blocks(sptdump, engine):
    """The fleet's block checks; True when all hold."""
    names = spd_names(sptdump)
    weights = spd_weights(sptdump, names)
    per_trace = {h: trace_flows(sptdump, f"{h}.spt", names) for h in BLOCK_FLEET}
    summed = {}
    for flows in per_trace.values():
        for k, v in flows.items():
            summed[k] = summed.get(k, 0) + v
    run = duckdb_blocks if engine == "duckdb" else spark_blocks
    ok = True
    with tempfile.TemporaryDirectory() as work:
        write_block_fleet(sptdump, work)
        answers, (blocks, unconserved) = run(work)
        one = BLOCK_FLEET[1]
        alone, _ = run(work, only=f"{one}.spt")
    print(f"{engine}: the guide's block queries over {len(BLOCK_FLEET)} runs of lbr.exe "
          f"beside lbr.spd")
    for q in BLOCK_QUERIES:
        got = answer_text(plain(answers[q]))
        same = got == guide_answer(q)
        ok &= same
        print(f"  {q}: {'as the guide shows it' if same else 'DIFFERENT from the guide:'}")
        if not same:
            print("    " + got.replace("\n", "\n    "))
    fine = unconserved == 0 and blocks > 0
    ok &= fine
    print(f"  the summed flow conserves at {blocks - (unconserved or 0)} of {blocks} blocks  "
          f"{'equal' if fine else 'DIFFERENT'}")
    fleet = plain(answers["blocks-overlap"])[0][-1]
    expected = overlap(summed, weights)
    same = abs(fleet - expected) < 1e-9
    ok &= same
    print(f"  the fleet's overlap {fleet:.6f}, from each trace's /cfg summed {expected:.6f}  "
          f"{'equal' if same else 'DIFFERENT'}")
    compared = json_of(sptdump, ["/compare", f"{one}.spt", "../lbr.spd"])
    flow_overlap = next(v["flow_overlap"] for v in compared if v["type"] == "spd_blocks")
    single = plain(alone["blocks-overlap"])[0][-1]
    same = abs(single - flow_overlap) < 1e-6
    ok &= same
    print(f"  {one} alone: overlap {single:.6f}, /compare TRACE SPD's flow_overlap "
          f"{flow_overlap:.6f}  {'equal' if same else 'DIFFERENT'}")
    return ok


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
    if not check_blocks(sptdump, args.engine):
        print(f"{args.engine}: the fleet's blocks do not hold")
        return 1
    print(f"{args.engine}: the fleet's blocks hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
