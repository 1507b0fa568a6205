"""One-off (issue 38): rbmlab's AIS interval against rbms's estimates -> numbers.json.

    python summarise.py --rbmlab rbmlab_s0.json --rbms rbms.json --times times.json --out numbers.json

``rbmlab_*.json``: `rbmlab evaluate ... out=` files, the first the primary (strongest) run whose
±3σ interval the verdict uses; ``rbms.json``: rbms_log_z.py's output;
``times.json``: {"rbmlab_<i>": wall seconds, ...} as /usr/bin/time measured them.
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rbmlab", nargs="+", required=True)
    ap.add_argument("--rbms", required=True)
    ap.add_argument("--times", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    with open(args.times) as f:
        times = json.load(f)
    ours = []
    for path in args.rbmlab:
        with open(path) as f:
            m = json.load(f)
        ours.append(
            {
                "file": path,
                "log_z": m["log_z"],
                "log_z_lower": m["log_z_lower"],
                "log_z_upper": m["log_z_upper"],
                "seconds": times.get(path),
            }
        )
    with open(args.rbms) as f:
        theirs = json.load(f)
    verdicts = [
        {
            "rbmlab": o["file"],
            "rbms_seed": r["seed"],
            "rbms_log_z": r["log_z"],
            "inside": o["log_z_lower"] <= r["log_z"] <= o["log_z_upper"],
        }
        for o in ours
        for r in theirs["runs"]
    ]
    primary = [v for v in verdicts if v["rbmlab"] == ours[0]["file"]]
    out = {
        "rbmlab": ours,
        "rbms": theirs,
        "rbms_inside_rbmlab_interval": verdicts,
        "verdict_primary_all_inside": all(v["inside"] for v in primary),
        "pairs_inside": f"{sum(v['inside'] for v in verdicts)} of {len(verdicts)}",
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
    print(json.dumps(verdicts, indent=1))
    print("primary: all inside:", out["verdict_primary_all_inside"], "; pairs inside:", out["pairs_inside"])


if __name__ == "__main__":
    main()
