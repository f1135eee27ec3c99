#!/usr/bin/env python3
"""Renders `tflite graph --format html` of a model in headless Chromium and checks the page.

Usage (not run by `swift test`; needs Debian's `chromium` package: `apt-get install -y chromium`):

    python3 Scripts/check_graph_html.py [MODEL.tflite] [--png OUT.png] [--tflite PATH/TO/tflite]

MODEL defaults to TestModels/mediapipe/mediapipe_face_detection_short_range.tflite; the tool to
`swift run tflite`. The script writes the page with `tflite graph MODEL --format html`, then loads a
copy with a checking script added (first in <head>, to catch every error, and last in <body>) into
`chromium --headless --dump-dom` and checks:
- no script error or `console.error` while the page loads;
- the page itself holds no <script> element (the page is script-free, so one would be injected text);
- for every subgraph (counted by `tflite inspect --json`), one section whose SVG has one box per
  operator, graph input and graph output, each with a non-empty rendered size inside its SVG;
- every box of a control-flow operator links to a subgraph section that exists;
- the layout: no two edge labels overlap, no label lies on a box, and no edge passes through a box
  other than the two it joins.
Then it renders the original page to a PNG (`--png`, default graph.png in the current directory).
Exits 1 with the reasons when a check fails.
"""
import argparse
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHECK_HEAD = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message || e)));
const __consoleError = console.error;
console.error = (...args) => { window.__errors.push(args.join(' ')); __consoleError(...args); };
</script>"""

CHECK_BODY = """<script>
(() => {
  const report = { errors: window.__errors, scripts: document.scripts.length - 2, subgraphs: {}, badBoxes: [], badLinks: [], labelOverlaps: [], labelsOnBoxes: [], edgesThroughBoxes: [] };
  for (const section of document.querySelectorAll('section[id^="subgraph-"]')) {
    const svg = section.querySelector('svg');
    const frame = svg.getBoundingClientRect();
    const boxes = section.querySelectorAll('g.node');
    const counts = { op: 0, input: 0, output: 0 };
    for (const box of boxes) {
      const kind = box.id.replace(/^sg\\d+-/, '').split('-')[0];
      counts[kind] = (counts[kind] || 0) + 1;
      const rect = box.querySelector('rect').getBoundingClientRect();
      const text = box.querySelector('text');
      const inside = rect.left >= frame.left - 1 && rect.right <= frame.right + 1 && rect.top >= frame.top - 1 && rect.bottom <= frame.bottom + 1;
      if (!(rect.width > 0 && rect.height > 0 && inside && text && text.getComputedTextLength() > 0)) report.badBoxes.push(box.id);
      const link = box.querySelector('a');
      if (link && !document.getElementById(link.getAttribute('href').slice(1))) report.badLinks.push(box.id);
    }
    report.subgraphs[section.id.slice('subgraph-'.length)] = counts;
    // Layout: edge labels that overlap each other or a box, and edges that pass through a box
    // other than their two ends (sampled every 3 px, boxes shrunk by 2 px).
    const boxRects = [...boxes].map(box => ({ id: box.id, r: box.querySelector('rect').getBBox() }));
    const labels = [...section.querySelectorAll('g.edge text')].map(text => text.getBBox());
    const overlaps = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
    for (let i = 0; i < labels.length; i++) {
      for (let j = i + 1; j < labels.length; j++) if (overlaps(labels[i], labels[j])) report.labelOverlaps.push(section.id);
      for (const box of boxRects) if (overlaps(labels[i], box.r)) report.labelsOnBoxes.push(section.id + ' ' + box.id);
    }
    for (const edge of section.querySelectorAll('g.edge')) {
      const path = edge.querySelector('path');
      const length = path.getTotalLength();
      const ends = [path.getPointAtLength(0), path.getPointAtLength(length)];
      const inside = (p, r) => p.x > r.x + 2 && p.x < r.x + r.width - 2 && p.y > r.y + 2 && p.y < r.y + r.height - 2;
      const touched = new Set();
      for (let at = 0; at <= length; at += 3) {
        const point = path.getPointAtLength(at);
        for (const box of boxRects) {
          const own = ends.some(end => end.x >= box.r.x - 1 && end.x <= box.r.x + box.r.width + 1 && end.y >= box.r.y - 1 && end.y <= box.r.y + box.r.height + 1);
          if (!own && inside(point, box.r)) touched.add(box.id);
        }
      }
      for (const id of touched) report.edgesThroughBoxes.push(section.id + ' tensor ' + edge.dataset.tensor + ' through ' + id);
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'tflite-check';
  pre.textContent = JSON.stringify(report);
  document.body.appendChild(pre);
})();
</script>"""


class CheckExtractor(html.parser.HTMLParser):
    """Collects the text of <pre id="tflite-check">."""

    def __init__(self):
        super().__init__()
        self.inside = False
        self.text = ""

    def handle_starttag(self, tag, attrs):
        self.inside = tag == "pre" and ("id", "tflite-check") in attrs

    def handle_endtag(self, tag):
        self.inside = False

    def handle_data(self, data):
        if self.inside:
            self.text += data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model", nargs="?", default=os.path.join(REPO, "TestModels/mediapipe/mediapipe_face_detection_short_range.tflite"))
    parser.add_argument("--png", default="graph.png")
    parser.add_argument("--tflite", help="path of a built tflite executable (default: swift run tflite)")
    arguments = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("chromium is not installed (apt-get install -y chromium)")
    tool = [arguments.tflite] if arguments.tflite else ["swift", "run", "--package-path", REPO, "tflite"]
    work = tempfile.mkdtemp()
    page = os.path.join(work, "graph.html")
    subprocess.run(tool + ["graph", arguments.model, "--format", "html", "--output", page], check=True)
    inspected = json.loads(subprocess.run(tool + ["inspect", arguments.model, "--json"], check=True, capture_output=True).stdout)
    with open(page, encoding="utf-8") as handle:
        text = handle.read()
    problems = []
    if re.search(r"<script", text, re.IGNORECASE):
        problems.append("the page holds a <script> element")
    checked = os.path.join(work, "checked.html")
    with open(checked, "w", encoding="utf-8") as handle:
        handle.write(text.replace("<head>", "<head>\n" + CHECK_HEAD, 1).replace("</body>", CHECK_BODY + "\n</body>", 1))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run([chromium, *flags, "--dump-dom", "file://" + checked], check=True, capture_output=True, text=True).stdout
    extractor = CheckExtractor()
    extractor.feed(dom)
    if not extractor.text:
        sys.exit("FAIL: the checking script did not run (no report in the DOM)")
    report = json.loads(extractor.text)
    problems += [f"script error: {error}" for error in report["errors"]]
    if report["scripts"] != 0:
        problems.append(f"{report['scripts']} script elements besides the checker")
    for subgraph in inspected["subgraphs"]:
        expected = {"op": len(subgraph["operators"]), "input": len(subgraph["inputs"]), "output": len(subgraph["outputs"])}
        drawn = report["subgraphs"].get(str(subgraph["index"]))
        if drawn != expected:
            problems.append(f"subgraph {subgraph['index']}: expected boxes {expected}, drawn {drawn}")
        else:
            print(f"ok: subgraph {subgraph['index']}: {expected['op']} operators, {expected['input']} inputs, {expected['output']} outputs drawn")
    problems += [f"box {box} is not drawn inside its SVG" for box in report["badBoxes"]]
    problems += [f"box {box} links to a missing subgraph" for box in report["badLinks"]]
    print(f"layout: {len(report['labelOverlaps'])} pairs of overlapping edge labels, "
          f"{len(report['labelsOnBoxes'])} labels over a box, {len(report['edgesThroughBoxes'])} edges through a box")
    problems += [f"edge {edge}" for edge in report["edgesThroughBoxes"]]
    problems += [f"edge label over box {box}" for box in report["labelsOnBoxes"]]
    if report["labelOverlaps"]:
        problems.append(f"{len(report['labelOverlaps'])} pairs of edge labels overlap")
    subprocess.run([chromium, *flags, "--screenshot=" + os.path.abspath(arguments.png), "--window-size=1400,2400", "file://" + page],
                   check=True, capture_output=True)
    print(f"screenshot: {arguments.png}")
    shutil.rmtree(work)
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems))
        sys.exit(1)
    print("ok: no script errors, every box drawn")


if __name__ == "__main__":
    main()
