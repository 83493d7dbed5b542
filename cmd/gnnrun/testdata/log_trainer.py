#!/usr/bin/python3
"""A trainer that logs figures whose means over calls and ranks the test
knows: each epoch, every rank logs x = 10*epoch + rank once and step = i
for each training batch i (its mean: (batches-1)/2), rank 0 alone logs
only0 = 1, and every rank logs bad = NaN; each batch takes $SLEEP_S
seconds, so that periodic progress lines come."""

import os
import time

import gnnrun

rank = int(os.environ["RANK"])
sleep = float(os.environ.get("SLEEP_S", "0"))
train_loader = gnnrun.loader("train")
for epoch in range(gnnrun.hello()["epochs"]):
    for i, b in enumerate(train_loader):
        time.sleep(sleep)
        gnnrun.log(step=i)
    gnnrun.log(x=10 * epoch + rank, bad=float("nan"))
    if rank == 0:
        gnnrun.log(only0=1)
