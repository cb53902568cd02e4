#!/usr/bin/env python3
"""An external router for ragrouter-bench: nearest class centroid on standardized features.

Speaks the JSON-lines protocol of docs/router-protocol.md on stdin/stdout, standard library only.
Run it with:  ragrouter route eval --external centroid='python3 examples/external_router.py' ...

With --staged it speaks version 2 when the harness offers it (probe features): it stops as soon as
the answers played so far agree (the `agree.em` signal) and otherwise plays the next stage; it
delivers the played arm with the best training correct rate.
"""

import json
import math
import sys

# A class no training row has gets this score: it ranks below every seen class.
UNSEEN = -1.0e18


class NearestCentroid:
    def __init__(self):
        self.mean = []
        self.scale = []
        self.centroids = []  # one per class, None when the class has no training row

    def fit(self, schema, rows):
        n_classes = len(schema["classes"])
        n_features = len(schema["feature_names"])
        n = len(rows)
        if n == 0:
            raise ValueError("fit: no training rows")
        self.mean = [sum(r["features"][j] for r in rows) / n for j in range(n_features)]
        self.scale = []
        for j in range(n_features):
            var = sum((r["features"][j] - self.mean[j]) ** 2 for r in rows) / n
            # Constant columns carry no information: scale 1 leaves them at 0 after centering.
            self.scale.append(math.sqrt(var) if var > 1e-12 else 1.0)
        sums = [[0.0] * n_features for _ in range(n_classes)]
        counts = [0] * n_classes
        for r in rows:
            label = r["label"]
            if not 0 <= label < n_classes:
                raise ValueError(f"fit: row {r['query_id']} has label {label} outside 0..{n_classes}")
            z = self.standardize(r["features"])
            counts[label] += 1
            for j in range(n_features):
                sums[label][j] += z[j]
        self.centroids = [
            [s / counts[c] for s in sums[c]] if counts[c] else None for c in range(n_classes)
        ]

    def standardize(self, x):
        return [(v - m) / s for v, m, s in zip(x, self.mean, self.scale)]

    def scores(self, row):
        z = self.standardize(row["features"])
        out = []
        for c in self.centroids:
            if c is None:
                out.append(UNSEEN)
            else:
                out.append(-sum((a - b) ** 2 for a, b in zip(z, c)))
        return out


class Staged:
    """Version 2: per stage, stop or continue; deliver the played arm with the best record."""

    def __init__(self):
        self.rate = {}

    def fit(self, schema, rows):
        arms = [c for c in schema["classes"] if c != "cannot-answer"]
        for k, arm in enumerate(arms):
            seen = [r["outcomes"][k] for r in rows if r["outcomes"][k] is not None]
            self.rate[arm] = sum(o["correct"] for o in seen) / len(seen) if seen else 0.0

    def decide(self, msg, row):
        agree = row["signals"].get("agree.em")
        if msg["last"] or agree == 1.0:
            return {"stop": max(msg["played"], key=lambda a: self.rate.get(a, 0.0))}
        return "continue"


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    model = NearestCentroid()
    staged = Staged() if "--staged" in sys.argv[1:] else None
    fitted = False
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
            kind = msg.get("type")
            if kind == "fit":
                model.fit(msg["schema"], msg["rows"])
                fitted = True
                if staged is not None and msg.get("version") == 2:
                    staged.fit(msg["schema"], msg["rows"])
                    reply({"ok": True, "version": 2})
                else:
                    reply({"ok": True})
            elif kind == "stage":
                if staged is None or not fitted:
                    raise ValueError("stage request without a version-2 fit")
                reply({"decisions": [staged.decide(msg, r) for r in msg["rows"]]})
            elif kind == "predict":
                if not fitted:
                    raise ValueError("predict before fit")
                reply({"scores": [model.scores(r) for r in msg["rows"]]})
            else:
                raise ValueError(f"unknown request type {kind!r}")
        except Exception as e:  # the protocol reports every failure as a reply
            print(f"external_router.py: {e}", file=sys.stderr)
            reply({"error": str(e)})


if __name__ == "__main__":
    main()
