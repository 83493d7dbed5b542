#!/usr/bin/python3
"""Link prediction on gnnrun's batches: a GraphSAGE encoder (examples/
graphsage.py's) and a dot-product decoder, in plain PyTorch, one trainer
per rank, gradients averaged over ranks, one loader per split; --device auto
trains on the rank's GPU where gnnrun train put one.

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
from graphsage import SAGE, evaluates, mean_gradients, same_start, features, finish, join, roc_auc


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


class Scores:
    """A set's scores on this rank: positives, negatives, and per positive
    its reciprocal rank among its own negatives and its first negative."""

    def __init__(self):
        self.parts = [[], [], [], []]

    def add(self, pos, neg):
        pos, neg = pos.detach().cpu().numpy(), neg.detach().cpu().numpy()
        k = len(neg) // max(len(pos), 1)
        self.parts[0].append(pos)
        self.parts[1].append(neg)
        if k:
            per = neg.reshape(len(pos), k)
            self.parts[2].append(1.0 / (1 + (per >= pos[:, None]).sum(1)))
            self.parts[3].append(per[:, 0])

    def metrics(self, name):
        """AUC, MRR and HeaRT's MRR over every rank's scores."""
        mine = tuple(np.concatenate(v) if v else np.zeros(0) for v in self.parts)
        parts = [None] * dist.get_world_size()
        dist.all_gather_object(parts, mine)
        pos, neg, rr, neg1 = (np.concatenate([p[i] for p in parts]) for i in range(4))
        return {name + "_auc": roc_auc(np.concatenate([pos, neg]), np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])),
                name + "_mrr": float(rr.mean()) if len(rr) else float("nan"),
                name + "_mrr_set": set_mrr(pos, neg1) if len(neg1) else float("nan")}


@torch.no_grad()
def evaluate(model, loader, feat_norm, name):
    model.eval()
    got = Scores()
    for b in loader:
        tb = b.torch()
        h = model(tb.blocks, features(tb, feat_norm))
        got.add(scores(h, tb.pos), scores(h, tb.neg))
    return got.metrics(name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--dropout", type=float, default=0.2)
    ap.add_argument("--feat-norm", choices=["none", "row"], default="none")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="auto", help="auto (gnnrun train's choice: the rank's GPU, else cpu), cpu, cuda or cuda:N")
    ap.add_argument("--mirror", action="store_true", help="on cpu, keep the features in a persistent tensor updated per batch, as on a GPU")
    a = ap.parse_args()

    hello = gnnrun.hello()
    device = join(a.seed, hello.get("device", "cpu") if a.device == "auto" else a.device)
    model = same_start(SAGE(hello["feature_shape"][0], a.hidden, a.hidden, len(hello["fanouts"]), a.dropout, "layer").to(device))
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    train_loader = gnnrun.loader("train", device=device, mirror=a.mirror)
    eval_loaders = {e["name"]: gnnrun.loader(e["name"], device=device, mirror=a.mirror) for e in hello["eval"]}
    rows = {}
    t0 = time.perf_counter()
    last = hello["epochs"] - 1
    for epoch in range(hello["epochs"]):
        model.train()
        total, steps = torch.zeros((), device=device), 0  # summed on the device: no sync a batch
        seen = Scores()  # the last epoch's training scores, reported without evaluation sets
        for b in train_loader:
            tb = b.torch()
            h = model(tb.blocks, features(tb, a.feat_norm))
            pos, neg = scores(h, tb.pos), scores(h, tb.neg)
            loss = F.binary_cross_entropy_with_logits(torch.cat([pos, neg]), torch.cat([torch.ones_like(pos), torch.zeros_like(neg)]))
            opt.zero_grad()
            loss.backward()
            mean_gradients(model)
            opt.step()
            total, steps = total + loss.detach(), steps + 1
            if not eval_loaders and epoch == last:
                seen.add(pos, neg)
        gnnrun.log(loss=float(total) / max(steps, 1))  # in gnnrun's line of the epoch
        if not eval_loaders and epoch == last:
            rows[epoch] = seen.metrics("train")
        if evaluates(hello, epoch):
            rows[epoch] = {}
            for name, loader in eval_loaders.items():
                rows[epoch].update(evaluate(model, loader, a.feat_norm, name))
            gnnrun.log(**rows[epoch])
    seconds = time.perf_counter() - t0
    finish(rows, "val_mrr" if eval_loaders else "train_mrr", hello["epochs"], seconds)


if __name__ == "__main__":
    main()
