#!/usr/bin/python3
"""R-GCN (Schlichtkrull et al., "Modeling Relational Data with Graph
Convolutional Networks", 2018) node classification on gnnrun's
heterogeneous batches, in plain PyTorch, one trainer per rank,
gradients averaged over ranks, one loader per split; --device auto trains on the
rank's GPU where gnnrun train put one.

    gnnrun gen --scale 12 --edge-factor 8 --feat-dim 16 --classes 4 --planted 0.6 \\
        --hetero --reverse --item-feat-dim -1 --out /data/hg
    ... partition, dispatch ...
    gnnrun train PARTS --ntype user --fanouts 10,10 --batch-size 64 --epochs 4 \\
        -- /usr/bin/python3 examples/rgcn.py [--hidden 32] [--bases 0] [--lr 0.01]

The input layer gives every input row a vector of --hidden: a linear
projection of its type's features (``b.x_of(type)``, at the type's own
width), or, for a type without features, a learnt embedding of the node
(``nn.Embedding(num_nodes[type], hidden)`` indexed by ``input_type_id``).
Each layer then computes, for block l's destinations,

    h_i' = W_0 h_i + sum_r sum_{j in N_r(i)} W_r h_j / |N_r(i)|

(eq. 2: a self-loop weight plus one weight per relation, each relation's
sampled in-neighbours averaged), with --bases B > 0 the basis
decomposition W_r = sum_b a_rb V_b (eq. 3). The seeds are the last block's
destinations, of gnnrun's --ntype. The result, printed by rank 0 as one
JSON line as examples/graphsage.py prints it, is the test accuracy at the
epoch of the best validation accuracy.
"""

import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import gnnrun
from graphsage import evaluates, finish, join, mean_gradients, same_start


class RGCNConv(nn.Module):
    """One R-GCN layer with mean aggregation per relation (eq. 2),
    optionally with basis-decomposed relation weights (eq. 3)."""

    def __init__(self, din, dout, relations, bases):
        super().__init__()
        self.relations, self.din = relations, din
        self.self_lin = nn.Linear(din, dout)
        if 0 < bases < relations:
            self.basis = nn.Parameter(torch.empty(bases, din, dout))
            self.coef = nn.Parameter(torch.empty(relations, bases))
            nn.init.xavier_uniform_(self.basis)
            nn.init.xavier_uniform_(self.coef)
            self.weight = None
        else:
            self.weight = nn.Parameter(torch.empty(relations, din, dout))
            nn.init.xavier_uniform_(self.weight)

    def relation_weights(self):
        if self.weight is not None:
            return self.weight
        return torch.einsum("rb,bio->rio", self.coef, self.basis)

    def forward(self, h_src, h_dst, block):
        w = self.relation_weights()
        out = self.self_lin(h_dst)
        etype = block.etype if block.etype is not None else torch.zeros_like(block.src)
        for r in range(self.relations):
            m = etype == r
            if not bool(m.any()):
                continue
            src, dst = block.src[m], block.dst[m]
            agg = torch.zeros(block.num_dst, self.din, dtype=h_src.dtype, device=h_src.device).index_add(0, dst, h_src[src])
            deg = torch.bincount(dst, minlength=block.num_dst).clamp(min=1).unsqueeze(1)
            out = out + (agg / deg) @ w[r]
        return out


class InputLayer(nn.Module):
    """Every input row's first vector: its type's features projected, or
    its node's embedding for a type without features."""

    def __init__(self, hello, hidden):
        super().__init__()
        self.hidden = hidden
        self.ntypes = hello.get("ntypes") or ["_N"]
        shapes = hello.get("feature_shapes") or {self.ntypes[0]: hello["feature_shape"]}
        nodes = hello.get("num_nodes") or {}
        self.proj = nn.ModuleDict()
        self.emb = nn.ModuleDict()
        for t in self.ntypes:
            if shapes.get(t) is not None:
                self.proj[t] = nn.Linear(shapes[t][0], hidden)
            else:
                self.emb[t] = nn.Embedding(nodes[t], hidden)

    def forward(self, tb):
        h = torch.zeros(tb.x.shape[0], self.hidden, device=tb.x.device)
        for t in self.ntypes:
            rows = tb.rows_of_type(t)
            if len(rows) == 0:
                continue
            if t in self.proj:
                v = self.proj[t](tb.x_of(t))
            else:
                v = self.emb[t](tb.input_type_id[rows])
            h = h.index_copy(0, rows, v)
        return h


class RGCN(nn.Module):
    def __init__(self, hello, hidden, classes, layers, relations, bases, dropout):
        super().__init__()
        self.inp = InputLayer(hello, hidden)
        dims = [hidden] * layers + [classes]
        self.convs = nn.ModuleList(RGCNConv(a, b, relations, bases) for a, b in zip(dims, dims[1:]))
        self.dropout = dropout

    def forward(self, tb):
        # Each block's destinations are the first num_dst rows of its input,
        # block 0's included (x[:num_dst]).
        h = F.dropout(self.inp(tb), self.dropout, self.training)
        for l, (conv, blk) in enumerate(zip(self.convs, tb.blocks)):
            if l > 0:
                h = F.dropout(F.relu(h), self.dropout, self.training)
            h = conv(h, h[: blk.num_dst], blk)
        return h


@torch.no_grad()
def evaluate(model, loader, device):
    """Accuracy over every node of the loader's set, summed over ranks."""
    model.eval()
    got = torch.zeros(2, dtype=torch.float64, device=device)
    for b in loader:
        tb = b.torch()
        got[0] += (model(tb).argmax(1) == tb.y.long()).sum()
        got[1] += len(tb.y)
    dist.all_reduce(got)
    return float(got[0] / max(got[1], 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--bases", type=int, default=0, help="basis decomposition with this many bases (0: a weight per relation)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--dropout", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0, help="model initialisation")
    ap.add_argument("--device", default="auto", help="auto (gnnrun train's choice: the rank's GPU, else cpu), cpu, cuda or cuda:N")
    ap.add_argument("--mirror", action="store_true", help="on cpu, keep the features in a persistent tensor updated per batch, as on a GPU")
    a = ap.parse_args()

    hello = gnnrun.hello()
    device = join(a.seed, hello.get("device", "cpu") if a.device == "auto" else a.device)
    relations = max(1, len(hello.get("etypes") or []))
    model = same_start(RGCN(hello, a.hidden, hello["classes"], len(hello["fanouts"]), relations, a.bases, a.dropout).to(device))
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    train_loader = gnnrun.loader("train", device=device, mirror=a.mirror)
    eval_loaders = {e["name"]: gnnrun.loader(e["name"], device=device, mirror=a.mirror) for e in hello["eval"]}
    rows = {}
    t0 = time.perf_counter()
    for epoch in range(hello["epochs"]):
        model.train()
        total, steps = torch.zeros((), device=device), 0  # summed on the device: no sync a batch
        for b in train_loader:
            tb = b.torch()
            loss = F.cross_entropy(model(tb), tb.y.long())
            opt.zero_grad()
            loss.backward()
            mean_gradients(model)
            opt.step()
            total, steps = total + loss.detach(), steps + 1
        gnnrun.log(loss=float(total) / max(steps, 1))  # in gnnrun's line of the epoch
        if evaluates(hello, epoch):
            rows[epoch] = {name + "_acc": evaluate(model, loader, device) for name, loader in eval_loaders.items()}
            gnnrun.log(**rows[epoch])
    seconds = time.perf_counter() - t0
    finish(rows, "val_acc", hello["epochs"], seconds)


if __name__ == "__main__":
    main()
