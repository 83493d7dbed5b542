#!/usr/bin/python3
"""A trainer shaped like a DGL or PyG script with one loader per split, to
test the split loaders under the real `gnnrun train --ids`:

    train_loader, val_loader = gnnrun.loader("train"), gnnrun.loader("val")
    for epoch in range(EPOCHS):
        for i, b in enumerate(train_loader):
            ...
            if i == BREAK_AFTER - 1:
                break
        if epoch % 2 == 1:
            for b in val_loader: ...

with $BREAK_AFTER (0: never break) and $EVAL_EVERY (evaluate after every
that many epochs: 2 evaluates after epochs 1, 3, ...). It also checks the
misuses the client must refuse with a clear error: an unknown split, an
evaluation loader inside the training loop, one iterated twice after the
same epoch. It writes $OUT_DIR/<rank>.json: every pass with its split,
the batches it gave (kind, epoch, number, padding, seeds in input IDs),
the loaders' len(), the misuses' errors, and gnnrun.stats().
"""

import json
import os
import sys

import gnnrun

rank = int(os.environ["RANK"])
break_after = int(os.environ.get("BREAK_AFTER", "0"))
eval_every = int(os.environ.get("EVAL_EVERY", "1"))
epochs = gnnrun.hello()["epochs"]
train_loader, val_loader = gnnrun.loader("train"), gnnrun.loader("val")
passes, refused = [], {}


def record(split, epoch, loop):
    got = []
    for i, b in enumerate(loop):
        got.append({"kind": b.kind, "epoch": b.epoch, "number": b.number, "padding": b.padding,
                    "seeds": b.ids["seeds"].tolist(), "labels": None if b.y is None else b.y.tolist()})
        if split == "train" and break_after and i == break_after - 1:
            break
    passes.append({"split": split, "epoch": epoch, "batches": got})


def refuses(name, f):
    try:
        f()
    except (RuntimeError, ValueError) as e:
        refused[name] = str(e)


refuses("unknown split", lambda: gnnrun.loader("validation"))
refuses("eval before training", lambda: next(iter(val_loader)))
for epoch in range(epochs):
    if epoch == 0:
        # An evaluation loader inside the training loop is refused; the
        # training loop goes on.
        it = iter(train_loader)
        first = next(it)
        refuses("eval inside training", lambda: next(iter(val_loader)))
        del first
        rest = [{"kind": b.kind, "epoch": b.epoch, "number": b.number, "padding": b.padding,
                 "seeds": b.ids["seeds"].tolist(), "labels": None} for b in it]
        passes.append({"split": "train", "epoch": 0, "batches": rest, "after_first": True})
    else:
        record("train", epoch, train_loader)
    if (epoch + 1) % eval_every == 0 or epoch == epochs - 1:
        record("val", epoch, val_loader)
        refuses("eval twice", lambda: next(iter(val_loader)))

with open(os.path.join(os.environ["OUT_DIR"], "%d.json" % rank), "w") as f:
    json.dump({"passes": passes, "len_train": len(train_loader), "len_val": len(val_loader), "refused": refused,
               "stats": gnnrun.stats()}, f)
