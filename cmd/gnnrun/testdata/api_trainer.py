#!/usr/bin/python3
"""A trainer written the ways PyTorch GNN users write theirs, to test the
client under the real `gnnrun train`. Its first argument is the loop shape:

  loader      for epoch in range(E): for b in gnnrun.loader("train"): ...;
              then, after an epoch that evaluates, for each evaluation
              set: for b in gnnrun.loader(set): ...
  break       for epoch in range(E): for b in gnnrun.batches(): ...
              if b.end_of_epoch: break          (then drains the rest)
  exception   raises inside the loop every 5th batch, catches it outside,
              and loops again
  context     with gnnrun.batches() as it: takes 3 batches, then a new
              `with` block, until the end
  stray       sends a repeated acknowledgement of an earlier batch of the
              same slot while it holds a batch, waits, and checks the held
              batch still has its rows
  writes      every batch: tries in-place writes to x (numpy and torch),
              counts those that were accepted

  switch      as loader, with epochs alternating between host views and the CPU mirror
              (MIRROR=1 only): a mirror that missed batches copies its
              buffer whole, then follows the updates again

With MIRROR=1 every loop asks for gnnrun.batches(device="cpu",
mirror=True) (or the loader's): x is a persistent CPU tensor that each
batch's update keeps equal to gnnrun's buffer, the GPU's code path; every
batch checks it is not the shared buffer and equals it byte for byte.
MIRROR=cuda does the same on the GPU (device="cuda"; make gpu-check).

Every mode checks every batch's block 0 against the input's features
($FEAT, the input's feature chunks, in type-wise input IDs; gnnrun
train --ids): x[src[i]] and x[dst[i]] are edge i's endpoints' rows and
x[:num_dst] the destinations'. It writes $OUT_DIR/<rank>.json: the batches
it saw (kind, epoch, number, seq), the wrong edges, the accepted writes,
the mirror's checks, gnnrun.stats(), and the time it ended.
"""

import json
import os
import sys
import time

import numpy as np

import gnnrun

mode = sys.argv[1]
rank = int(os.environ["RANK"])
# The input's feature chunks, in order: $FEAT/feat-0.npy, feat-1.npy, ...
chunks = sorted((f for f in os.listdir(os.environ["FEAT"]) if f.startswith("feat-")), key=lambda f: int(f[5:-4]))
feat = np.concatenate([np.load(os.path.join(os.environ["FEAT"], f)) for f in chunks])
seen, bad_edges, accepted_writes, checked_edges = [], 0, 0, 0
MIRROR = os.environ.get("MIRROR", "")  # "1": the CPU mirror; "cuda": the GPU's
device = {"device": "cuda"} if MIRROR == "cuda" else {"device": "cpu", "mirror": True} if MIRROR else {}
mirror_checked, mirror_bad = 0, []


def check_mirror(b):
    """The mirror's rows equal the shared buffer's, and are a copy."""
    global mirror_checked
    if b._dev_x is None:
        return
    x = b.torch().x
    mine = x.as_subclass(__import__("torch").Tensor).cpu().numpy()
    if mine.shape != b.x.shape or not np.array_equal(mine.view(np.uint8), b.x.view(np.uint8)):
        mirror_bad.append("seq %d: the mirror's %s rows differ from the buffer's %s" % (b.seq, mine.shape, b.x.shape))
    elif MIRROR != "cuda" and len(mine) and mine.ctypes.data == b.x.ctypes.data:
        mirror_bad.append("seq %d: x is the shared buffer, not the mirror" % b.seq)
    mirror_checked += 1


def check(b):
    """Counts block 0's edges whose endpoints' rows differ from the input's."""
    global bad_edges, checked_edges
    b0 = b.blocks[0]
    src, dst = b0.src.astype(np.int64), b0.dst.astype(np.int64)
    want_src, want_dst = feat[b.ids["src_0"]], feat[b.ids["dst_0"]]
    wrong = np.any(b.x[src] != want_src, axis=1) | np.any(b.x[dst] != want_dst, axis=1)
    # x[:num_dst] are the destinations: dst indexes them directly.
    wrong |= np.any(b.x[: b0.num_dst][dst] != want_dst, axis=1)
    bad_edges += int(wrong.sum())
    checked_edges += len(src)


def record(b):
    seen.append({"kind": b.kind, "epoch": b.epoch, "number": b.number, "seq": b.seq, "items": b.items, "padding": b.padding,
                 "end_of_epoch": b.end_of_epoch, "last_of_epoch": b.last_of_epoch})
    check(b)
    check_mirror(b)


def try_writes(b):
    """Tries in-place writes that poison a cache; returns those accepted."""
    import torch
    import torch.nn.functional as F

    n = 0
    tb = b.torch()
    attempts = [
        lambda: b.x.__setitem__(0, 1),
        lambda: np.multiply(b.x, 2, out=b.x),
        lambda: tb.x.mul_(2),
        lambda: tb.x.__setitem__(0, 1.0),
        lambda: tb.x[:2].add_(1),
        lambda: tb.x.view(-1).zero_(),
        lambda: F.dropout(tb.x, 0.5, training=True, inplace=True),
        lambda: torch.nn.Dropout(0.5, inplace=True).train()(tb.x),
        lambda: F.relu(tb.x, inplace=True),
        lambda: torch.relu_(tb.x),
        lambda: torch.add(tb.x, 1, out=tb.x),
        lambda: tb.x.__iadd__(1),
        lambda: tb.x.detach().fill_(3),
        lambda: tb.x.index_fill_(0, torch.tensor([0]), 7),
    ]
    for f in attempts:
        try:
            f()
            n += 1
        except (RuntimeError, ValueError, TypeError):
            pass
    # Out-of-place work on the same tensors runs as usual.
    y = torch.nn.Linear(tb.x.shape[1], 3)(tb.x[: tb.blocks[0].num_dst] * 2)
    assert type(y) is torch.Tensor and y.shape[0] == tb.blocks[0].num_dst
    assert type(tb.x[tb.blocks[0].src]) is torch.Tensor
    return n


hello = gnnrun.hello()
epochs = hello["epochs"]


def evaluates(epoch):
    every = hello["eval_every"]
    return bool(hello["eval"]) and ((epoch + 1) % every == 0 or epoch == epochs - 1)


def split_epoch(epoch, train, evals):
    """One epoch over the split loaders: its training batches, then each
    evaluation set's when the epoch evaluates."""
    for b in train:
        record(b)
        if b.epoch != epoch or b.kind != "train":
            sys.exit("epoch %d's training loop got a %s batch of epoch %d" % (epoch, b.kind, b.epoch))
    if evaluates(epoch):
        for ld in evals:
            for b in ld:
                record(b)
                if b.epoch != epoch or b.kind != ld.split:
                    sys.exit("epoch %d's %s loop got a %s batch of epoch %d" % (epoch, ld.split, b.kind, b.epoch))


def split_loaders(**kw):
    return gnnrun.loader("train", **kw), [gnnrun.loader(e["name"], **kw) for e in hello["eval"]]


if mode == "loader":
    train, evals = split_loaders(**device)
    for epoch in range(epochs):
        split_epoch(epoch, train, evals)
elif mode == "break":
    for epoch in range(epochs):
        for b in gnnrun.batches(**device):
            record(b)
            if b.end_of_epoch:
                break
    for b in gnnrun.batches(**device):  # evaluation batches, if any
        record(b)
elif mode == "exception":
    n = 0
    while True:
        try:
            got = False
            for b in gnnrun.batches(**device):
                got = True
                record(b)
                n += 1
                if n % 5 == 0:
                    raise KeyError("a bug in the training step")
            break
        except KeyError:
            if not got:
                break
elif mode == "context":
    while True:
        got = 0
        with gnnrun.batches(**device) as it:
            for b in it:
                record(b)
                got += 1
                if got == 3:
                    break
        if got < 3:
            break
elif mode == "stray":
    ch = gnnrun._get()
    prev = {}
    for b in gnnrun.batches(**device):
        record(b)
        if b.slot in prev:  # the earlier batch of this slot, acknowledged again
            ch.sock.send(json.dumps({"type": "done", "slot": b.slot, "seq": prev[b.slot]}).encode())
            time.sleep(0.05)
            check(b)
        prev[b.slot] = b.seq
elif mode == "writes":
    for b in gnnrun.batches(**device):
        accepted_writes += try_writes(b)
        record(b)
elif mode == "switch":
    host, mirrored = split_loaders(), split_loaders(**device)
    for epoch in range(epochs):
        split_epoch(epoch, *(mirrored if epoch % 2 == 0 else host))
else:
    sys.exit("unknown mode " + mode)

with open(os.path.join(os.environ["OUT_DIR"], "%d.json" % rank), "w") as f:
    json.dump({"batches": seen, "bad_edges": bad_edges, "checked_edges": checked_edges,
               "accepted_writes": accepted_writes, "mirror_checked": mirror_checked, "mirror_bad": mirror_bad,
               "stats": gnnrun.stats(), "ended": time.time()}, f)
