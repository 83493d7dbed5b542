#!/usr/bin/python3
"""Link prediction on gnnrun's batches: a GraphSAGE encoder (examples/
graphsage.py's) and a dot-product decoder, in plain PyTorch, one trainer
per rank, gradients all-reduced across ranks.

    gnnrun train PARTDIR --task link --edge-mask train_edge --prob train_edge \\
        --negatives 5 --exclude reverse --eval val_edge,test_edge \\
        --fanouts 10,10 --eval-fanouts -1,-1 --batch-size 256 --epochs 20 \\
        -- /usr/bin/python3 examples/link.py

The protocol (Kipf & Welling's GAE, PyG's RandomLinkSplit, the "existing
setting" of Li et al.'s HeaRT benchmark): messages pass over the training
edges only. --prob train_edge draws no validation or test edge (nor its
reverse) into any neighbourhood, of training batches or evaluation ones;
test evaluation does not use the validation edges either (PyG's
RandomLinkSplit would: ours is the stricter choice, HeaRT's); --exclude
reverse keeps each training batch's own positives out of its
neighbourhoods. Without --prob, held-out edges are sampled as neighbours
and the scores are optimistic.

Each batch's positive edges are scored against its negatives (binary cross
entropy). Each evaluation set (edge masks, every edge once) is scored by
ROC-AUC over all its positives and negatives, by MRR (the mean over
positives of 1 / the rank of the positive among it and its own
--negatives negatives, ties ranked below) and by mrr_set, HeaRT's MRR: each
positive ranked among the set's negatives, one per positive (as many
negatives as positives), ties counted half (OGB's evaluator). The result
is the test scores at the epoch of the best validation MRR, printed by
rank 0 as one JSON line: {"val_mrr", "val_auc", "val_mrr_set", "test_mrr",
"test_auc", "test_mrr_set", "epochs", "seconds", "data_wait_fraction"}.
Without evaluation sets, the scores are of the last epoch's training
batches.
"""

import argparse
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

import gnnrun
from graphsage import SAGE, features, finish, join, mean_gradients, roc_auc, same_start


def scores(h, pairs):
    return (h[pairs[0]] * h[pairs[1]]).sum(1)


def set_mrr(pos, neg):
    """The mean over pos of 1 / the rank of each among all of neg, ties
    counted half (OGB's MRR evaluator with one shared list of negatives)."""
    if len(pos) == 0:
        return float("nan")
    neg = np.sort(neg)
    above = len(neg) - np.searchsorted(neg, pos, "right")
    at_or_above = len(neg) - np.searchsorted(neg, pos, "left")
    return float(np.mean(1.0 / (1.0 + 0.5 * (above + at_or_above))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--dropout", type=float, default=0.2)
    ap.add_argument("--feat-norm", choices=["none", "row"], default="none")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    hello = gnnrun.hello()
    world = join(a.seed)
    negatives = None
    model = opt = None
    evals = {}  # (epoch, set) -> [positive scores, negative scores, reciprocal ranks, first negatives]
    t0 = time.perf_counter()
    last_epoch = -1
    for b in gnnrun.batches():
        tb = b.torch()
        if model is None:
            model = same_start(SAGE(b.x.shape[1], a.hidden, a.hidden, len(tb.blocks), a.dropout, "layer"))
            opt = torch.optim.Adam(model.parameters(), lr=a.lr)
        x = features(tb, a.feat_norm)
        train = b.kind == "train"
        model.train(train)
        with torch.set_grad_enabled(train):
            h = model(tb.blocks, x) if tb.num_seeds else None
        if train:
            opt.zero_grad()
            if h is not None:
                pos, neg = scores(h, tb.pos), scores(h, tb.neg)
                loss = F.binary_cross_entropy_with_logits(torch.cat([pos, neg]), torch.cat([torch.ones_like(pos), torch.zeros_like(neg)]))
                loss.backward()
            mean_gradients(model, world)
            opt.step()
            last_epoch = b.epoch
        if train and hello["eval"]:
            continue
        # Every rank keeps an entry for each (epoch, set), empty batches
        # and all, so that the gathers below match across ranks.
        ev = evals.setdefault((b.epoch, b.kind), [[], [], [], []])
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
            ev[3].append(neg.reshape(len(pos), k)[:, 0])
    seconds = time.perf_counter() - t0
    rows = {}
    for (epoch, kind) in sorted(evals):
        got = tuple(np.concatenate(v) if v else np.zeros(0) for v in evals[(epoch, kind)])
        parts = [None] * world
        dist.all_gather_object(parts, got)
        pos, neg, rr, neg1 = (np.concatenate([p[i] for p in parts]) for i in range(4))
        if kind == "train" and epoch != last_epoch:
            continue
        row = rows.setdefault(epoch, {})
        row[kind + "_auc"] = roc_auc(np.concatenate([pos, neg]), np.concatenate([np.ones(len(pos)), np.zeros(len(neg))]))
        row[kind + "_mrr"] = float(rr.mean()) if len(rr) else float("nan")
        row[kind + "_mrr_set"] = set_mrr(pos, neg1) if len(neg1) else float("nan")
    finish(rows, "val_mrr", last_epoch + 1, seconds)


if __name__ == "__main__":
    main()
