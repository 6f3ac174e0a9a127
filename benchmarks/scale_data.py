"""Record the heavy runs notebook 10 plots, so the notebook stays within its time budget.

    python -m benchmarks.scale_data          # writes notebooks/data/scale_fanout.json, scale_storm.json
    python -m benchmarks.scale_data storm    # only scale_storm.json

- fan-out: for 100, 250, 500 and 1,000 hollow nodes, 3 pods per node rolled out by
  Deployments; the watch events (and bytes) the watch cache sent per watcher class during the
  rollout's first 60 virtual seconds, and during the next 60 s of quiet.
- storm: 1,000 hollow nodes with 3 pods each; every API server restarts; LISTs per virtual
  second for 120 s, without and with API Priority and Fairness (bench_scale.APF_LIMIT seats).

Deterministic: the same code gives the same numbers (seed 0); only the wall seconds differ.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_scale import APF_LIMIT, apply_pods, has_apf, storm

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "data"
SIZES = (100, 250, 500, 1000)
PODS_PER_NODE = 3


def fanout(nodes: int) -> dict[str, Any]:
    from kubelab.cluster import Cluster

    c = Cluster(nodes=nodes, hollow=True)
    c.trace.enabled = False
    c.run(5)
    wall = time.perf_counter()
    c.apiserver.fanout.reset()
    apply_pods(c, nodes * PODS_PER_NODE)
    c.run(60)
    rollout = c.apiserver.fanout.totals()
    c.apiserver.fanout.reset()
    c.run(60)
    quiet = c.apiserver.fanout.totals()
    return {"nodes": nodes, "pods": nodes * PODS_PER_NODE, "rollout": rollout, "quiet": quiet,
            "wall": time.perf_counter() - wall}


def main(argv: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    if argv != ["storm"]:
        record_fanout()
    storms = [storm(1000, apf, PODS_PER_NODE) for apf in ([False, True] if has_apf() else [False])]
    (OUT / "scale_storm.json").write_text(json.dumps(
        {"command": "python -m benchmarks.scale_data storm", "nodes": 1000,
         "pods_per_node": PODS_PER_NODE, "apf_seats": APF_LIMIT, "runs": storms},
        indent=1, sort_keys=True) + "\n")
    return 0


def record_fanout() -> None:
    runs = []
    for n in SIZES:
        runs.append(fanout(n))
        print(f"fanout {n}: {runs[-1]['wall']:.0f} s", file=sys.stderr, flush=True)
    (OUT / "scale_fanout.json").write_text(json.dumps(
        {"command": "python -m benchmarks.scale_data", "pods_per_node": PODS_PER_NODE,
         "window": 60, "runs": runs}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
