#!/usr/bin/python3
"""Turn the Planetoid files of a citation graph (ind.<name>.x, .y, .tx, .ty,
.allx, .ally, .graph, .test.index; Cora, CiteSeer, PubMed) into gnnrun's
input, DGL's chunked graph format, with the standard split as masks.

    examples/data/planetoid.py SRC_DIR OUT_DIR [--name cora]

OUT_DIR/metadata.json, edges/edges-0.npy (N x 2 int64, every undirected
edge once per direction, no self loops), node_data/_N/{feat (float32, the
bag-of-words rows as given), label (int64), train_mask, val_mask,
test_mask (bool)}-0.npy, and for link prediction edge_data/{train_edge,
val_edge, test_edge}-0.npy (bool per edge: 85/5/10% of the undirected
edges drawn with --seed, both directions of an edge alike). train_edge is
also the message-passing set: sampled with --prob train_edge (a bool array
weighs 1 or 0), no batch draws a validation or test edge, in either
direction, as a neighbour (see examples/link.py). The node split is the one of Yang et al. (2016) that
Kipf & Welling's GCN and PyG's Planetoid use: train = the labelled nodes of
ind.<name>.y (20 per class), val = the next 500 nodes, test = the 1000
nodes of ind.<name>.test.index. CiteSeer's test index skips 15 nodes that
have no features or labels; they get zero rows and are in no mask.

Needs numpy and scipy (Debian: python3-numpy, python3-scipy): the files are
Python 2 pickles of scipy sparse matrices.
"""

import argparse
import os
import pickle
import sys
import warnings

import numpy as np

import chunked


def load(src, name, part):
    path = os.path.join(src, "ind.%s.%s" % (name, part))
    if part == "test.index":
        with open(path) as f:
            return np.array([int(line) for line in f if line.strip()], dtype=np.int64)
    with open(path, "rb") as f, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # scipy.sparse.csr, as pickled
        return pickle.load(f, encoding="latin1")


def dense(m):
    return np.asarray(m.todense() if hasattr(m, "todense") else m)


def convert(src, out, name, seed):
    x, y, tx, ty, allx, ally = (load(src, name, p) for p in ("x", "y", "tx", "ty", "allx", "ally"))
    graph = load(src, name, "graph")
    test_idx = load(src, name, "test.index")
    test_sorted = np.sort(test_idx)
    tx, ty = dense(tx), dense(ty)
    if name == "citeseer":
        # Isolated test nodes missing from tx/ty: zero rows in their places.
        full = np.arange(test_sorted[0], test_sorted[-1] + 1)
        txe = np.zeros((len(full), tx.shape[1]), dtype=tx.dtype)
        tye = np.zeros((len(full), ty.shape[1]), dtype=ty.dtype)
        txe[test_sorted - test_sorted[0]] = tx
        tye[test_sorted - test_sorted[0]] = ty
        tx, ty = txe, tye
    feat = np.vstack([dense(allx), tx]).astype(np.float32)
    onehot = np.vstack([dense(ally), ty])
    # The test rows come in test.index order: put them at their node IDs.
    feat[test_idx] = feat[test_sorted]
    onehot[test_idx] = onehot[test_sorted]
    n = feat.shape[0]
    labels = onehot.argmax(1).astype(np.int64)
    known = onehot.sum(1) > 0
    train = np.zeros(n, bool)
    val = np.zeros(n, bool)
    test = np.zeros(n, bool)
    train[: len(dense(y))] = True
    val[len(dense(y)) : len(dense(y)) + 500] = True
    test[test_idx] = True
    for m in (train, val, test):
        m &= known
    pairs = set()
    for u, vs in graph.items():
        for v in vs:
            if u != v and u < n and v < n:
                pairs.add((u, v))
                pairs.add((v, u))
    edges = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    # The link split: per undirected edge, both directions alike.
    lo, hi = edges.min(1), edges.max(1)
    undirected, which = np.unique(lo * n + hi, return_inverse=True)
    u = np.random.default_rng(seed).random(len(undirected))[which]
    edge_masks = {"train_edge": u < 0.85, "val_edge": (u >= 0.85) & (u < 0.9), "test_edge": u >= 0.9}

    node_data = {"feat": feat, "label": labels, "train_mask": train, "val_mask": val, "test_mask": test}
    chunked.write(out, name, edges, node_data, edge_masks)
    print("%s: %d nodes, %d directed edges, %d features, %d classes, train/val/test %d/%d/%d -> %s"
          % (name, n, len(edges), feat.shape[1], onehot.shape[1], train.sum(), val.sum(), test.sum(), out))
    lonely = n - len(np.unique(edges[edge_masks["train_edge"], 1]))
    print("link split: train/val/test %d/%d/%d undirected edges; %d nodes have no training edge (no neighbours under --prob train_edge)"
          % tuple([len(np.unique(which[m])) for m in edge_masks.values()] + [lonely]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--name", help="dataset name in the file names (default: from ind.<name>.graph in SRC)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the link split")
    a = ap.parse_args()
    name = a.name
    if name is None:
        found = [f[4:-6] for f in os.listdir(a.src) if f.startswith("ind.") and f.endswith(".graph")]
        if len(found) != 1:
            sys.exit("planetoid.py: want one ind.<name>.graph in %s, found %s; give --name" % (a.src, found))
        name = found[0]
    convert(a.src, a.out, name, a.seed)


if __name__ == "__main__":
    main()
