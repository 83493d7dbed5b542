"""gnnrun's trainer-side client: the mini-batches of ``gnnrun train``.

``gnnrun train PARTDIR [flags] -- python3 train.py`` starts this trainer on
every rank, with the ``torch.distributed`` variables set (RANK, WORLD_SIZE,
LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and gnnrun's
control socket as file descriptor GNNRUN_CONTROL_FD. Then, as with DGL's
and PyG's loaders, one per split::

    import gnnrun
    train_loader = gnnrun.loader("train")
    val_loader = gnnrun.loader("val")       # the sets of gnnrun train --eval
    for epoch in range(gnnrun.hello()["epochs"]):
        for b in train_loader:              # one epoch's training batches
            tb = b.torch()                  # x read-only, zero-copy
            h = conv(tb.blocks[0], (tb.x, tb.x[:tb.blocks[0].num_dst]))
            loss = F.cross_entropy(model(tb.blocks, tb.x), tb.y)
        for b in val_loader: ...            # that epoch's validation batches

Each ``for`` over the training loader is the next epoch; ``break`` or an
exception drops the rest of it. An evaluation loader gives the batches of
its set that follow the last training epoch begun (every node of the set
in exactly one batch over the ranks); evaluation batches nobody asks for
are skipped. ``len(loader)`` is that loader's batches per epoch on this
rank. No training batch is empty: ranks past the epoch's last seeds get
full batches of seeds repeated from the epoch's start (``b.padding``), as
PyTorch's DistributedSampler pads (``gnnrun train --pad empty`` gives
those ranks empty batches instead), and no rank is handed an empty
evaluation batch. ``for b in gnnrun.batches()`` runs over the whole
stream, every kind, in order (``b.kind`` tells them apart).

Block 0 follows DGL's and PyG's layout: ``x[:num_dst]`` are its
destinations' rows, and edge i reads ``x[src[i]]`` and ``x[dst[i]]``;
``block.edge_index`` is PyG's ``[2, E]`` (source row, destination row).

On the host nothing is copied on this side: ``batch.x`` is a read-only
view of the device cache's buffer, and the other arrays are read-only views
of a shared slot. On a GPU (``gnnrun train --device``, or
``loader(device="cuda")``) ``b.torch().x`` is a persistent device tensor
per gnnrun buffer that each batch's update keeps equal to it, copying only
the rows gnnrun copied (``gnnrun._device``). A batch is valid until the
next one is asked for or the loop that gave it ends (its memory is reused
then: copy what must outlive it).

numpy is the only dependency; ``Batch.torch()`` needs torch.
"""

import json
import math
import mmap
import os
import select
import signal
import socket
import sys
import threading
import time
import warnings
import weakref

import numpy as np

__all__ = ["Batch", "Block", "Loader", "loader", "batches", "hello", "log", "checkpoint_due", "save", "restore", "stats",
           "GnnrunGone", "CheckpointStop"]

PROTOCOL = 4


class GnnrunGone(RuntimeError):
    """The gnnrun rank feeding this trainer is gone (it failed or was killed)."""


class CheckpointStop(SystemExit):
    """gnnrun stopped the run after the checkpoint a signal asked for (a
    Slurm time limit, preemption): the trainer exits with status 75, and
    the same command resumes from that checkpoint."""

    def __init__(self):
        sys.stderr.write("gnnrun: stopped after the checkpoint; the same command resumes from it\n")
        super().__init__(75)


class Block:
    """One layer of a batch (DGL's message-flow graph, PyG's sampled
    subgraph of one hop).

    Edge i runs from source ``src[i]`` to destination ``dst[i]``
    (``dst[i] < num_dst``); the destinations are the first ``num_dst``
    sources. For the outermost block (``blocks[0]``) both index rows of
    ``batch.x``; for block l > 0 both index the previous layer's output.
    The last block's destinations are the seeds, in the order of ``y``.
    ``etype[i]`` is edge i's type, an index into ``hello()["etypes"]``
    (None when the graph has one edge type).
    """

    __slots__ = ("src", "dst", "num_src", "num_dst", "etype", "_edge_index")

    def __init__(self, src, dst, num_src, num_dst, etype=None):
        self.src, self.dst, self.num_src, self.num_dst, self.etype = src, dst, num_src, num_dst, etype
        self._edge_index = None

    @property
    def edge_index(self):
        """The edges as PyG's ``edge_index``: a [2, E] int64 array (a
        tensor, on the batch's device, for ``Batch.torch()``'s blocks) of
        (source row, destination row), so a PyG layer takes the block as
        ``conv((x_src, x_dst), block.edge_index, size=(num_src, num_dst))``."""
        if self._edge_index is None:
            if isinstance(self.src, np.ndarray):
                self._edge_index = np.stack([self.src.astype(np.int64), self.dst.astype(np.int64)])
            else:
                import torch

                self._edge_index = torch.stack([self.src.long(), self.dst.long()])
        return self._edge_index

    def __repr__(self):
        return "Block(%d -> %d nodes, %d edges)" % (self.num_src, self.num_dst, len(self.src))


class Batch:
    """A mini-batch as read-only numpy views (valid until the next batch is
    asked for or its loop ends).

    kind: "train", or the evaluation set's name ("val", "test").
    epoch, number: its epoch and its number in the epoch's split.
    padding: a training batch that pads a rank past the epoch's last
        seeds, with seeds repeated from the epoch's start (their second
        time in the epoch).
    seq: its place in gnnrun's stream for this rank (increasing; batches
        skipped leave gaps).
    end_of_epoch: the last training batch of its epoch.
    last_of_epoch: the epoch's last batch of any kind (its last evaluation
        batch when evaluation sets follow the epoch).
    x: [rows, ...] input features: rows 0..blocks[0].num_dst-1 are block
        0's destinations, in order; the other rows hold the other input
        nodes in the device cache's order (input_slots says where).
    input_slots: the row of x of each input node (input_slots[i] = i for
        the destinations).
    blocks: the layers, outermost first.
    y: the seeds' labels (node tasks), or None.
    pos, neg: link tasks: (src, dst) index arrays into the seeds (the last
        block's destinations) of the positive and negative edges; else None.
    ids: with ``gnnrun train --ids``, arrays in the input graph's IDs, as
        ``gnnrun sample --dump`` writes them; else empty.
    input_ntype, input_type_id: per row of x (not in input order), the
        node type of its node (an index into ``hello()["ntypes"]``) and
        the node's ID within its type (0..num_nodes[type]-1, the same for
        the whole run: rows for an ``nn.Embedding`` of a featureless type);
        None when the graph has one node type. ``rows_of_type(t)`` and
        ``x_of(t)`` select a type's rows.
    """

    def __init__(self, msg, view, types=None):
        self.kind = msg["kind"]
        self.epoch = msg["epoch"]
        self.number = msg["number"]
        self.seq = msg["seq"]
        self.checkpoint = msg.get("checkpoint")
        self.items = msg.get("items")
        self.padding = msg.get("padding", False)
        self.end_of_epoch = msg["end_of_epoch"]
        self.last_of_epoch = msg["last_of_epoch"]
        self.slot = msg["slot"]
        arrays = msg["arrays"]
        self.x = view(msg["x"])
        self.input_slots = view(arrays["input_slots"])
        self.blocks = [
            Block(view(arrays["src_%d" % l]), view(arrays["dst_%d" % l]), b["num_src"], b["num_dst"],
                  view(arrays["etype_%d" % l]) if "etype_%d" % l in arrays else None)
            for l, b in enumerate(msg["blocks"])
        ]
        self.input_ntype = view(arrays["input_ntype"]) if "input_ntype" in arrays else None
        self.input_type_id = view(arrays["input_type_id"]) if "input_type_id" in arrays else None
        self._types = types or _Types({})
        self._rows = {}
        self.y = view(arrays["labels"]) if "labels" in arrays else None
        self.pos = self.neg = None
        if "pos_src" in arrays:
            self.pos = (view(arrays["pos_src"]), view(arrays["pos_dst"]))
            self.neg = (view(arrays["neg_src"]), view(arrays["neg_dst"]))
        self.ids = {k[4:]: view(v) for k, v in arrays.items() if k.startswith("ids/")}
        # Set when a device pass applied the batch's update to its mirror.
        self._device = self._dev_x = self._ready = self._side = None
        self._update_buffer = msg.get("update", {}).get("buffer")

    @property
    def num_seeds(self):
        return self.blocks[-1].num_dst if self.blocks else 0

    def rows_of_type(self, ntype):
        """The rows of x whose nodes are of ntype (its name or index),
        ascending, as an int64 array (every row with one node type)."""
        t = self._types.index(ntype)
        if t not in self._rows:
            if self.input_ntype is None:
                self._rows[t] = np.arange(len(self.input_slots), dtype=np.int64)
            else:
                self._rows[t] = np.flatnonzero(self.input_ntype == t)
        return self._rows[t]

    def x_of(self, ntype):
        """The features of ntype's rows (rows_of_type order) at the type's
        own width: x's rows are the widest type's, narrower ones padded
        with zeros. A copy. ValueError for a type without features (use
        input_type_id, e.g. with an nn.Embedding)."""
        return self.x[self.rows_of_type(ntype)][:, : self._types.width(ntype)]

    def torch(self, device=None):
        """The batch as torch tensors. On the host, x and y share memory
        with the views and stay read-only (an in-place write raises
        RuntimeError); indices become int64 (copied), as torch's indexing
        wants. In a pass on a device (``batches(device=...)``) the default
        device is the pass's, and x is the persistent device copy gnnrun's
        update kept current (read-only too, no copy); with another device,
        everything is copied there."""
        import torch

        dev = _torch_device(torch, device) if device is not None else self._device

        def t(a, long=False):
            if a is None:
                return None
            out = torch.from_numpy(a.astype(np.int64)) if long else _readonly_tensor(a)
            return out.to(dev) if dev is not None else out

        tb = TorchBatch()
        for k in ("kind", "epoch", "number", "seq", "padding", "end_of_epoch", "last_of_epoch", "num_seeds"):
            setattr(tb, k, getattr(self, k))
        if self._dev_x is not None and dev == self._device:
            tb.x = _readonly_view(self._dev_x)
        else:
            tb.x = t(self.x)
        tb.y = t(self.y)
        tb.input_slots = t(self.input_slots, True)
        tb.input_ntype, tb.input_type_id = t(self.input_ntype, True), t(self.input_type_id, True)
        tb.blocks = [Block(t(b.src, True), t(b.dst, True), b.num_src, b.num_dst, t(b.etype, True)) for b in self.blocks]
        tb._batch, tb._t = self, t
        tb.pos = tuple(t(a, True) for a in self.pos) if self.pos else None
        tb.neg = tuple(t(a, True) for a in self.neg) if self.neg else None
        return tb

    def __repr__(self):
        return "Batch(%s, epoch %d, number %d, %d input rows, %s)" % (
            self.kind, self.epoch, self.number, len(self.input_slots), self.blocks)


class TorchBatch:
    """A Batch as torch tensors (Batch.torch): the same fields."""

    def rows_of_type(self, ntype):
        """Batch.rows_of_type as an int64 tensor."""
        return self._t(self._batch.rows_of_type(ntype), True)

    def x_of(self, ntype):
        """Batch.x_of: ntype's rows of x at its own width (an ordinary
        tensor, on x's device)."""
        w = self._batch._types.width(ntype)
        return self.x.index_select(0, self.rows_of_type(ntype))[:, :w]

    def __repr__(self):
        return "TorchBatch(%s, epoch %d, number %d, %s)" % (self.kind, self.epoch, self.number, self.blocks)


def _torch_device(torch, device):
    """device as a torch.device with its index: "cuda" is the current
    GPU ("cuda:N"), so that it compares equal to the pass's device."""
    d = torch.device(device)
    if d.type == "cuda" and d.index is None:
        d = torch.device("cuda", torch.cuda.current_device() if torch.cuda.is_available() else 0)
    return d


class _Types:
    """The graph's node types as the hello names them."""

    def __init__(self, hello):
        self.names = hello.get("ntypes") or []
        self.shapes = hello.get("feature_shapes") or {}

    def index(self, ntype):
        if isinstance(ntype, str):
            if ntype not in self.names:
                raise KeyError("gnnrun: no node type %r (the graph's: %s)" % (ntype, self.names))
            return self.names.index(ntype)
        return int(ntype)

    def width(self, ntype):
        """The width of the type's feature rows (None: x's whole rows)."""
        if not self.names:
            return None
        name = self.names[self.index(ntype)]
        shape = self.shapes.get(name)
        if shape is None:
            raise ValueError("gnnrun: node type %r has no features: its rows of x are zero; use input_type_id "
                             "(e.g. with an nn.Embedding of num_nodes[%r] rows)" % (name, name))
        return shape[0] if len(shape) == 1 else None


_readonly_cls = None


def _readonly_tensor(a):
    """A torch tensor sharing a's memory that refuses in-place writes, and
    whose views (slices, reshapes) refuse them too."""
    import torch

    with warnings.catch_warnings():
        # from_numpy warns that the array is not writable: that is the point.
        warnings.simplefilter("ignore", UserWarning)
        return _readonly_view(torch.from_numpy(a))


def _readonly_view(t):
    """A read-only view of tensor t (a shared buffer's, or a device
    mirror's rows)."""
    global _readonly_cls
    import torch

    if _readonly_cls is None:
        _readonly_cls = _make_readonly_class(torch)
    return t.as_subclass(_readonly_cls)


# In-place operations whose names do not end in "_".
_INPLACE_DUNDERS = frozenset(
    "__setitem__ __iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ "
    "__iand__ __ior__ __ixor__ __ilshift__ __irshift__ __imatmul__".split())
# Methods ending in "_" that change no element.
_HARMLESS = frozenset(["requires_grad_", "share_memory_", "retain_grad"])


def _storage_ptr(t):
    """The address of t's storage: untyped_storage (PyTorch 2) where it
    exists, since storage() warns there that TypedStorage is deprecated."""
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage().data_ptr()
    return t.storage().data_ptr()


def _make_readonly_class(torch):
    def shares(out, ro):
        return isinstance(out, torch.Tensor) and out.device == ro.device and _storage_ptr(out) == _storage_ptr(ro)

    def writes(name, args, kwargs):
        if name in _INPLACE_DUNDERS or (name.endswith("_") and not name.startswith("__") and name not in _HARMLESS):
            return bool(args) and isinstance(args[0], ReadOnlyTensor)
        if kwargs.get("inplace") and args and isinstance(args[0], ReadOnlyTensor):
            return True
        out = kwargs.get("out")
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return any(isinstance(o, ReadOnlyTensor) for o in outs)

    class ReadOnlyTensor(torch.Tensor):
        """A read-only tensor over gnnrun's shared memory: the device cache
        reuses these rows for later batches, so writing them would corrupt
        those. Results of operations are ordinary tensors, except views of
        this one's memory, which stay read-only."""

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            if writes(name, args, kwargs):
                raise RuntimeError(
                    "gnnrun: batch features are read-only (%s would write them in place, and the device cache "
                    "reuses these rows for later batches): use an out-of-place op, or copy with .clone()" % name)
            with torch._C.DisableTorchFunction():
                out = func(*args, **kwargs)
                ro = [a for a in args if isinstance(a, ReadOnlyTensor)]
                return _wrap(out, ro)

    def _wrap(out, ro):
        if isinstance(out, (tuple, list)):
            return type(out)(_wrap(o, ro) for o in out)
        if isinstance(out, torch.Tensor) and type(out) is not ReadOnlyTensor and any(shares(out, r) for r in ro):
            return out.as_subclass(ReadOnlyTensor)
        if type(out) is ReadOnlyTensor and not any(shares(out, r) for r in ro):
            return out.as_subclass(torch.Tensor)
        return out

    return ReadOnlyTensor


class _Channel:
    """The control socket, the shared buffers it introduced, the batches
    this trainer holds (one, or two when a device pass fetched the next
    ahead), and the mirrors of the buffers on the devices passes used."""

    def __init__(self):
        fd = os.environ.get("GNNRUN_CONTROL_FD")
        if fd is None:
            raise RuntimeError("gnnrun: this process was not started by `gnnrun train` (no GNNRUN_CONTROL_FD)")
        self.sock = socket.socket(fileno=int(fd))
        self.maps = {}
        self.wait = self.handoff = 0.0
        self.count = 0
        self.ahead = 0  # batches fetched ahead
        self.held = []  # (slot, seq) of the batches handed out and not released, oldest first
        self.current = None  # the batch handed out last, by any pass
        self.pending = None  # a batch fetched ahead, not handed out yet
        self.ended = False
        self.sides = {}  # torch device -> _device.DeviceSide
        self.seen = set()  # buffers a batch used
        _watch_parent()
        self.hello = self.recv()
        if self.hello.get("type") != "hello" or self.hello.get("protocol") != PROTOCOL:
            raise RuntimeError("gnnrun: unexpected first message %r (protocol %d expected): "
                               "is this client as new as the gnnrun binary?" % (self.hello, PROTOCOL))
        self.types = _Types(self.hello)
        # Where the stream is: a batch's position is (epoch, its kind's
        # place: train first, then the evaluation sets in --eval order).
        self.kinds = ["train"] + [e["name"] for e in self.hello.get("eval") or []]
        self.consumed = (-1, -1)  # the position of the last batch handed out or skipped
        self.skipped = 0
        self.next_train = self.hello.get("start_epoch", 0)  # the epoch the next training pass takes
        self.last_train = None  # the epoch of the last training pass begun
        self.train_pass = None  # a weak reference to that pass
        self.eval_passes = set()  # (set, epoch) of the evaluation passes begun
        self.warned_past = False
        self.due = None  # the checkpoint of the batch handed last, until saved or passed
        self.stop_asked = False

    def position(self, b):
        return (b.epoch, self.kinds.index(b.kind))

    def unwanted(self, b):
        """An evaluation batch with nothing in it, which no loop is handed
        (unless gnnrun train --pad empty)."""
        return b.kind != "train" and b.items == 0 and self.hello.get("pad") != "empty"

    def per_epoch(self, split):
        """The batches of split this trainer is handed per epoch."""
        if split == "train":
            return self.hello["batches_per_epoch"]
        for e in self.hello.get("eval") or []:
            if e["name"] == split:
                return e["batches"]
        raise ValueError("gnnrun: no split %r: this run has %s (gnnrun train --eval names the evaluation sets)"
                         % (split, ", ".join(repr(k) for k in self.kinds)))

    def evaluates(self, epoch):
        """Whether the evaluation sets follow epoch (gnnrun train --eval-every)."""
        h = self.hello
        every = h.get("eval_every", 1)
        return bool(h.get("eval")) and ((epoch + 1) % every == 0 or epoch == h["epochs"] - 1)

    def skip(self, b):
        """Releases b unseen: a batch no loop asked for."""
        self.consumed = max(self.consumed, self.position(b))
        self.skipped += 1
        self.release(b)

    def seek(self, target, side):
        """The stream's next batch at position target, skipping (releasing)
        those before it and the unwanted; None when the next is past it
        (it stays for a later pass) or the stream has ended."""
        while True:
            b = self.take(side)
            if b is None:
                return None
            pos = self.position(b)
            if pos < target or self.unwanted(b):
                self.skip(b)
                continue
            if pos > target:
                self.pending = b
                return None
            self.consumed = pos
            return b

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
            # Read-only: the device buffers are the cache later batches reuse.
            self.maps[nb["id"]] = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ) if size else None
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
            a = np.empty(shape, dtype)
            a.flags.writeable = False
            return a
        return np.frombuffer(self.maps[ref["buf"]], dtype=dtype, count=n, offset=ref["offset"]).reshape(shape)

    def side(self, device, mirror):
        """The mirrors on device (None: host views, no mirror): device None
        is the hello's; "cpu" without mirror is the host views."""
        if device is None:
            device = self.hello.get("device", "cpu")
        if str(device) == "cpu" and not mirror:
            return None
        import torch

        from . import _device

        d = _torch_device(torch, device)
        if d not in self.sides:
            side = _device.DeviceSide(torch, d, self.hello)
            for buf in self.seen:
                side.missed(buf)
            self.sides[d] = side
        return self.sides[d]

    def release(self, b):
        """Tells gnnrun this trainer is done with batch b, if it holds it."""
        key = (b.slot, b.seq)
        if key not in self.held:
            return
        self.held.remove(key)
        try:
            self.sock.send(json.dumps({"type": "done", "slot": key[0], "seq": key[1], "wait": self.wait}).encode())
        except OSError as e:
            raise GnnrunGone("gnnrun: the gnnrun rank feeding this trainer is gone (%s)" % e) from None

    def sent(self):
        """Whether a message waits on the socket (the next one is at hand)."""
        return bool(select.select([self.sock], [], [], 0)[0])

    def pass_due(self):
        """The trainer asks for the next batch: a checkpoint due and not
        saved is passed (gnnrun learns it will lack this trainer's part)."""
        if self.due is not None:
            name, self.due = self.due["name"], None
            self._send({"type": "nosave", "name": name, "wait": self.wait})

    def _send(self, msg):
        try:
            self.sock.send(json.dumps(msg).encode())
        except OSError as e:
            raise GnnrunGone("gnnrun: the gnnrun rank feeding this trainer is gone (%s)" % e) from None

    def release_current(self):
        """Releases the batch handed out last (its device's trainer stream
        marks the end of its use first)."""
        b, self.current = self.current, None
        if b is not None:
            if b._side is not None:
                b._side.done_with(b)
            self.release(b)

    def take(self, side):
        """The next batch (held until released), its update applied to the
        mirror of side (None: host views only), or None at the end."""
        if self.pending is not None:
            b, self.pending = self.pending, None
            if b._side is not side:
                self._catch_up(b, side)
            return b
        if self.ended:
            return None
        msg = self.recv()
        if msg["type"] == "end":
            self.ended = True
            return None
        if msg["type"] == "stop":
            raise CheckpointStop()
        t0 = time.perf_counter()
        b = Batch(msg, self.view, self.types)
        b._msg = msg
        self.handoff += time.perf_counter() - t0
        self.count += 1
        self.held.append((b.slot, b.seq))
        buf = b._update_buffer
        for other in self.sides.values():
            if other is not side:
                other.missed(buf)
        self.seen.add(buf)
        if side is not None:
            side.apply(b, msg, self.view)
        return b

    def _catch_up(self, b, side):
        """b was fetched ahead for another pass's device: the mirror of
        side copies b's buffer whole (the other side applied its update)."""
        b._device = b._dev_x = b._ready = b._side = None
        if side is not None:
            side.missed(b._update_buffer)
            side.apply(b, b._msg, self.view)


_channel = None


def _get():
    global _channel
    if _channel is None:
        _channel = _Channel()
    return _channel


def hello():
    """What gnnrun says of the run: rank, world_size, task, feature_dtype,
    feature_shape (of x's rows: the widest node type's), classes (node
    tasks with labels), epochs, batches_per_epoch, eval (the evaluation
    sets' names and batches), ntypes and etypes (type names, in type-index
    order; edge types as "src:rel:dst"), feature_shapes ({ntype: its rows'
    shape, or None without features}), num_nodes ({ntype: nodes})."""
    return dict(_get().hello)


class _Pass:
    """One pass over the stream: an iterator that hands out batches, and
    releases the batch it gave last when asked for the next, when it
    stops, when closed, or when dropped (``break``, an exception). On a
    device it fetches the next batch ahead when gnnrun has sent it, so
    that batch's copy runs while the trainer's work on this one does; a
    batch fetched ahead stays for the next pass. This one hands out every
    batch of the stream but the unwanted (Channel.unwanted), until the
    end; _SplitPass hands out one epoch of one split."""

    def __init__(self, device=None, mirror=False):
        self.ch = _get()
        self.side = self.ch.side(device, mirror)
        self.done = False
        self.mine = None  # the batch this pass handed out last

    def __iter__(self):
        return self

    def __next__(self):
        ch = self.ch
        ch.pass_due()
        ch.release_current()  # whichever pass handed it out
        self.mine = None
        b = None if self.done else self._next()
        if b is None:
            self.done = True
            raise StopIteration
        ch.current = self.mine = b
        if b.checkpoint is not None:
            ch.due = b.checkpoint
        if self.side is not None:
            # Fetch the next batch ahead only if gnnrun has sent it: waiting
            # here would hold this batch back until gnnrun refilled the
            # buffer just released.
            if not self.done and ch.pending is None and ch.sent():
                ch.pending = ch.take(self.side)
                ch.ahead += ch.pending is not None
            self.side.ready(b)
        return b

    def _next(self):
        """The next batch to hand out, or None."""
        ch = self.ch
        while True:
            b = ch.take(self.side)
            if b is None or not ch.unwanted(b):
                break
            ch.skip(b)
        if b is not None:
            ch.consumed = max(ch.consumed, ch.position(b))
        return b

    def close(self):
        """Releases the batch this pass handed out last; the pass ends."""
        self.done = True
        if self.mine is not None and self.ch.current is self.mine:
            self.ch.release_current()
        self.mine = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # the rank may be gone; nothing to release then
            pass


class _SplitPass(_Pass):
    """One epoch of one split: a training pass takes the next epoch; an
    evaluation pass, the set's batches after the last training epoch
    begun. Batches before them in the stream are skipped."""

    def __init__(self, split, device=None, mirror=False):
        super().__init__(device, mirror)
        ch = self.ch
        self.split, self.left = split, ch.per_epoch(split)
        if split == "train":
            self.epoch = ch.next_train
            ch.next_train += 1
            resume = ch.hello.get("resume")
            if resume and self.epoch == resume["epoch"]:
                self.left = resume["batches"]  # the rest of the epoch a checkpoint stopped in
            # A weak reference: a pass left by break must be dropped (and
            # release its batch) as the loop ends.
            ch.last_train, ch.train_pass = self.epoch, weakref.ref(self)
            if self.epoch >= ch.hello["epochs"]:
                self.left = 0
                if not ch.warned_past:
                    ch.warned_past = True
                    warnings.warn("gnnrun: the run has %d epochs (gnnrun train --epochs): training pass %d gets no "
                                  "batches" % (ch.hello["epochs"], self.epoch + 1), RuntimeWarning, stacklevel=3)
        else:
            self.epoch = self._eval_epoch()
        self.target = (self.epoch, ch.kinds.index(split))

    def _eval_epoch(self):
        """The epoch whose batches of this evaluation set this pass takes;
        RuntimeError when the stream cannot give them."""
        ch, split = self.ch, self.split
        e = ch.last_train
        if e is None:
            raise RuntimeError("gnnrun: loader(%r) gives the %s batches that follow a training epoch: iterate "
                               "loader('train') first" % (split, split))
        tp = ch.train_pass() if ch.train_pass is not None else None
        if tp is not None and not tp.done:
            raise RuntimeError("gnnrun: loader(%r) inside the training loop of epoch %d: the %s batches follow all "
                               "of the epoch's training batches; evaluate after the training loop, or break out "
                               "of it first" % (split, e, split))
        if not ch.evaluates(e):
            raise RuntimeError("gnnrun: no %s batches follow epoch %d: gnnrun train --eval-every %d evaluates after "
                               "every %d-th epoch and the last" % (split, e, ch.hello.get("eval_every", 1),
                                                                   ch.hello.get("eval_every", 1)))
        if (split, e) in ch.eval_passes:
            raise RuntimeError("gnnrun: loader(%r) was iterated already after epoch %d: each evaluation batch is "
                               "handed out once; take everything you need from it in one pass" % (split, e))
        if ch.consumed > (e, ch.kinds.index(split)):
            raise RuntimeError("gnnrun: the %s batches of epoch %d have gone by: iterate the evaluation loaders in "
                               "the order of gnnrun train --eval (%s)" % (split, e, ", ".join(ch.kinds[1:])))
        ch.eval_passes.add((split, e))
        return e

    def _next(self):
        if self.left <= 0:
            return None
        b = self.ch.seek(self.target, self.side)
        if b is not None:
            self.left -= 1
        return b


class Loader:
    """One split's batches, re-iterable like a PyTorch ``DataLoader``:
    each ``for b in loader`` is one epoch. The training loader's next
    ``for`` is the next epoch; an evaluation loader's gives its set's
    batches after the last training epoch begun. ``len(loader)`` is the
    split's batches per epoch on this rank (never an empty one)."""

    def __init__(self, split="train", device=None, mirror=False):
        self.split, self.device, self.mirror = split, device, mirror
        _get().per_epoch(split)  # an unknown split fails here

    def __iter__(self):
        return _SplitPass(self.split, self.device, self.mirror)

    def __len__(self):
        return _get().per_epoch(self.split)

    def __repr__(self):
        return "gnnrun.Loader(%r, %d batches an epoch)" % (self.split, len(self))


def loader(split="train", device=None, mirror=False):
    """The batches of one split, an epoch per iteration, as DGL and PyG
    scripts hold them: ``train_loader = gnnrun.loader("train")``,
    ``val_loader = gnnrun.loader("val")``; the evaluation sets are those
    of ``gnnrun train --eval`` (named by their masks without "_mask":
    "val", "test"). device and mirror as for batches()."""
    return Loader(split, device, mirror)


def batches(device=None, mirror=False):
    """An iterator over every batch gnnrun hands this trainer, in order,
    every kind (``b.kind``), until the end of the run. Asking for the next
    batch, leaving the loop (break, an exception) or close() releases the
    batch held; a new ``batches()`` goes on where the stream is.

    device: where ``b.torch()`` puts the batch: None for the hello's
    device (``gnnrun train --device``: the rank's GPU, else "cpu"), or a
    torch device ("cuda" is the current GPU). On a GPU, x is a persistent
    tensor per gnnrun buffer that each batch's update keeps equal to it,
    copying only the rows gnnrun copied (see gnnrun._device). On "cpu", x
    is the shared buffer itself, unless mirror=True keeps the same
    persistent tensor on the CPU (the GPU's code path, for tests)."""
    return _Pass(device, mirror)


def log(**values):
    """Figures of this trainer for gnnrun's progress lines and report:
    ``gnnrun.log(loss=loss, val_acc=acc)``. Numbers (or one-element
    tensors) only. Each is attributed to the training epoch last begun;
    gnnrun averages a name's values over the epoch's calls on this rank,
    then over the ranks that logged it, prints them in the epoch's line on
    rank 0 and keeps them per epoch in ``--report``
    (results.train.epochs)."""
    ch = _get()
    out = {}
    for k, v in values.items():
        if hasattr(v, "item"):
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError("gnnrun.log: %s=%r is not a number" % (k, v))
        v = float(v)
        # JSON has no NaN or infinity: those travel as strings.
        out[k] = v if math.isfinite(v) else repr(v)
    epoch = ch.last_train if ch.last_train is not None else -1
    try:
        ch.sock.send(json.dumps({"type": "log", "epoch": epoch, "values": out, "wait": ch.wait}).encode())
    except OSError as e:
        raise GnnrunGone("gnnrun: the gnnrun rank feeding this trainer is gone (%s)" % e) from None


def checkpoint_due():
    """Whether gnnrun asks this trainer for its state now: True after the
    training step of a batch gnnrun marked, until gnnrun.save() or the
    next batch. Ask after each step::

        for b in train_loader:
            step(b)
            if gnnrun.checkpoint_due():
                gnnrun.save({"model": model.state_dict(), "opt": opt.state_dict()})

    (gnnrun train --checkpoint DIR: every --checkpoint-every, and after a
    SIGTERM or SIGUSR1.) A trainer that never saves gets no checkpoint."""
    ch = _get()
    return ch.due is not None


def save(obj):
    """Saves this trainer's part of the checkpoint due (anything
    torch.save takes: state_dicts, RNG states, the epoch's running
    figures) into the checkpoint's directory, durably, and tells gnnrun;
    gnnrun commits the checkpoint once every rank's part is in. Only when
    checkpoint_due() is True."""
    import torch

    ch = _get()
    if ch.due is None:
        raise RuntimeError("gnnrun.save outside a checkpoint: call it when gnnrun.checkpoint_due() is True")
    t0 = time.perf_counter()
    name = ch.due["name"]
    staging = os.path.join(ch.hello["checkpoint"]["dir"], name + ".staging")
    os.makedirs(staging, exist_ok=True)
    fname = "trainer-rank%d.pt" % ch.hello["rank"]
    tmp = os.path.join(staging, "." + fname + ".tmp")
    with open(tmp, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
        size = f.tell()
    os.rename(tmp, os.path.join(staging, fname))
    ch.due = None
    ch._send({"type": "saved", "name": name, "file": fname, "bytes": size, "seconds": time.perf_counter() - t0,
              "wait": ch.wait})


def restore():
    """The state this trainer saved in the checkpoint the run resumes
    from (torch.load of it, tensors on the CPU), or None on a fresh start.
    At the checkpoint's rank count each rank gets its own part; at
    another, rank 0's (the state of synchronous SGD is the same on every
    rank). hello()["resume"] says where the stream resumes."""
    import torch

    resume = _get().hello.get("resume")
    if not resume:
        return None
    return torch.load(resume["part"], map_location="cpu")


def stats():
    """This trainer's side of the hand-off: batches received, skipped
    (no loop asked for them), seconds waiting for them (wait_s), seconds turning messages into views (handoff_s),
    batches a device pass fetched ahead (fetched_ahead), and
    per device a pass used (devices: {name: {...}}): bytes_copied and
    rows_copied (host rows copied into the mirrors for the batches'
    updates: gnnrun's bytes_to_device when every batch was taken on that
    device), bytes_hot (the hot cache, once), bytes_full (whole buffers
    copied after batches taken elsewhere), update_s (host seconds
    applying updates)."""
    ch = _get()
    out = {"batches": ch.count, "skipped": ch.skipped, "wait_s": ch.wait, "handoff_s": ch.handoff, "fetched_ahead": ch.ahead,
           "devices": {str(d): s.stats() for d, s in ch.sides.items()}}
    if len(ch.sides) == 1:
        out.update(next(iter(ch.sides.values())).stats())
    return out


def _watch_parent():
    """End this trainer with a clear error when its gnnrun rank dies: a
    SIGTERM (gnnrun stops its trainer so, and the kernel sends one when
    the gnnrun rank dies) raises GnnrunGone in the main thread, and a
    watchdog notices the parent gone even if the signal was missed."""
    parent = os.getppid()

    def on_term(signum, frame):
        ch = _channel
        if ch is not None and ch.hello.get("checkpoint") and not ch.stop_asked:
            # gnnrun takes the same signal: it checkpoints, then stops
            # this trainer (a message, or SIGTERM again).
            ch.stop_asked = True
            sys.stderr.write("gnnrun: SIGTERM: training goes on to gnnrun's checkpoint, then stops\n")
            return
        raise GnnrunGone("gnnrun: stopped by SIGTERM (the job is ending: a gnnrun rank failed, or it was cancelled)")

    def on_usr1(signum, frame):
        # Slurm's warning (srun signals every process of the step): gnnrun
        # takes it, checkpoints if asked to, and stops this trainer.
        sys.stderr.write("gnnrun: SIGUSR1: left to gnnrun (a checkpoint, then a stop, with --checkpoint)\n")

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_term)
        if signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL:
            signal.signal(signal.SIGUSR1, on_usr1)

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                sys.stderr.write("gnnrun: the gnnrun rank feeding this trainer is gone; exiting\n")
                sys.stderr.flush()
                os._exit(1)

    threading.Thread(target=watch, name="gnnrun-watchdog", daemon=True).start()
