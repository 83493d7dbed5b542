#!/usr/bin/python3
"""Link prediction on gnnrun's batches: a GraphSAGE encoder (examples/
graphsage.py's) and a dot-product decoder, in plain PyTorch, one trainer
per rank, gradients all-reduced across ranks.

    gnnrun train PARTDIR --task link --edge-mask train_edge --negatives 5 \\
        --exclude reverse --eval val_edge,test_edge --fanouts 10,10 \\
        --batch-size 256 --epochs 20 -- /usr/bin/python3 examples/link.py

Each batch's positive edges are scored against its negatives (binary cross
entropy). Each evaluation set (edge masks, every edge once) is scored by
ROC-AUC over all its positives and negatives and by MRR (the mean over
positives of 1 / the rank of the positive among it and its own negatives).
The result is the test scores at the epoch of the best validation MRR,
printed by rank 0 as one JSON line: {"val_mrr", "val_auc", "test_mrr",
"test_auc", "epochs", "seconds", "data_wait_fraction"}. Without evaluation
sets, the scores are of the last epoch's training batches.
"""

import argparse
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

import gnnrun
from graphsage import SAGE, features, finish, roc_auc


def scores(h, pairs):
    return (h[pairs[0]] * h[pairs[1]]).sum(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--dropout", type=float, default=0.2)
    ap.add_argument("--feat-norm", choices=["none", "row"], default="none")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    hello = gnnrun.hello()
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    torch.manual_seed(a.seed)
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(os.environ.get("LOCAL_WORLD_SIZE", "1"))))
    negatives = None
    model = opt = None
    evals = {}  # (epoch, set) -> [positive scores, negative scores, reciprocal ranks]
    t0 = time.perf_counter()
    last_epoch = -1
    for b in gnnrun.batches():
        tb = b.torch()
        if model is None:
            model = SAGE(b.x.shape[1], a.hidden, a.hidden, len(tb.blocks), a.dropout, "layer")
            for p in model.parameters():
                dist.broadcast(p.data, 0)
            opt = torch.optim.Adam(model.parameters(), lr=a.lr)
        x = features(b, a.feat_norm)
        train = b.kind == "train"
        model.train(train)
        with torch.set_grad_enabled(train):
            h = model(tb, x) if tb.num_seeds else None
        if train:
            opt.zero_grad()
            if h is not None:
                pos, neg = scores(h, tb.pos), scores(h, tb.neg)
                loss = F.binary_cross_entropy_with_logits(torch.cat([pos, neg]), torch.cat([torch.ones_like(pos), torch.zeros_like(neg)]))
                loss.backward()
            for p in model.parameters():
                g = p.grad if p.grad is not None else torch.zeros_like(p)
                dist.all_reduce(g)
                p.grad = g / world
            opt.step()
            last_epoch = b.epoch
        if train and hello["eval"]:
            continue
        # Every rank keeps an entry for each (epoch, set), empty batches
        # and all, so that the gathers below match across ranks.
        ev = evals.setdefault((b.epoch, b.kind), [[], [], []])
        if h is None:
            continue
        with torch.no_grad():
            pos, neg = scores(h, tb.pos).numpy(), scores(h, tb.neg).numpy()
        k = len(neg) // max(len(pos), 1)
        ev[0].append(pos)
        ev[1].append(neg)
        if k:
            rank = 1 + (neg.reshape(len(pos), k) >= pos[:, None]).sum(1)
            ev[2].append(1.0 / rank)
    seconds = time.perf_counter() - t0
    rows = {}
    for (epoch, kind) in sorted(evals):
        pos, neg, rr = (np.concatenate(v) if v else np.zeros(0) for v in evals[(epoch, kind)])
        parts = [None] * world
        dist.all_gather_object(parts, (pos, neg, rr))
        pos, neg, rr = (np.concatenate([p[i] for p in parts]) for i in range(3))
        if kind == "train" and epoch != last_epoch:
            continue
        row = rows.setdefault(epoch, {})
        row[kind + "_auc"] = roc_auc(np.concatenate([pos, neg]), np.concatenate([np.ones(len(pos)), np.zeros(len(neg))]))
        row[kind + "_mrr"] = float(rr.mean()) if len(rr) else float("nan")
    finish(rows, "val_mrr", last_epoch + 1, seconds)


if __name__ == "__main__":
    main()
