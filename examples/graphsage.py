#!/usr/bin/python3
"""GraphSAGE (mean aggregator) node classification on gnnrun's batches, in
plain PyTorch, one trainer per rank, gradients all-reduced across ranks.

    gnnrun train PARTDIR --fanouts 10,10 --batch-size 32 --epochs 100 \\
        -- /usr/bin/python3 examples/graphsage.py [--hidden 128] [--lr 0.01] ...

--device auto (the default) trains where gnnrun train put the rank's
trainer: its GPU when it has one (NCCL among the trainers; the features
arrive in a persistent device tensor that each batch's update keeps
current, copying only the rows gnnrun copied), else the CPU (gloo).
--device cpu --mirror keeps that persistent tensor on the CPU: the GPU's
code path, for checks.

Each epoch trains on the rank's training batches, then evaluates on the
evaluation batches gnnrun sends after it (val, test). The result is the
test score at the epoch of the best validation score (accuracy; ROC-AUC too
for two classes), printed by rank 0 as one JSON line:
{"val_acc": ..., "test_acc": ..., "epochs": ..., "seconds": ...,
"data_wait_fraction": ...} (the share of the trainers' time spent waiting
for batches; client_us_per_batch: the client's time turning a message into
views).
"""

import argparse
import json
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import gnnrun


class SAGEConv(nn.Module):
    """h_dst' = W_self h_dst + W_neigh mean(h_src over dst's sampled in-edges)."""

    def __init__(self, din, dout):
        super().__init__()
        self.self_lin = nn.Linear(din, dout)
        self.neigh_lin = nn.Linear(din, dout, bias=False)

    def forward(self, h_src, h_dst, block):
        agg = torch.zeros(block.num_dst, h_src.shape[1], dtype=h_src.dtype, device=h_src.device)
        agg.index_add_(0, block.dst, h_src[block.src])
        deg = torch.bincount(block.dst, minlength=block.num_dst).clamp(min=1).unsqueeze(1)
        return self.self_lin(h_dst) + self.neigh_lin(agg / deg)


class SAGE(nn.Module):
    def __init__(self, din, hidden, classes, layers, dropout, norm):
        super().__init__()
        dims = [din] + [hidden] * (layers - 1) + [classes]
        self.convs = nn.ModuleList(SAGEConv(a, b) for a, b in zip(dims, dims[1:]))
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) if norm == "layer" else nn.Identity() for _ in dims[2:])
        self.dropout = dropout

    def forward(self, blocks, x):
        # As in DGL and PyG: each block's destinations are the first
        # num_dst rows of its input, block 0's included.
        h = x
        for l, (conv, blk) in enumerate(zip(self.convs, blocks)):
            if l > 0:
                h = F.dropout(F.relu(self.norms[l - 1](h)), self.dropout, self.training)
            h = conv(h, h[: blk.num_dst], blk)
        return h


def roc_auc(scores, labels):
    """Area under the ROC curve (the Mann-Whitney statistic, ties halved)."""
    order = np.argsort(scores, kind="mergesort")
    s, y = scores[order], labels[order]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i : j + 1] = (i + j) / 2 + 1
        i = j + 1
    pos = y == 1
    npos, nneg = pos.sum(), (~pos).sum()
    if npos == 0 or nneg == 0:
        return float("nan")
    return float((ranks[pos].sum() - npos * (npos + 1) / 2) / (npos * nneg))


def features(tb, norm):
    x = tb.x  # read-only: the device cache's rows
    if norm == "row":
        x = x / x.sum(1, keepdim=True).clamp(min=1e-12)
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--feat-norm", choices=["none", "row"], default="none", help="row: divide each feature row by its sum")
    ap.add_argument("--norm", choices=["none", "layer"], default="none", help="layer: LayerNorm on the hidden layers")
    ap.add_argument("--seed", type=int, default=0, help="model initialisation")
    ap.add_argument("--device", default="auto", help="auto (gnnrun train's choice: the rank's GPU, else cpu), cpu, cuda or cuda:N")
    ap.add_argument("--mirror", action="store_true", help="on cpu, keep the features in a persistent tensor updated per batch, as on a GPU")
    a = ap.parse_args()

    hello = gnnrun.hello()
    device = hello.get("device", "cpu") if a.device == "auto" else a.device
    world = join(a.seed, device)
    classes = hello["classes"]
    layers = len(hello["fanouts"])
    model = same_start(SAGE(hello["feature_shape"][0], a.hidden, classes, layers, a.dropout, a.norm).to(device))
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    evals = {}  # epoch -> {set: (correct, total, scores, labels)}
    t0 = time.perf_counter()
    loader = gnnrun.loader(device=device, mirror=a.mirror)
    for epoch in range(hello["epochs"]):
        for b in loader:  # the epoch's training batches, then its evaluation batches
            tb = b.torch()
            x = features(tb, a.feat_norm)
            if b.kind == "train":
                model.train()
                opt.zero_grad()
                if tb.num_seeds:  # ranks past the epoch's last seeds get empty batches
                    F.cross_entropy(model(tb.blocks, x), tb.y.long()).backward()
                mean_gradients(model, world)
                opt.step()
                continue
            model.eval()
            ev = evals.setdefault(epoch, {}).setdefault(b.kind, [0, 0, [], []])
            if tb.num_seeds:
                with torch.no_grad():
                    out = model(tb.blocks, x)
                ev[0] += int((out.argmax(1) == tb.y.long()).sum())
                ev[1] += tb.num_seeds
                if classes == 2:
                    ev[2].append(torch.softmax(out, 1)[:, 1].cpu().numpy())
                    ev[3].append(b.y.copy())
    seconds = time.perf_counter() - t0
    # Scores per epoch and set, over all ranks.
    rows = {}
    for e in sorted(evals):
        row = {}
        for name, (c, n, sc, lb) in evals[e].items():
            t = torch.tensor([c, n], dtype=torch.float64, device=DEVICE)
            dist.all_reduce(t)
            row[name + "_acc"] = float(t[0] / t[1])
            if classes == 2:
                parts = [None] * world
                dist.all_gather_object(parts, (np.concatenate(sc) if sc else np.zeros(0), np.concatenate(lb) if lb else np.zeros(0)))
                row[name + "_auc"] = roc_auc(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
        rows[e] = row
    finish(rows, "val_auc" if classes == 2 else "val_acc", hello["epochs"], seconds)


DEVICE = torch.device("cpu")  # the trainer's, set by join


def join(seed, device="cpu"):
    """Joins the trainers' process group (from gnnrun's variables: NCCL
    on GPUs, gloo on the CPU), seeds the model's initialisation, shares
    the cores among the host's trainers, and returns the world size."""
    global DEVICE
    DEVICE = torch.device(device)
    if DEVICE.type == "cuda":
        torch.cuda.set_device(DEVICE)
    dist.init_process_group("nccl" if DEVICE.type == "cuda" else "gloo")
    torch.manual_seed(seed)
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(os.environ.get("LOCAL_WORLD_SIZE", "1"))))
    return dist.get_world_size()


def same_start(model):
    """Gives every rank rank 0's initial weights; returns the model."""
    for p in model.parameters():
        dist.broadcast(p.data, 0)
    return model


def mean_gradients(model, world):
    """Synchronous SGD: every rank's gradient becomes the mean over ranks
    (a rank whose batch was empty contributes zeros, so all ranks take part
    in every all-reduce)."""
    for p in model.parameters():
        g = p.grad if p.grad is not None else torch.zeros_like(p)
        dist.all_reduce(g)
        p.grad = g / world


def finish(rows, key, epochs, seconds):
    """Prints, on rank 0, the result line: the scores of the epoch whose
    key is best (rows: epoch -> {score name: value}), the epochs, the
    seconds, the share of the trainers' time spent waiting for batches
    and the client's time per batch; then leaves the process group."""
    best = None
    for e, row in rows.items():
        if best is None or row.get(key, -1) > best[1].get(key, -1):
            best = (e, row)
    st = gnnrun.stats()
    sums = torch.tensor([st["wait_s"], seconds, st["handoff_s"], st["batches"], st.get("bytes_copied", 0)],
                        dtype=torch.float64, device=DEVICE)
    dist.all_reduce(sums)
    sums = sums.cpu()
    result = {"epochs": epochs, "seconds": round(seconds, 3), "data_wait_fraction": round(float(sums[0] / sums[1]), 4),
              "client_us_per_batch": round(float(1e6 * sums[2] / max(sums[3], 1)), 1), "ranks": dist.get_world_size()}
    if "bytes_copied" in st:
        result["bytes_copied"] = int(sums[4])  # rows the trainers copied into their persistent tensors
    if best is not None:
        result.update({k: round(v, 4) for k, v in best[1].items()})
        result["best_epoch"] = best[0]
    if dist.get_rank() == 0:
        print(json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
