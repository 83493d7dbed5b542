#!/usr/bin/python3
"""A test trainer for heterogeneous batches (gnnrun train --ids on a
--hetero graph). Against the input graph ($GRAPH: its metadata.json, edge
chunks and feature chunks, in type-wise input IDs) it checks, every batch:

  - every block's edge types: edge i of block l, of type etype_l[i], is
    row ids/eid_l[i] of that type's input edges, which joins ids/src_l[i]
    to ids/dst_l[i];
  - every row's node type: the rows an edge's source and destination index
    (block l's indices are rows of x for every l: each block's nodes are
    the first rows of the one before) are of the edge type's source and
    destination types, the seeds' rows of the seed type, and every row is
    reached so;
  - every row's features: x_of(type) (numpy and torch) is the input's row
    at the type's own width, the rest of x's row zero; a featureless
    type's rows all zero;
  - the hello's ntypes, etypes, feature_shapes and num_nodes.

It writes $OUT_DIR/<rank>.json: the counts of checks and failures, the
(type, input ID, input_type_id) triples it saw, and its first errors.
"""

import json
import os
import sys

import numpy as np
import torch

import gnnrun

rank = int(os.environ["RANK"])
gdir = os.environ["GRAPH"]
md = json.load(open(os.path.join(gdir, "metadata.json")))


def chunks(spec):
    return np.concatenate([np.load(os.path.join(gdir, f)) for f in spec["data"]])


hello = gnnrun.hello()
ntypes, etypes = hello["ntypes"], hello["etypes"]
errors = []
if ntypes != md["node_type"] or etypes != md["edge_type"]:
    errors.append("hello: types %s %s, the input's %s %s" % (ntypes, etypes, md["node_type"], md["edge_type"]))
if hello["num_nodes"] != dict(zip(md["node_type"], md["num_nodes_per_type"])):
    errors.append("hello: num_nodes %s" % hello["num_nodes"])
edges = [chunks(md["edges"][et]) for et in etypes]
feat = {}
for nt in ntypes:
    spec = md["node_data"].get(nt, {}).get("feat")
    feat[nt] = chunks(spec) if spec else None
    want = list(feat[nt].shape[1:]) if spec else None
    if hello["feature_shapes"][nt] != want:
        errors.append("hello: feature_shapes[%s] = %s, the input's %s" % (nt, hello["feature_shapes"][nt], want))
width = max(f.shape[1] for f in feat.values() if f is not None)
if hello["feature_shape"] != [width]:
    errors.append("hello: feature_shape %s, want [%d]" % (hello["feature_shape"], width))
ends = [tuple(ntypes.index(x) for x in (et.split(":")[0], et.split(":")[2])) for et in etypes]

c = dict(batches=0, checked_edges=0, bad_etypes=0, checked_rows=0, bad_ntypes=0, unreached_rows=0, bad_rows=0)
triples = {}


def check(b):
    tb = b.torch()
    rows = len(b.input_slots)
    typ, ids = b.input_ntype, b.input_type_id
    orig = np.full(rows, -1, np.int64)  # each row's input ID, from the edges and seeds
    want_type = np.full(rows, -1, np.int64)
    orig[: b.num_seeds] = b.ids["seeds"]
    want_type[: b.num_seeds] = ntypes.index("user")
    for l, blk in enumerate(b.blocks):
        et = blk.etype.astype(np.int64)
        eid, s, d = b.ids["eid_%d" % l], b.ids["src_%d" % l], b.ids["dst_%d" % l]
        if not np.array_equal(tb.blocks[l].etype.numpy(), et):
            errors.append("batch %d block %d: the torch etype differs" % (b.number, l))
        for i in range(len(et)):
            c["checked_edges"] += 1
            if et[i] < 0 or et[i] >= len(etypes) or eid[i] >= len(edges[et[i]]) or tuple(edges[et[i]][eid[i]]) != (s[i], d[i]):
                c["bad_etypes"] += 1
                continue
            src, dst = int(blk.src[i]), int(blk.dst[i])
            for r, t, v in ((src, ends[et[i]][0], s[i]), (dst, ends[et[i]][1], d[i])):
                if want_type[r] not in (-1, t) or orig[r] not in (-1, v):
                    c["bad_ntypes"] += 1
                want_type[r], orig[r] = t, v
    c["unreached_rows"] += int((want_type < 0).sum())
    c["checked_rows"] += rows
    c["bad_ntypes"] += int((typ != want_type).sum())
    for t, nt in enumerate(ntypes):
        mine = b.rows_of_type(nt)
        if not np.array_equal(mine, np.flatnonzero(typ == t)) or not np.array_equal(tb.rows_of_type(t).numpy(), mine):
            errors.append("batch %d: rows_of_type(%s) wrong" % (b.number, nt))
        for r, v, k in zip(mine, orig[mine], ids[mine]):
            got = triples.setdefault((t, int(v)), int(k))
            if got != int(k):
                errors.append("node %s %d: input_type_id %d, earlier %d" % (nt, v, k, got))
        if feat[nt] is None:
            c["bad_rows"] += int(np.any(b.x[mine] != 0, axis=1).sum())
            try:
                b.x_of(nt)
                errors.append("x_of(%s) of a featureless type did not raise" % nt)
            except ValueError:
                pass
            continue
        w = feat[nt].shape[1]
        xs, want = b.x_of(nt), feat[nt][orig[mine]]
        bad = np.any(xs != want, axis=1) | np.any(b.x[mine][:, w:] != 0, axis=1)
        c["bad_rows"] += int(bad.sum())
        if xs.shape[1] != w or not np.array_equal(tb.x_of(nt).numpy(), xs):
            errors.append("batch %d: x_of(%s) has %d columns (want %d) or differs in torch" % (b.number, nt, xs.shape[1], w))


for b in gnnrun.batches():
    c["batches"] += 1
    if b.input_ntype is None or b.blocks[0].etype is None:
        errors.append("batch %d has no types" % b.number)
        break
    check(b)
    if len(errors) > 10:
        break

with open(os.path.join(os.environ["OUT_DIR"], "%d.json" % rank), "w") as f:
    json.dump(dict(c, errors=errors[:10], type_ids=[[t, v, k] for (t, v), k in triples.items()]), f)
sys.exit(1 if errors and c["batches"] == 0 else 0)
