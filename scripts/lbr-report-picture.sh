#!/usr/bin/env bash
# Redraws docs/lbr-report.png, the picture of the HTML report's LBR sections ("Calls" and
# "What SPGO will learn from LBR") on testdata/pe/lbr.spt with lbr.pdb and lbr.exe, as
# Chromium renders them. Run it after a change to the report or to lbr.spt.
#
# Needs Debian's chromium and Python's Pillow (pip install pillow); writes only
# docs/lbr-report.png and files under target/.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || { echo "lbr-report-picture: needs chromium (apt-get install chromium)" >&2; exit 2; }
python3 -c "import PIL" 2>/dev/null || { echo "lbr-report-picture: needs Pillow (pip install pillow)" >&2; exit 2; }

out=target/lbr-report
rm -rf "$out"
mkdir -p "$out"
cargo build --locked --release --quiet --bin sptdump
(cd testdata/pe && ../../target/release/sptdump /html:../../$out/report.html /quiet \
    /pdb:lbr.pdb /image:lbr.exe lbr.spt >/dev/null)

# The report with only the two sections shown: everything before "Calls" and from the
# annotated function on is hidden.
python3 - "$out/report.html" "$out/sections.html" <<'PY'
import sys
html = open(sys.argv[1], encoding="utf-8").read()
script = """<script>
(() => {
  const first = document.getElementById("calls"), last = document.getElementById("annotated");
  let shown = false;
  for (const node of [...first.parentElement.children]) {
    if (node === first) shown = true;
    if (node === last) shown = false;
    if (!shown && node.tagName !== "SCRIPT" && node.tagName !== "STYLE") node.style.display = "none";
  }
})();
</script>"""
open(sys.argv[2], "w", encoding="utf-8").write(html.replace("</body>", script + "</body>"))
PY

chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$PWD/$out/profile" --hide-scrollbars --window-size=1000,2400 \
    --screenshot="$PWD/$out/page.png" "file://$PWD/$out/sections.html" 2>/dev/null

# Cropped to what was drawn, with a margin.
python3 - "$out/page.png" docs/lbr-report.png <<'PY'
import sys
from PIL import Image, ImageChops
page = Image.open(sys.argv[1]).convert("RGB")
blank = Image.new("RGB", page.size, page.getpixel((page.width - 1, page.height - 1)))
left, top, right, bottom = ImageChops.difference(page, blank).getbbox()
margin = 20
page.crop((max(left - margin, 0), max(top - margin, 0), min(right + margin, page.width),
           min(bottom + margin, page.height))).save(sys.argv[2], optimize=True)
print(f"docs/lbr-report.png: {right - left + 2 * margin} x {bottom - top + 2 * margin}")
PY
