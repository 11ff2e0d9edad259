"""The Performance page's plots, drawn from the benches' measured figures.

    python -m bench.plots [--data bench/measured.json] [--out docs/assets/perf]

Reads ``bench/measured.json`` (the tables the benches printed, one section per
bench; update a section when its bench is run again) and writes one SVG per
plot into ``docs/assets/perf/`` (ignored by git: ``make docs`` and ``make bench``
draw them). Needs matplotlib only (the ``docs`` extra), none of the peers the
benches time. The SVGs are deterministic: no date, fixed ids.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "measured.json"
OUT = ROOT / "docs" / "assets" / "perf"


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.hashsalt": "wengert", "figure.dpi": 100,
                                "font.size": 9, "axes.spines.top": False,
                                "axes.spines.right": False})
    import matplotlib.pyplot as plt
    return plt


def _bars(plt, title, labels, series, ylabel, log=True, ref=None):
    """Grouped bars: one group per label, one bar per (name, values) in series."""
    import numpy as np
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    width = 0.8 / len(series)
    x = np.arange(len(labels))
    for k, (name, values) in enumerate(series):
        ax.bar(x + (k - (len(series) - 1) / 2) * width, values, width, label=name)
    if ref is not None:
        ax.axhline(ref, color="0.3", linewidth=0.8, linestyle="--")
    ax.set_xticks(x, labels, rotation=15, ha="right")
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return fig


def ratio_series(section, over=0):
    """Each column after ``over``, divided by column ``over`` (the plain call)."""
    names = section["columns"]
    rows = section["rows"]
    return [(names[c], [r[1 + c] / r[1 + over] for r in rows])
            for c in range(len(names)) if c != over]


def figures(data, plt):
    """(file name, figure) for each plot."""
    src = data["source_bench"]
    yield "source_bench.svg", _bars(
        plt, "Gradient cost over the plain function (python -m bench.source_bench)",
        [r[0] for r in src["rows"]], ratio_series(src), "time / plain call", ref=1.0)
    vi = data["vi_fft"]
    yield "vi_fft.svg", _bars(
        plt, "Gradient time, ELBO and FFT loss (bench.vi_bench, bench.fft_bench)",
        [r[0] for r in vi["rows"]],
        [(name, [r[1 + c] for r in vi["rows"]]) for c, name in enumerate(vi["columns"])],
        "milliseconds")
    nb = data["numba"]
    yield "numba.svg", _bars(
        plt, "Element loops at n = 100,000: the numba backend (bench.scaling_bench)",
        [r[0] for r in nb["rows"]],
        [(name, [r[1 + c] for r in nb["rows"]]) for c, name in enumerate(nb["columns"])],
        "seconds")
    ck = data["checkpoint"]
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for label, states, recomputed, mb, secs in ck["rows"]:
        ax.scatter(mb, secs, s=30)
        ax.annotate(f"{label} ({states} states)", (mb, secs), textcoords="offset points",
                    xytext=(6, 4), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("peak memory of the gradient (MB, log scale)")
    ax.set_ylabel("gradient time (s)")
    ax.set_title("Checkpointing a 100,000-step Euler integration (bench.checkpoint_bench)")
    fig.tight_layout()
    yield "checkpoint.svg", fig
    scaling = data.get("scaling")
    if scaling:
        fig, ax = plt.subplots(figsize=(8.5, 3.8))
        for program, engine, points in scaling["series"]:
            ns = [p[0] for p in points]
            ax.plot(ns, [p[1] for p in points], marker="o",
                    linestyle="-" if engine == "source" else ":", label=f"{program}, {engine}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (array length)")
        ax.set_ylabel("gradient time / plain call")
        ax.set_title("How the gradient's cost grows with n (bench.scaling_bench)")
        ax.legend(frameon=False, fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
        fig.tight_layout()
        yield "scaling.svg", fig


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    plt = _pyplot()
    data = json.loads(pathlib.Path(args.data).read_text())
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, fig in figures(data, plt):
        fig.savefig(out / name, format="svg", metadata={"Date": None})
        plt.close(fig)
        print(f"wrote {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
