#!/usr/bin/env python3
"""Corpus metrics with networkx, scikit-learn and scikit-dimension: the reference perf_metrics
is timed against (same input, same definitions as ../shared/metric-fixtures/README.md).

Usage: metrics_reference.py EDGES.tsv EMB.f32 DIM
Pinned versions (the fixtures'): networkx 3.6.1, scikit-learn 1.9.1, scikit-dimension 0.5.0,
scipy 1.17.1; `just perf` installs them into a venv. Prints each stage's seconds, the values as
`key value` lines, and `total_s X`: the time of the values the fixtures define. scikit-dimension's
own TwoNN fit, a cross-check whose value no fixture holds, is timed apart (`cross_check`).
"""
import os
import sys
import time

import networkx as nx
import numpy as np
import skdim
from sklearn.neighbors import NearestNeighbors

STAGES = []


def timed(label, f):
    t = time.perf_counter()
    v = f()
    STAGES.append((label, time.perf_counter() - t))
    return v


def graph_metrics(path):
    def parse():
        rel, edges, nodes, self_loops, triples = set(), [], set(), 0, 0
        with open(path) as fh:
            for line in fh:
                h, r, t = line.rstrip("\n").split("\t")
                triples += 1
                rel.add(r)
                nodes.add(h)
                nodes.add(t)
                if h == t:
                    self_loops += 1
                else:
                    edges.append((h, t))
        return rel, edges, nodes, self_loops, triples

    rel, edges, nodes, self_loops, triples = timed("parse TSV", parse)
    g = nx.Graph()
    timed("graph build", lambda: (g.add_nodes_from(nodes), g.add_edges_from(edges)))
    n, e = g.number_of_nodes(), g.number_of_edges()
    comps = timed("connected components", lambda: [len(c) for c in nx.connected_components(g)])
    clustering = timed("average clustering", lambda: nx.average_clustering(g))
    max_degree = max(d for _, d in g.degree())
    return {
        "graph.relation_types": len(rel),
        "graph.triples": triples,
        "graph.self_loop_triples": self_loops,
        "graph.nodes": n,
        "graph.edges": e,
        "graph.density": 2 * e / (n * (n - 1)),
        "graph.average_degree": 2 * e / n,
        "graph.connected_components": len(comps),
        "graph.lcc_ratio": max(comps) / n,
        "graph.average_clustering": clustering,
        "graph.max_degree_centrality": max_degree / (n - 1),
    }


def embedding_metrics(path, dim):
    raw = np.fromfile(path, dtype="<f4").reshape(-1, dim).astype(np.float64)
    unit = timed("L2-normalise rows", lambda: raw / np.linalg.norm(raw, axis=1, keepdims=True))
    n = unit.shape[0]

    def knn():
        nn = NearestNeighbors(n_neighbors=11, algorithm="brute", metric="euclidean").fit(unit)
        return nn.kneighbors(unit)

    dist, idx = timed("kNN (k=10, brute, sklearn)", knn)
    out = {}

    def twonn():
        # sklearn's brute Euclidean distances come from |a|^2 + |b|^2 - 2ab, which leaves about
        # 1e-8 instead of 0 between exact duplicates; they would count as neighbours with a huge
        # mu. The candidates' distances are therefore taken again from row differences (exact 0
        # for a duplicate), as the fixtures define r1 and r2.
        r = np.empty((n, 2))
        for i in range(n):
            others = [j for j in idx[i] if j != i]
            d = np.sort(np.linalg.norm(unit[others] - unit[i], axis=1))
            r[i] = d[:2]
        keep = r[:, 0] > 0
        mu = r[keep, 1] / r[keep, 0]
        logmu = np.log(mu)
        out["embeddings.twonn_mle"] = keep.sum() / logmu.sum()
        # Facco et al.'s linear fit as the fixtures define it (smallest 90% of ln mu).
        m = len(logmu)
        n_keep = int(np.floor(0.9 * m))
        x = np.sort(logmu)[:n_keep]
        y = -np.log(1 - np.arange(1, n_keep + 1) / m)
        out["embeddings.twonn_linear_p90"] = (x * y).sum() / (x * x).sum()
        return keep

    keep = timed("TwoNN (r1, r2, mle, linear fit)", twonn)

    def hubness():
        counts = np.zeros(n)
        for i in range(n):
            for j in [j for j in idx[i] if j != i][:10]:
                counts[j] += 1
        m = counts - counts.mean()
        out["embeddings.hubness_skew_k10"] = (m**3).mean() / (m**2).mean() ** 1.5

    timed("hubness (N_10 skew)", hubness)

    def dispersion():
        c = raw.mean(axis=0)
        cos = unit @ (c / np.linalg.norm(c))
        d = 1 - cos
        out["embeddings.dispersion_mean"] = d.mean()
        out["embeddings.dispersion_std"] = d.std()

    timed("dispersion", dispersion)
    return out, unit[keep]


def main():
    edges, emb, dim = sys.argv[1], sys.argv[2], int(sys.argv[3])
    t = time.perf_counter()
    values = graph_metrics(edges)
    embedding_values, kept_rows = embedding_metrics(emb, dim)
    values.update(embedding_values)
    total = time.perf_counter() - t
    # scikit-dimension's own TwoNN on the same rows, a library cross-check only: its fit differs
    # in detail from the fixtures' definition (its value is printed apart) and it runs its own
    # kNN over every row, so it is timed outside the total the Rust pass is compared with.
    t = time.perf_counter()
    values["embeddings.twonn_skdim"] = skdim.id.TwoNN().fit(kept_rows).dimension_
    cross_check = time.perf_counter() - t
    for label, s in STAGES:
        print(f"stage {label:<32} {s:9.3f} s")
    print(f"cross_check skdim TwoNN fit {cross_check:.3f} s (outside total_s)")
    for k, v in sorted(values.items()):
        print(f"value {k} {v}")
    print(f"versions networkx {nx.__version__} skdim {getattr(skdim, '__version__', '?')} load {os.getloadavg()[0]:.2f}")
    print(f"total_s {total:.3f}")


if __name__ == "__main__":
    main()
