#!/usr/bin/python3
"""GraphSAGE (mean aggregator) node classification on gnnrun's batches, in
plain PyTorch, one trainer per rank, gradients averaged across ranks.

    gnnrun train PARTDIR --fanouts 10,10 --batch-size 32 --epochs 100 \\
        -- /usr/bin/python3 examples/graphsage.py [--hidden 128] [--lr 0.01] ...

--device auto (the default) trains where gnnrun train put the rank's
trainer: its GPU when it has one (NCCL among the trainers; the features
arrive in a persistent device tensor that each batch's update keeps
current, copying only the rows gnnrun copied), else the CPU (gloo).
--device cpu --mirror keeps that persistent tensor on the CPU: the GPU's
code path, for checks.

It reads like a DGL or PyG script: one loader per split (gnnrun.loader(
"train"), gnnrun.loader("val"), ...), gradients averaged over ranks, and
a plain loss on every batch (gnnrun pads ranks with full batches, never
empty ones). Each epoch trains on the rank's training batches, then, when
gnnrun hands evaluation batches after it (--eval-every), evaluates on each
set; the epoch's mean loss and scores go to gnnrun's progress line
(gnnrun.log). With gnnrun train --checkpoint it saves its state when
gnnrun asks (gnnrun.checkpoint_due) and resumes from it (gnnrun.restore). The result is the
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


def evaluates(hello, epoch):
    """Whether gnnrun hands evaluation batches after epoch (gnnrun train
    --eval-every: after every that many epochs, and after the last)."""
    return bool(hello["eval"]) and ((epoch + 1) % hello["eval_every"] == 0 or epoch == hello["epochs"] - 1)


@torch.no_grad()
def evaluate(model, loader, classes, feat_norm):
    """Accuracy (and ROC-AUC for two classes) over every node of the
    loader's set: each rank scores its batches, the sums are all-reduced."""
    model.eval()
    correct = torch.zeros(2, dtype=torch.float64, device=DEVICE)
    scores, labels = [], []
    for b in loader:
        tb = b.torch()
        out = model(tb.blocks, features(tb, feat_norm))
        correct[0] += (out.argmax(1) == tb.y.long()).sum()
        correct[1] += len(tb.y)
        if classes == 2:
            scores.append(torch.softmax(out, 1)[:, 1].cpu().numpy())
            labels.append(b.y.copy())
    dist.all_reduce(correct)
    row = {"acc": float(correct[0] / correct[1])}
    if classes == 2:
        parts = [None] * dist.get_world_size()
        dist.all_gather_object(parts, (np.concatenate(scores or [np.zeros(0)]), np.concatenate(labels or [np.zeros(0)])))
        row["auc"] = roc_auc(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
    return row


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
    join(a.seed, hello.get("device", "cpu") if a.device == "auto" else a.device)
    classes = hello["classes"]
    model = same_start(SAGE(hello["feature_shape"][0], a.hidden, classes, len(hello["fanouts"]), a.dropout, a.norm).to(DEVICE))
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    # One loader per split, as in DGL and PyG scripts.
    train_loader = gnnrun.loader("train", device=DEVICE, mirror=a.mirror)
    eval_loaders = {e["name"]: gnnrun.loader(e["name"], device=DEVICE, mirror=a.mirror) for e in hello["eval"]}
    rows = {}  # epoch -> {"val_acc": ..., "test_acc": ...}
    state = gnnrun.restore()  # a resumed run (gnnrun train --checkpoint): where it stopped
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        rows = state["rows"]
        torch.set_rng_state(state["rng"])
    t0 = time.perf_counter()
    for epoch in range(hello["start_epoch"], hello["epochs"]):
        model.train()
        total, steps = torch.zeros((), device=DEVICE), 0  # summed on the device: no sync a batch
        for b in train_loader:
            tb = b.torch()
            loss = F.cross_entropy(model(tb.blocks, features(tb, a.feat_norm)), tb.y.long())
            opt.zero_grad()
            loss.backward()
            mean_gradients(model)
            opt.step()
            total, steps = total + loss.detach(), steps + 1
            if gnnrun.checkpoint_due():
                gnnrun.save({"model": model.state_dict(), "opt": opt.state_dict(), "rows": rows,
                             "rng": torch.get_rng_state()})
        gnnrun.log(loss=float(total) / max(steps, 1))  # in gnnrun's line of the epoch
        if evaluates(hello, epoch):
            rows[epoch] = {}
            for name, loader in eval_loaders.items():
                for k, v in evaluate(model, loader, classes, a.feat_norm).items():
                    rows[epoch][name + "_" + k] = v
            gnnrun.log(**rows[epoch])
    seconds = time.perf_counter() - t0
    finish(rows, "val_auc" if classes == 2 else "val_acc", hello["epochs"], seconds)


DEVICE = torch.device("cpu")  # the trainer's, set by join


def join(seed, device="cpu"):
    """Joins the trainers' process group (from gnnrun's variables: NCCL
    on GPUs, gloo on the CPU), seeds the model's initialisation, shares
    the cores among the host's trainers, and returns device as a
    torch.device (DEVICE)."""
    global DEVICE
    DEVICE = torch.device(device)
    if DEVICE.type == "cuda":
        torch.cuda.set_device(DEVICE)
    dist.init_process_group("nccl" if DEVICE.type == "cuda" else "gloo")
    torch.manual_seed(seed)
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(os.environ.get("LOCAL_WORLD_SIZE", "1"))))
    return DEVICE


def same_start(model):
    """Gives every rank rank 0's initial weights; returns the model."""
    for p in model.parameters():
        dist.broadcast(p.data, 0)
    return model


def mean_gradients(model):
    """Synchronous SGD: every rank's gradient becomes the mean over ranks
    (gnnrun gives every rank as many training batches, none empty, so
    every rank takes part in every step). What DistributedDataParallel
    does, by hand: PyTorch 1.13's DDP over gloo can deadlock as the
    process ends (a gloo thread waits for the GIL while the main thread
    frees the reducer)."""
    world = dist.get_world_size()
    for p in model.parameters():
        if p.grad is None:  # unused in this batch, maybe not on other ranks
            p.grad = torch.zeros_like(p)
        dist.all_reduce(p.grad)
        p.grad /= world


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
    s = sums.cpu()
    result = {"epochs": epochs, "seconds": round(seconds, 3), "data_wait_fraction": round(float(s[0] / s[1]), 4),
              "client_us_per_batch": round(float(1e6 * s[2] / max(s[3], 1)), 1), "ranks": dist.get_world_size()}
    if "bytes_copied" in st:
        result["bytes_copied"] = int(s[4])  # rows the trainers copied into their persistent tensors
    if best is not None:
        result.update({k: round(v, 4) for k, v in best[1].items()})
        result["best_epoch"] = best[0]
    if dist.get_rank() == 0:
        print(json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
