"""Issue 56, item 6: a header line (rbmlab.report.header) on a committed figure drawn before
figures carried one, without drawing it again (its run directories are not in the repository).

The line is computed from the committed runs CSVs of the runs the figure shows (the rows named
below, with the header's config keys each experiment's reduced tier composes, as ``rbmlab report
rerender`` supplies them), written as the first line of its ``.md`` and drawn as a strip above its
``.png``; the figure's pixels are otherwise the committed ones. Run from the repository root:
``python scripts/add_header_line.py``.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from rbmlab.experiment.spec import load_spec
from rbmlab.experiment.sweep import _job_constants, _runs_of
from rbmlab.report.header import report_header
from rbmlab.report.tidy import read_committed_csv

RESULTS = Path("results")
ALL = "*"  # every row of the runs CSV
# figure stem -> [(experiment whose committed runs it shows, the run_dir rows shown)]
SHOWN = {
    "crbm_bp/figure-2_reduced": [
        ("crbm_bp/table-1", {"mle_bp/0": "`task.rate` == 0.1"}),
        ("crbm_bp/table-2", {"mle_bp/0": "`task.size` == 8"}),
    ],
    # drawn from the N_h = 500 binary run of tap/figure-3 (the figure's own text says so)
    "tap/figure-12_reduced": [("tap/figure-3", {"binary/3": None})],
    # the galleries' rows name their runs: seed 0 of each variant
    "pmp/figure-4-zeros_reduced": [
        ("pmp/figure-1c-train", {"pmp/0": None, "gibbs_reset/0": None, "gibbs/0": None})
    ],
    "pmp/figure-7-samples_reduced": [
        ("pmp/figure-7", {"pmp/0": None, "gibbs_reset/0": None, "pcd100/0": None, "pcd1/0": None})
    ],
    # tap Figs. 4, 5, 7 and 12 over tap/figure-3's runs: binary/0-3 are N_h = 25, 50, 100, 500;
    # real/0-1 N_h = 100, 500; cbcl/0 N_h = 256 (each figure's text names the sizes it shows)
    "tap/figure-4-binary_reduced": [
        ("tap/figure-3", {"binary/0": None, "binary/1": None, "binary/2": None, "binary/3": None})
    ],
    "tap/figure-4-cbcl_reduced": [("tap/figure-3", {"cbcl/0": None})],
    "tap/figure-4-real_reduced": [("tap/figure-3", {"real/0": None, "real/1": None})],
    "tap/figure-5-binary_reduced": [("tap/figure-3", {"binary/2": None})],
    "tap/figure-5-cbcl_reduced": [("tap/figure-3", {"cbcl/0": None})],
    "tap/figure-7-binary_reduced": [("tap/figure-3", {"binary/2": None})],
    "tap/figure-7-cbcl_reduced": [("tap/figure-3", {"cbcl/0": None})],
    "tap/figure-7-real_reduced": [("tap/figure-3", {"real/1": None})],
    # over tap/figure-3-seeds's runs: binary/3-5 are N_h = 50, binary/6-8 N_h = 100, seeds 0-2
    "tap/figure-5-binary-seeds_reduced": [
        ("tap/figure-3-seeds", {"binary/6": None, "binary/7": None, "binary/8": None})
    ],
    "tap/figure-5-binary-seeds-h50_reduced": [
        ("tap/figure-3-seeds", {"binary/3": None, "binary/4": None, "binary/5": None})
    ],
    "tap/figure-12-seeds_reduced": [
        ("tap/figure-3-seeds", {"binary/6": None, "binary/7": None, "binary/8": None})
    ],
    "tap/figure-12-seeds-h50_reduced": [
        ("tap/figure-3-seeds", {"binary/3": None, "binary/4": None, "binary/5": None})
    ],
    # the final metrics of every denoising run (each N_h and flip probability)
    "tap/figure-8-mcc_reduced": [("tap/figure-8-denoising", {ALL: None})],
    "tap/figure-8-mcc-seeds_reduced": [("tap/figure-8-denoising-seeds", {ALL: None})],
}


def shown_runs(stem: str) -> pd.DataFrame:
    frames = []
    for name, rows in SHOWN[stem]:
        runs = read_committed_csv(RESULTS / name.split("/")[0] / f"{name.split('/')[1]}_reduced_runs.csv")
        constants = _job_constants(_runs_of(name, load_spec(name)), "reduced", [])
        for run_dir, query in rows.items():
            picked = runs if run_dir == ALL else runs[runs["run_dir"] == run_dir]
            picked = picked.query(query) if query else picked
            assert len(picked) == 1 or (run_dir == ALL and len(picked)), (stem, name, run_dir, len(picked))
            frames.append(
                picked.assign(
                    **{k: v for k, v in constants.items() if k not in picked},
                    run_dir=f"{name}/" + picked["run_dir"],
                )
            )
    return pd.concat(frames, ignore_index=True)


def stamp(png: Path, header: str) -> None:
    """``header`` drawn as a strip of text above the committed image (same width, 110 dpi)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt

    image = mpimg.imread(png)
    height, width = image.shape[:2]
    strip = 40
    dpi = 110
    fig = plt.figure(figsize=(width / dpi, (height + strip) / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, height / (height + strip)))
    ax.imshow(image, interpolation="none")
    ax.set_axis_off()
    fig.text(0.5, 1 - (strip / 2) / (height + strip), header, ha="center", va="center", fontsize=8, wrap=True)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi)
    plt.close(fig)
    png.write_bytes(out.getvalue())


def main() -> None:
    for stem in SHOWN:
        header = report_header(shown_runs(stem), "reduced")
        md = RESULTS / f"{stem}.md"
        text = md.read_text()
        if text.startswith("_"):
            print(f"{md}: has a header line already")
            continue
        md.write_text(f"_{header}_\n\n{text}")
        stamp(RESULTS / f"{stem}.png", header)
        print(f"{stem}: {header}")


if __name__ == "__main__":
    main()
