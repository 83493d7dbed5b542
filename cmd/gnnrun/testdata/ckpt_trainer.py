#!/usr/bin/python3
"""A training script with checkpoints, as a user writes one on gnnrun:
restore() at the start, save() when checkpoint_due() after a step. Each
rank trains a linear model of its own on the seeds' features (a stand-in
for a GNN: what is checked is that the state and the stream resume
exactly), with dropout, so that the RNG state matters too.

Environment: OUT_DIR gets <rank>.jsonl, one line per training batch
(run tag, epoch, number, seeds in input IDs: gnnrun train --ids) and,
at the end, final-<rank>.pt (the weights). RUN tags the lines.
SIGNAL_AT="E:K": after its K-th training batch of epoch E, each trainer
sends its gnnrun rank SIGUSR1 (as Slurm's --signal does); EXIT_AT="E:K":
the trainer exits 1 there instead (a crash: no checkpoint);
KILL_AT_SAVE=N: at its N-th checkpoint, rank 1's trainer kills its gnnrun
rank (kill -9) instead of saving, while rank 0's saves (a crash while a
checkpoint is being written).
"""

import json
import os
import signal
import sys
import time

import torch
import torch.nn.functional as F

import gnnrun

hello = gnnrun.hello()
rank, out = hello["rank"], os.environ["OUT_DIR"]
torch.manual_seed(0)
model = torch.nn.Linear(hello["feature_shape"][0], max(hello["classes"], 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
state = gnnrun.restore()
if state is not None:
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    torch.set_rng_state(state["rng"])
sig_at = tuple(int(x) for x in os.environ["SIGNAL_AT"].split(":")) if os.environ.get("SIGNAL_AT") else None
exit_at = tuple(int(x) for x in os.environ["EXIT_AT"].split(":")) if os.environ.get("EXIT_AT") else None
kill_at_save = int(os.environ.get("KILL_AT_SAVE", "0"))
saves = 0
log = open(os.path.join(out, "%d.jsonl" % rank), "a")
train_loader = gnnrun.loader("train")
for epoch in range(hello["start_epoch"], hello["epochs"]):
    for k, b in enumerate(train_loader, 1):
        tb = b.torch()
        y = tb.y.long()  # the seeds' labels: the seeds are x's first rows
        h = F.dropout(tb.x[: len(y)].float(), 0.2, training=True)
        loss = F.cross_entropy(model(h), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.write(json.dumps({"run": os.environ.get("RUN", ""), "epoch": b.epoch, "number": b.number, "padding": b.padding,
                              "seeds": b.ids["seeds"].tolist() if "seeds" in b.ids else []}) + "\n")
        log.flush()
        if gnnrun.checkpoint_due():
            saves += 1
            if saves == kill_at_save and rank == 1:
                os.kill(os.getppid(), signal.SIGKILL)  # this rank dies while rank 0 writes its part
                time.sleep(30)
            gnnrun.save({"model": model.state_dict(), "opt": opt.state_dict(), "rng": torch.get_rng_state()})
        if sig_at == (epoch, k):
            os.kill(os.getppid(), signal.SIGUSR1)
        if exit_at == (epoch, k):
            sys.exit(1)
torch.save(model.state_dict(), os.path.join(out, "final-%d.pt" % rank))
