#!/usr/bin/python3
"""A test trainer: takes the batches and, as its first argument says,

  hash             writes to $OUT_DIR/<rank>.jsonl, per batch, the SHA-256
                   of each array of batch.ids (in input IDs, as sample
                   --dump writes them): a file, since mpirun may cut the
                   ranks' output lines into each other
  exit1 R N        on rank R, exits 1 after N batches
  kill R N         on rank R, kills itself (SIGKILL) after N batches
  killparent R N   on rank R, kills its gnnrun rank (SIGKILL) after N batches
  stop R N         on rank R, exits 0 after N batches (the others take all)
  hold             writes its pid to $MARKER_DIR/<rank> and holds each
                   batch 50 ms (for SIGTERM tests)
"""

import hashlib
import json
import os
import signal
import sys
import time

import gnnrun

mode = sys.argv[1]
rank = int(os.environ["RANK"])
target = int(sys.argv[2]) if len(sys.argv) > 2 else -1
after = int(sys.argv[3]) if len(sys.argv) > 3 else 0
if mode == "hold":
    with open(os.path.join(os.environ["MARKER_DIR"], str(rank)), "w") as f:
        f.write(str(os.getpid()))
hashes = open(os.path.join(os.environ["OUT_DIR"], "%d.jsonl" % rank), "w") if mode == "hash" else None
n = 0
for b in gnnrun.batches():
    n += 1
    if mode == "hash":
        hashes.write(json.dumps({"kind": b.kind, "epoch": b.epoch, "number": b.number,
                                 "arrays": {k: hashlib.sha256(v.tobytes()).hexdigest() for k, v in b.ids.items()}}) + "\n")
    elif mode == "hold":
        time.sleep(0.05)
    elif rank == target and n == after:
        if mode == "exit1":
            sys.exit(1)
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "killparent":
            os.kill(os.getppid(), signal.SIGKILL)
            time.sleep(60)  # the watchdog or SIGTERM must end it
        if mode == "stop":
            sys.exit(0)
if hashes:
    hashes.close()
print(json.dumps({"rank": rank, "batches": n}), flush=True)
