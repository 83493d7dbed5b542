"""gnnrun's trainer-side client: the mini-batches of ``gnnrun train``.

``gnnrun train PARTDIR [flags] -- python3 train.py`` starts this trainer on
every rank, with the ``torch.distributed`` variables set (RANK, WORLD_SIZE,
LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and gnnrun's
control socket as file descriptor GNNRUN_CONTROL_FD. Then::

    import gnnrun
    for batch in gnnrun.batches():
        h = model(batch.x, batch.blocks, batch.input_slots)   # numpy views
        ...
        if batch.end_of_epoch: ...

Nothing is copied on this side: ``batch.x`` (the input nodes' features, in
the device cache's slot order) is a view of the device buffer itself, and
the other arrays are views of a shared slot. A batch is valid until the
next one is asked for: ``batches()`` then tells gnnrun it is done with it,
and its memory is reused (copy what must outlive it).

numpy is the only dependency; ``Batch.torch()`` needs torch.
"""

import json
import mmap
import os
import signal
import socket
import sys
import threading
import time

import numpy as np

__all__ = ["Batch", "Block", "batches", "hello", "stats", "GnnrunGone"]

PROTOCOL = 1


class GnnrunGone(RuntimeError):
    """The gnnrun rank feeding this trainer is gone (it failed or was killed)."""


class Block:
    """One layer of a batch (DGL's message-flow graph).

    Edge i runs from source ``src[i]`` to destination ``dst[i]``
    (``dst[i] < num_dst``). For the outermost block (``blocks[0]``) the
    sources are rows of ``batch.x`` (slots) and its destinations are the
    rows ``batch.input_slots[:num_dst]``; for block l > 0 both index the
    previous layer's output, whose first ``num_dst`` rows are its
    destinations. The last block's destinations are the seeds, in order.
    """

    __slots__ = ("src", "dst", "num_src", "num_dst")

    def __init__(self, src, dst, num_src, num_dst):
        self.src, self.dst, self.num_src, self.num_dst = src, dst, num_src, num_dst

    def __repr__(self):
        return "Block(%d -> %d nodes, %d edges)" % (self.num_src, self.num_dst, len(self.src))


class Batch:
    """A mini-batch as numpy views (see the module's doc for their lifetime).

    kind: "train", or the evaluation set's name ("val", "test").
    epoch, number: its epoch and its number in the epoch's split.
    end_of_epoch: the last training batch of its epoch.
    x: [rows, ...] input features in slot order.
    input_slots: the slot (row of x) of each input node.
    blocks: the layers, outermost first.
    y: the seeds' labels (node tasks), or None.
    pos, neg: link tasks: (src, dst) index arrays into the seeds (the last
        block's destinations) of the positive and negative edges; else None.
    ids: with ``gnnrun train --ids``, arrays in the input graph's IDs, as
        ``gnnrun sample --dump`` writes them; else empty.
    """

    def __init__(self, msg, view):
        self.kind = msg["kind"]
        self.epoch = msg["epoch"]
        self.number = msg["number"]
        self.end_of_epoch = msg["end_of_epoch"]
        self.slot = msg["slot"]
        arrays = msg["arrays"]
        self.x = view(msg["x"])
        self.input_slots = view(arrays["input_slots"])
        self.blocks = [
            Block(view(arrays["src_%d" % l]), view(arrays["dst_%d" % l]), b["num_src"], b["num_dst"])
            for l, b in enumerate(msg["blocks"])
        ]
        self.y = view(arrays["labels"]) if "labels" in arrays else None
        self.pos = self.neg = None
        if "pos_src" in arrays:
            self.pos = (view(arrays["pos_src"]), view(arrays["pos_dst"]))
            self.neg = (view(arrays["neg_src"]), view(arrays["neg_dst"]))
        self.ids = {k[4:]: view(v) for k, v in arrays.items() if k.startswith("ids/")}

    @property
    def num_seeds(self):
        return self.blocks[-1].num_dst if self.blocks else 0

    def torch(self, device=None):
        """The batch as torch tensors: x and y share memory with the views
        (zero-copy on the host); indices become int64 (copied), as torch's
        indexing wants."""
        import torch

        def t(a, long=False):
            if a is None:
                return None
            out = torch.from_numpy(a.astype(np.int64) if long else a)
            return out.to(device) if device is not None else out

        class TorchBatch:
            pass

        tb = TorchBatch()
        tb.kind, tb.epoch, tb.number, tb.end_of_epoch = self.kind, self.epoch, self.number, self.end_of_epoch
        tb.x, tb.y = t(self.x), t(self.y)
        tb.input_slots = t(self.input_slots, True)
        tb.blocks = [Block(t(b.src, True), t(b.dst, True), b.num_src, b.num_dst) for b in self.blocks]
        tb.pos = tuple(t(a, True) for a in self.pos) if self.pos else None
        tb.neg = tuple(t(a, True) for a in self.neg) if self.neg else None
        tb.num_seeds = self.num_seeds
        return tb

    def __repr__(self):
        return "Batch(%s, epoch %d, number %d, %d input rows, %s)" % (
            self.kind, self.epoch, self.number, len(self.input_slots), self.blocks)


class _Channel:
    """The control socket and the shared buffers it introduced."""

    def __init__(self):
        fd = os.environ.get("GNNRUN_CONTROL_FD")
        if fd is None:
            raise RuntimeError("gnnrun: this process was not started by `gnnrun train` (no GNNRUN_CONTROL_FD)")
        self.sock = socket.socket(fileno=int(fd))
        self.maps = {}
        self.wait = self.handoff = 0.0
        self.count = 0
        _watch_parent()
        self.hello = self.recv()
        if self.hello.get("type") != "hello" or self.hello.get("protocol") != PROTOCOL:
            raise RuntimeError("gnnrun: unexpected first message %r (protocol %d expected)" % (self.hello, PROTOCOL))

    def recv(self):
        t0 = time.perf_counter()
        try:
            data, fds, _, _ = socket.recv_fds(self.sock, 1 << 20, 256)
        except OSError as e:
            raise GnnrunGone("gnnrun: the gnnrun rank feeding this trainer is gone (%s)" % e) from None
        t1 = time.perf_counter()
        if not data:
            raise GnnrunGone("gnnrun: the gnnrun rank feeding this trainer is gone (its control socket closed)")
        msg = json.loads(data)
        for nb, fd in zip(msg.get("new", []), fds):
            if nb.get("kind", "host") != "host":
                raise RuntimeError("gnnrun: buffers of kind %r are not supported by this client" % nb.get("kind"))
            size = nb["size"]
            self.maps[nb["id"]] = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE) if size else None
            os.close(fd)
        for fd in fds[len(msg.get("new", [])):]:
            os.close(fd)
        for d in msg.get("drop", []):
            # Views of a dropped buffer keep its memory alive until they go.
            self.maps.pop(d, None)
        self.wait += t1 - t0
        return msg

    def view(self, ref):
        dtype = np.dtype(ref["dtype"])
        shape = tuple(ref["shape"])
        n = int(np.prod(shape, dtype=np.int64))
        if n == 0:
            return np.empty(shape, dtype)
        return np.frombuffer(self.maps[ref["buf"]], dtype=dtype, count=n, offset=ref["offset"]).reshape(shape)

    def done(self, slot):
        try:
            self.sock.send(json.dumps({"type": "done", "slot": slot}).encode())
        except OSError as e:
            raise GnnrunGone("gnnrun: the gnnrun rank feeding this trainer is gone (%s)" % e) from None


_channel = None


def _get():
    global _channel
    if _channel is None:
        _channel = _Channel()
    return _channel


def hello():
    """What gnnrun says of the run: rank, world_size, task, feature_dtype,
    feature_shape, classes (node tasks with labels), epochs,
    batches_per_epoch, eval (the evaluation sets' names)."""
    return dict(_get().hello)


def batches():
    """Yields every batch gnnrun hands this trainer, in order, until the
    end of the run. Asking for the next batch releases the previous one."""
    ch = _get()
    prev = None
    while True:
        if prev is not None:
            ch.done(prev)
            prev = None
        msg = ch.recv()
        if msg["type"] == "end":
            return
        t0 = time.perf_counter()
        b = Batch(msg, ch.view)
        ch.handoff += time.perf_counter() - t0
        ch.count += 1
        prev = b.slot
        yield b


def stats():
    """This trainer's side of the hand-off: batches, seconds waiting for
    them (wait_s), seconds turning messages into views (handoff_s)."""
    ch = _get()
    return {"batches": ch.count, "wait_s": ch.wait, "handoff_s": ch.handoff}


def _watch_parent():
    """End this trainer with a clear error when its gnnrun rank dies: a
    SIGTERM (gnnrun stops its trainer so, and the kernel sends one when
    the gnnrun rank dies) raises GnnrunGone in the main thread, and a
    watchdog notices the parent gone even if the signal was missed."""
    parent = os.getppid()

    def on_term(signum, frame):
        raise GnnrunGone("gnnrun: stopped by SIGTERM (the job is ending: a gnnrun rank failed, or it was cancelled)")

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_term)

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                sys.stderr.write("gnnrun: the gnnrun rank feeding this trainer is gone; exiting\n")
                sys.stderr.flush()
                os._exit(1)

    threading.Thread(target=watch, name="gnnrun-watchdog", daemon=True).start()
