#!/usr/bin/env bash
# Runs the README's PySpark job, in Spark's local mode, over the Parquet tables of several
# traces, and holds its sums against `sptdump /merge /summary` (scripts/engines.py). Too heavy
# for every CI run (a JRE and a 300 MB PyPI package): run it before changing the tables.
#
#   scripts/spark-check.sh [--install] [SPTDUMP]
#
# --install: install what is missing first: a headless JRE (Debian's default-jre-headless,
# as root) and PySpark (PyPI). SPTDUMP defaults to target/release/sptdump.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--install" ]; then
  shift
  if ! command -v java >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless
  fi
  python3 -c "import pyspark" 2>/dev/null || python3 -m pip install --quiet "pyspark==3.5.3"
fi
command -v java >/dev/null 2>&1 || { echo "spark-check: no java (give --install)" >&2; exit 1; }
python3 -c "import pyspark" 2>/dev/null || { echo "spark-check: no pyspark (give --install)" >&2; exit 1; }

sptdump=${1:-target/release/sptdump}
[ -x "$sptdump" ] || cargo build --release --quiet
java -version 2>&1 | head -n 1
python3 -c "import pyspark; print('pyspark', pyspark.__version__)"
exec python3 scripts/engines.py --engine spark "$sptdump"
