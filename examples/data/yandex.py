#!/usr/bin/python3
"""Turn a graph of the heterophilous-graphs benchmark (Platonov et al.,
2023; yandex-research/heterophilous-graphs: tolokers.npz, squirrel.npz,
roman_empire.npz, ...) into gnnrun's input, DGL's chunked graph format,
with one of its ten provided splits as masks.

    examples/data/yandex.py NPZ OUT_DIR [--split 0]

OUT_DIR/metadata.json, edges/edges-0.npy (N x 2 int64: each undirected
edge of the file in both directions, self loops dropped), and
node_data/_N/{feat (float32, node_features), label (int64, node_labels),
train_mask, val_mask, test_mask (bool, split --split of train_masks,
val_masks, test_masks)}-0.npy. Needs numpy only.
"""

import argparse
import os

import numpy as np

import chunked


def convert(path, out, split):
    z = np.load(path)
    feat = z["node_features"].astype(np.float32)
    labels = z["node_labels"].astype(np.int64)
    e = z["edges"].astype(np.int64)
    e = e[e[:, 0] != e[:, 1]]
    edges = np.unique(np.vstack([e, e[:, ::-1]]), axis=0)
    masks = {k: z[k + "s"][split].astype(bool) for k in ("train_mask", "val_mask", "test_mask")}
    n = len(labels)
    name = os.path.splitext(os.path.basename(path))[0]
    chunked.write(out, name, edges, dict(feat=feat, label=labels, **masks))
    print("%s: %d nodes, %d directed edges, %d features, %d classes, split %d: train/val/test %d/%d/%d -> %s"
          % (name, n, len(edges), feat.shape[1], labels.max() + 1, split,
             masks["train_mask"].sum(), masks["val_mask"].sum(), masks["test_mask"].sum(), out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("npz")
    ap.add_argument("out")
    ap.add_argument("--split", type=int, default=0, help="which of the ten provided splits (default 0, the first)")
    a = ap.parse_args()
    convert(a.npz, a.out, a.split)


if __name__ == "__main__":
    main()
