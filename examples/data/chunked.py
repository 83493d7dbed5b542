"""Writing gnnrun's input, DGL's chunked graph format, for the converters
here: one node type "_N", one edge type "_N:_E:_N", one chunk of each
array, NumPy files."""

import json
import os

import numpy as np


def write(out, name, edges, node_data, edge_data=None):
    """Writes OUT/metadata.json, edges/edges-0.npy (edges: N x 2 int64),
    node_data/_N/<name>-0.npy for each node array and edge_data/<name>-0.npy
    for each edge array (one row per edge, in the order of edges)."""
    os.makedirs(os.path.join(out, "edges"), exist_ok=True)
    np.save(os.path.join(out, "edges", "edges-0.npy"), np.asarray(edges, dtype=np.int64).reshape(-1, 2))

    def arrays(folder, data):
        os.makedirs(os.path.join(out, folder), exist_ok=True)
        meta = {}
        for k, a in data.items():
            rel = "%s/%s-0.npy" % (folder, k)
            np.save(os.path.join(out, rel), a)
            meta[k] = {"format": {"name": "numpy"}, "data": [rel]}
        return meta

    n = len(next(iter(node_data.values())))
    meta = {
        "graph_name": name,
        "node_type": ["_N"],
        "num_nodes_per_type": [n],
        "num_nodes_per_chunk": [[n]],
        "edge_type": ["_N:_E:_N"],
        "num_edges_per_type": [len(edges)],
        "num_edges_per_chunk": [[len(edges)]],
        "edges": {"_N:_E:_N": {"format": {"name": "numpy"}, "data": ["edges/edges-0.npy"]}},
        "node_data": {"_N": arrays("node_data/_N", node_data)},
    }
    if edge_data:
        meta["edge_data"] = {"_N:_E:_N": arrays("edge_data", edge_data)}
    with open(os.path.join(out, "metadata.json"), "w") as f:
        json.dump(meta, f, indent=2)
