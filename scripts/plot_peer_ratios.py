#!/usr/bin/env python3
"""Bar chart (SVG, no dependencies) of h2o.cpp's speed over llama.cpp's per
weight type and test, from the records scripts/bench_types_peer.sh writes:
medians over the rounds, one group of bars per type, the 1.0x line drawn.

  scripts/plot_peer_ratios.py OUT_DIR/types_1b.jsonl OUT.svg [--title TEXT]
"""
import argparse
import json
import statistics

COLORS = ["#3b6fb6", "#e08a2c", "#4a9a5b", "#b04a4a"]


def medians(records):
    """{(type, test): {engine: median tok/s}}"""
    groups = {}
    for r in records:
        groups.setdefault((r["type"], r["test"]), {}).setdefault(r["engine"], []).append(r["tps"])
    return {k: {e: statistics.median(v) for e, v in d.items()} for k, d in groups.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("records")
    ap.add_argument("svg")
    ap.add_argument("--title", default="h2o.cpp / llama.cpp, tokens per second (median)")
    args = ap.parse_args()
    records = [json.loads(line) for line in open(args.records) if line.strip()]
    med = medians(records)
    types = list(dict.fromkeys(r["type"] for r in records))
    tests = list(dict.fromkeys(r["test"] for r in records))
    engines = [e for e in dict.fromkeys(r["engine"] for r in records) if e != "llama.cpp"]
    series = [(e, t) for e in engines for t in tests]  # bars per type
    ratios = {(ty, e, t): med[(ty, t)][e] / med[(ty, t)]["llama.cpp"]
              for ty in types for e, t in series
              if e in med.get((ty, t), {}) and "llama.cpp" in med.get((ty, t), {})}
    top = max(2.0, max(ratios.values(), default=1.0) * 1.1)
    width, height, left, bottom, top_pad = 760, 380, 50, 40, 50
    plot_w, plot_h = width - left - 20, height - bottom - top_pad
    group_w = plot_w / max(1, len(types))
    bar_w = group_w * 0.8 / max(1, len(series))

    def y(v):
        return top_pad + plot_h * (1 - v / top)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{args.title}</text>']
    step = 0.5 if top <= 4 else 1.0
    v = 0.0
    while v <= top:
        out.append(f'<line x1="{left}" x2="{width - 20}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                   f'stroke="#ddd"/><text x="{left - 6}" y="{y(v) + 4:.1f}" '
                   f'text-anchor="end">{v:.1f}x</text>')
        v += step
    out.append(f'<line x1="{left}" x2="{width - 20}" y1="{y(1):.1f}" y2="{y(1):.1f}" '
               f'stroke="#000" stroke-dasharray="4 3"/>')
    for i, ty in enumerate(types):
        x0 = left + i * group_w + group_w * 0.1
        for j, (e, t) in enumerate(series):
            r = ratios.get((ty, e, t))
            if r is None:
                continue
            x = x0 + j * bar_w
            out.append(f'<rect x="{x:.1f}" y="{y(r):.1f}" width="{bar_w - 2:.1f}" '
                       f'height="{y(0) - y(r):.1f}" fill="{COLORS[j % len(COLORS)]}">'
                       f'<title>{ty} {t} {e}: {r:.2f}x</title></rect>')
        out.append(f'<text x="{x0 + group_w * 0.4:.1f}" y="{height - bottom + 16}" '
                   f'text-anchor="middle">{ty}</text>')
    for j, (e, t) in enumerate(series):
        lx = left + 10 + j * 150
        out.append(f'<rect x="{lx}" y="30" width="10" height="10" fill="{COLORS[j % len(COLORS)]}"/>'
                   f'<text x="{lx + 14}" y="39">{e} {t}</text>')
    out.append("</svg>")
    with open(args.svg, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
