#!/usr/bin/env python3
"""python-igraph's PRPACK personalised PageRank on a graph written by perf_ppr_scale (a reference).

Usage: ppr_igraph.py EDGES.u32 QUERIES.json NODES
EDGES.u32: little-endian u32 pairs (a, b), one undirected edge each; QUERIES.json: a list of
queries, each a list of [node, weight]. Prints one line per query with its top-100 node ids
(scores >= 1e-5, best first) and a last line `ms_per_query X load L`.
"""
import json
import os
import sys
import time

import igraph
import numpy as np


def main():
    edges_path, queries_path, nodes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pairs = np.fromfile(edges_path, dtype="<u4").reshape(-1, 2)
    t = time.perf_counter()
    g = igraph.Graph(n=nodes, edges=pairs.tolist(), directed=False)
    build = time.perf_counter() - t
    queries = json.load(open(queries_path))
    times = []
    for q in queries:
        reset = np.zeros(nodes)
        for node, w in q:
            reset[node] += w
        t = time.perf_counter()
        pr = g.personalized_pagerank(
            directed=False, damping=0.85, reset=reset.tolist(), implementation="prpack"
        )
        times.append(time.perf_counter() - t)
        pr = np.asarray(pr)
        top = np.argsort(-pr, kind="stable")[:100]
        top = [int(v) for v in top if pr[v] >= 1e-5]
        print("top " + " ".join(map(str, top)))
    load = os.getloadavg()[0]
    print(f"graph_build_s {build:.2f} igraph {igraph.__version__}")
    print(f"ms_per_query {1000 * sum(times) / len(times):.3f} load {load:.2f}")


if __name__ == "__main__":
    main()
