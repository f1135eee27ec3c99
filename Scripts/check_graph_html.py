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
- every box of a control-flow operator links to a subgraph section that exists.
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
  const report = { errors: window.__errors, scripts: document.scripts.length - 2, subgraphs: {}, badBoxes: [], badLinks: [] };
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
