"""The trainer's persistent copy of gnnrun's device buffers.

gnnrun keeps each batch's feature rows in a few shared host buffers (its
device cache: batch k uses buffer k mod ``device_buffers``), and updates a
buffer in place from its previous batch: rows moved within it, rows copied
from the hot cache, rows zeroed, and only the rows it lacked copied in.
A trainer on a GPU keeps one persistent tensor per buffer (a mirror) and
applies each batch's update the same way, so the bytes crossing PCIe are
the rows gnnrun copied (its ``bytes_to_device``), not the whole batch.

On a GPU the updates run on a side stream:

1. A batch's update first waits (``side.wait_event``) for the event
   recorded on the trainer's stream when the trainer asked for the batch
   after the last one that used the same buffer: the trainer's queued work
   on that buffer's rows is done before they change.
2. The rows to copy are gathered on the CPU from the shared buffer into a
   pinned staging buffer (two, used in turn: a staging buffer is reused
   only after its copy's event), copied with ``non_blocking=True``, and
   scattered into the mirror with ``index_copy_``; moves and hot rows are
   device-to-device.
3. An event recorded after the update is what the trainer's stream waits
   for before the batch is handed out (``wait_event``: the host does not
   block).

The client fetches one batch ahead when gnnrun has sent it, so batch
i+1's update is queued while the trainer's kernels of batch i still run
(it never waits for one: gnnrun may need the buffer just released to make
it). With ``device="cpu",
mirror=True`` the same code keeps the mirror in CPU memory, synchronously:
that is how the tests prove, batch by batch, that a mirror equals gnnrun's
buffer and that it copied exactly ``bytes_to_device``.
"""

import time
import warnings

import numpy as np

_UPDATE_ARRAYS = ("up_moves_from", "up_moves_to", "up_hot_slots", "up_hot_rows", "up_zero_slots", "up_fetch_slots")


class _Mirror:
    """One buffer's persistent tensor: rows 0..rows-1 equal gnnrun's
    buffer after the last update applied; synced is False when an update
    was missed (a batch taken without this device), until a full copy."""

    def __init__(self):
        self.t = None
        self.rows = 0
        self.synced = True

    def ensure(self, torch, rows, row_shape, dtype, device):
        """Makes room for rows rows, keeping the rows held (a quarter more
        than asked, so growth is rare; never shrinks)."""
        if self.t is not None and self.t.shape[0] >= rows:
            return
        t = torch.empty((rows + rows // 4,) + row_shape, dtype=dtype, device=device)
        if self.t is not None and self.rows:
            t[: self.rows].copy_(self.t[: self.rows])
        self.t = t


class _Staging:
    """Pinned host memory the fetched rows pass through, two buffers used
    in turn, each reused only after the copy that read it completed."""

    def __init__(self, torch):
        self.torch = torch
        self.bufs = [None, None]
        self.events = [None, None]
        self.next = 0

    def take(self, nbytes):
        torch = self.torch
        k = self.next
        self.next ^= 1
        if self.events[k] is not None:
            self.events[k].synchronize()
            self.events[k] = None
        if self.bufs[k] is None or self.bufs[k].numel() < nbytes:
            self.bufs[k] = torch.empty(max(nbytes + nbytes // 4, 1 << 16), dtype=torch.uint8, pin_memory=True)
        return k, self.bufs[k]

    def used(self, k, event):
        self.events[k] = event


class DeviceSide:
    """The mirrors of gnnrun's buffers on one torch device, and what they
    copied: bytes_copied (rows copied from the host for the updates: equal
    to gnnrun's bytes_to_device when every batch was taken on this
    device), bytes_hot (the hot cache's rows, copied once), bytes_full
    (whole buffers copied after batches taken without this device)."""

    def __init__(self, torch, device, hello):
        self.torch = torch
        self.device = device
        self.cuda = device.type == "cuda"
        if self.cuda and not torch.cuda.is_available():
            raise RuntimeError("gnnrun: device %s asked for, but this trainer's torch sees no usable GPU "
                               "(torch.cuda.is_available() is False; torch %s)" % (device, torch.__version__))
        self.np_dtype = np.dtype(hello["feature_dtype"])
        self.dtype = torch.from_numpy(np.zeros(1, self.np_dtype)).dtype
        self.row_shape = tuple(hello["feature_shape"])
        self.row_bytes = int(np.prod(self.row_shape, dtype=np.int64)) * self.np_dtype.itemsize
        self.mirrors = {}
        self.hot = {}  # buffer id -> its rows on the device
        self.last_use = {}  # buffer -> event on the trainer's stream after its batch's work
        self.stream = torch.cuda.Stream(device=device) if self.cuda else None
        self.staging = _Staging(torch) if self.cuda else None
        self.bytes_copied = self.rows_copied = self.bytes_hot = self.bytes_full = 0
        self.apply_s = 0.0

    def mirror(self, buf):
        m = self.mirrors.get(buf)
        if m is None:
            m = self.mirrors[buf] = _Mirror()
        return m

    def missed(self, buf):
        """A batch of buffer buf was taken without this device (or before
        it was used): the mirror lacks its update until a full copy."""
        self.mirror(buf).synced = False

    def apply(self, b, msg, view):
        """Applies batch b's update (msg["update"]) to its buffer's mirror
        and sets b's device view of x and the event it is ready at."""
        t0 = time.perf_counter()
        up = msg["update"]
        buf, rows = up["buffer"], up["rows"]
        m = self.mirror(buf)
        if self.cuda:
            with self.torch.cuda.stream(self.stream):
                ev = self.last_use.pop(buf, None)
                if ev is not None:
                    self.stream.wait_event(ev)
                self._update(m, b.x, msg, view)
                ready = self.torch.cuda.Event()
                ready.record(self.stream)
        else:
            self._update(m, b.x, msg, view)
            ready = None
        b._device, b._dev_x, b._ready, b._side = self.device, m.t[:rows], ready, self
        self.apply_s += time.perf_counter() - t0

    def _update(self, m, x, msg, view):
        """Turns mirror m into x, gnnrun's buffer after msg's update."""
        torch = self.torch
        up = msg["update"]
        rows = up["rows"]
        host = self._host(x)
        if not m.synced:
            m.ensure(torch, rows, self.row_shape, self.dtype, self.device)
            m.t[:rows].copy_(host[:rows], non_blocking=False)
            self.bytes_full += rows * self.row_bytes
            m.rows, m.synced = rows, True
            return
        m.ensure(torch, max(m.rows, rows), self.row_shape, self.dtype, self.device)
        a = {k: view(msg["arrays"][k]) for k in _UPDATE_ARRAYS}
        if len(a["up_moves_from"]):
            to, frm = self._index(a["up_moves_to"]), self._index(a["up_moves_from"])
            # index_select reads every source before index_copy_ writes.
            m.t.index_copy_(0, to, m.t.index_select(0, frm))
        if len(a["up_hot_slots"]):
            hot = self._hot(up["hot"], view)
            m.t.index_copy_(0, self._index(a["up_hot_slots"]), hot.index_select(0, self._index(a["up_hot_rows"])))
        if len(a["up_zero_slots"]):
            m.t.index_fill_(0, self._index(a["up_zero_slots"]), 0)
        fetch = a["up_fetch_slots"]
        if len(fetch):
            rows_in = self._copy_rows(host, fetch)
            m.t.index_copy_(0, self._index(fetch), rows_in)
            self.bytes_copied += len(fetch) * self.row_bytes
            self.rows_copied += len(fetch)
        m.rows = rows

    def _host(self, x):
        with warnings.catch_warnings():
            # The shared buffer is read-only; nothing here writes it.
            warnings.simplefilter("ignore", UserWarning)
            return self.torch.from_numpy(x)

    def _index(self, a):
        t = self.torch.from_numpy(a.astype(np.int64))
        return t.to(self.device, non_blocking=True) if self.cuda else t

    def _copy_rows(self, host, fetch):
        """The host rows at fetch, on the device: gathered into pinned
        staging, then one asynchronous copy."""
        torch = self.torch
        idx = torch.from_numpy(fetch.astype(np.int64))
        if not self.cuda:
            return host.index_select(0, idx)
        n = len(fetch)
        k, stage = self.staging.take(n * self.row_bytes)
        rows = stage[: n * self.row_bytes].view(self.dtype).view((n,) + self.row_shape)
        torch.index_select(host, 0, idx, out=rows)
        dev = rows.to(self.device, non_blocking=True)
        done = torch.cuda.Event()
        done.record(self.stream)
        self.staging.used(k, done)
        return dev

    def _hot(self, ref, view):
        t = self.hot.get(ref["buf"])
        if t is None:
            t = self._host(view(ref)).to(self.device)
            self.hot = {ref["buf"]: t}  # a new hot buffer replaces the old
            self.bytes_hot += t.numel() * t.element_size()
        return t

    def ready(self, b):
        """Makes the trainer's stream wait for b's update (the host does
        not block)."""
        if b._ready is not None:
            self.torch.cuda.current_stream(self.device).wait_event(b._ready)
            b._dev_x.record_stream(self.torch.cuda.current_stream(self.device))

    def done_with(self, b):
        """The trainer asked for the next batch: its work on b is queued.
        An event on its stream marks when b's buffer may change."""
        if self.cuda and getattr(b, "_side", None) is self:
            ev = self.torch.cuda.Event()
            ev.record(self.torch.cuda.current_stream(self.device))
            self.last_use[b._update_buffer] = ev

    def stats(self):
        return {"device": str(self.device), "bytes_copied": self.bytes_copied, "rows_copied": self.rows_copied,
                "bytes_hot": self.bytes_hot, "bytes_full": self.bytes_full, "update_s": self.apply_s}
