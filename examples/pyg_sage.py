#!/usr/bin/python3
"""GraphSAGE node classification with PyTorch Geometric's own layer
(torch_geometric.nn.SAGEConv) on gnnrun's batches: what a PyG user's
NeighborLoader script becomes on gnnrun.

    gnnrun train PARTDIR --fanouts 10,10 --batch-size 64 --epochs 20 \\
        -- /usr/bin/python3 examples/pyg_sage.py [--hidden 128] [--lr 0.01]

Each block is a bipartite graph in PyG's layout: its destinations are the
first num_dst of its sources, block.edge_index is [2, E] int64 of (source
row, destination row), so a layer is PyG's documented bipartite call

    conv((h, h[:block.num_dst]), block.edge_index, size=(block.num_src, block.num_dst))

and the last block's destinations are the seeds, in the order of y (PyG's
x[:batch_size]). Training, evaluation and the result line are
examples/graphsage.py's (whose SAGE is the same model in plain PyTorch).
It needs torch_geometric importable by the trainer's Python, and says so
and exits 2 when it is not.
"""

import argparse
import sys
import time

try:
    from torch_geometric.nn import SAGEConv
except ImportError as e:
    print("examples/pyg_sage.py needs PyTorch Geometric, which %s cannot import (%s): install it "
          "(pip install torch_geometric) for this Python, or run examples/graphsage.py, the same model in plain "
          "PyTorch" % (sys.executable, e), file=sys.stderr)
    sys.exit(2)

import torch
import torch.nn as nn
import torch.nn.functional as F

import gnnrun
from graphsage import evaluate, evaluates, features, finish, join, mean_gradients, same_start


class PyGSAGE(nn.Module):
    def __init__(self, din, hidden, classes, layers, dropout):
        super().__init__()
        dims = [din] + [hidden] * (layers - 1) + [classes]
        self.convs = nn.ModuleList(SAGEConv((a, a), b) for a, b in zip(dims, dims[1:]))
        self.dropout = dropout

    def forward(self, blocks, x):
        h = x
        for l, (conv, blk) in enumerate(zip(self.convs, blocks)):
            if l > 0:
                h = F.dropout(F.relu(h), self.dropout, self.training)
            h = conv((h, h[: blk.num_dst]), blk.edge_index, size=(blk.num_src, blk.num_dst))
        return h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--feat-norm", choices=["none", "row"], default="none", help="row: divide each feature row by its sum")
    ap.add_argument("--seed", type=int, default=0, help="model initialisation")
    ap.add_argument("--device", default="auto", help="auto (gnnrun train's choice: the rank's GPU, else cpu), cpu, cuda or cuda:N")
    a = ap.parse_args()

    hello = gnnrun.hello()
    device = join(a.seed, hello.get("device", "cpu") if a.device == "auto" else a.device)
    classes = hello["classes"]
    model = same_start(PyGSAGE(hello["feature_shape"][0], a.hidden, classes, len(hello["fanouts"]), a.dropout).to(device))
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    train_loader = gnnrun.loader("train", device=device)
    eval_loaders = {e["name"]: gnnrun.loader(e["name"], device=device) for e in hello["eval"]}
    rows = {}
    t0 = time.perf_counter()
    for epoch in range(hello["epochs"]):
        model.train()
        total, steps = torch.zeros((), device=device), 0  # summed on the device: no sync a batch
        for b in train_loader:
            tb = b.torch()
            loss = F.cross_entropy(model(tb.blocks, features(tb, a.feat_norm)), tb.y.long())
            opt.zero_grad()
            loss.backward()
            mean_gradients(model)
            opt.step()
            total, steps = total + loss.detach(), steps + 1
        gnnrun.log(loss=float(total) / max(steps, 1))  # in gnnrun's line of the epoch
        if evaluates(hello, epoch):
            rows[epoch] = {}
            for name, loader in eval_loaders.items():
                for k, v in evaluate(model, loader, classes, a.feat_norm).items():
                    rows[epoch][name + "_" + k] = v
            gnnrun.log(**rows[epoch])
    finish(rows, "val_auc" if classes == 2 else "val_acc", hello["epochs"], time.perf_counter() - t0)


if __name__ == "__main__":
    main()
