#!/usr/bin/python3
"""examples/graphsage.py's model and loop, written as a PyG or DGL user
writes it (one loader per split, F.cross_entropy on every batch, no
guard), that also records what each rank's loaders gave, for checks under
`gnnrun train --ids`: per epoch the training batches' sizes, padding marks
and seeds (input IDs), and per evaluation the seeds of each set. It writes
$OUT_DIR/<rank>.json; rank 0 prints examples/graphsage.py's result line.
It takes graphsage.py's --hidden, --lr and --dropout; features are
row-normalised (graphsage.py's --feat-norm row)."""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples"))

import torch
import torch.nn.functional as F

import gnnrun
from graphsage import SAGE, evaluate, evaluates, features, finish, join, mean_gradients, same_start

ap = argparse.ArgumentParser()
ap.add_argument("--hidden", type=int, default=64)
ap.add_argument("--lr", type=float, default=0.005)
ap.add_argument("--dropout", type=float, default=0.6)
a = ap.parse_args()
hello = gnnrun.hello()
device = join(0, "cpu")
model = same_start(SAGE(hello["feature_shape"][0], a.hidden, hello["classes"], len(hello["fanouts"]), a.dropout, "none"))
opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=5e-4)
train_loader = gnnrun.loader("train")
eval_loaders = {e["name"]: gnnrun.loader(e["name"]) for e in hello["eval"]}


class Recorder:
    """Wraps a loader: records each batch's seeds as it passes."""

    def __init__(self, loader, into):
        self.loader, self.into = loader, into

    def __iter__(self):
        for b in self.loader:
            self.into.append({"size": len(b.y), "padding": b.padding, "seeds": b.ids["seeds"].tolist()})
            yield b


record = {"train": [], "eval": [], "len_train": len(train_loader), "len_eval": {k: len(v) for k, v in eval_loaders.items()}}
rows = {}
t0 = time.perf_counter()
for epoch in range(hello["epochs"]):
    model.train()
    got = []
    for b in Recorder(train_loader, got):
        tb = b.torch()
        loss = F.cross_entropy(model(tb.blocks, features(tb, "row")), tb.y.long())
        opt.zero_grad()
        loss.backward()
        mean_gradients(model)
        opt.step()
        if not torch.isfinite(loss):
            sys.exit("epoch %d: the loss is %s" % (epoch, float(loss)))
    record["train"].append(got)
    if evaluates(hello, epoch):
        rows[epoch] = {}
        for name, loader in eval_loaders.items():
            seen = []
            for k, v in evaluate(model, Recorder(loader, seen), hello["classes"], "row").items():
                rows[epoch][name + "_" + k] = v
            record["eval"].append({"epoch": epoch, "set": name, "batches": seen})
with open(os.path.join(os.environ["OUT_DIR"], os.environ["RANK"] + ".json"), "w") as f:
    json.dump(record, f)
finish(rows, "val_acc", hello["epochs"], time.perf_counter() - t0)
