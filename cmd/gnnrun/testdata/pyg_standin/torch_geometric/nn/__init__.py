"""torch_geometric.nn.SAGEConv as PyG's documentation defines it:

    x'_i = W_1 x_i + W_2 mean_{j in N(i)} x_j

with in_channels a (source, target) pair for bipartite inputs, forward(x,
edge_index, size) where x is a (x_src, x_dst) pair, edge_index a [2, E]
int64 tensor of (source, target) indices ("source_to_target" flow), and
size (num_src, num_dst); lin_l (with the bias) transforms the aggregate,
lin_r the target's own row. Every call is checked against that contract."""

import torch
import torch.nn as nn


class SAGEConv(nn.Module):
    def __init__(self, in_channels, out_channels, bias=True):
        super().__init__()
        if isinstance(in_channels, int):
            in_channels = (in_channels, in_channels)
        self.lin_l = nn.Linear(in_channels[0], out_channels, bias=bias)
        self.lin_r = nn.Linear(in_channels[1], out_channels, bias=False)

    def forward(self, x, edge_index, size=None):
        if not isinstance(x, tuple) or len(x) != 2:
            raise TypeError("SAGEConv stand-in: x must be the (x_src, x_dst) pair of a bipartite input")
        x_src, x_dst = x
        if edge_index.dtype != torch.int64 or edge_index.dim() != 2 or edge_index.shape[0] != 2:
            raise TypeError("SAGEConv stand-in: edge_index must be a [2, E] int64 tensor, got %s %s"
                            % (edge_index.dtype, tuple(edge_index.shape)))
        if size is None or tuple(size) != (x_src.shape[0], x_dst.shape[0]):
            raise ValueError("SAGEConv stand-in: size %s is not (len(x_src), len(x_dst)) = (%d, %d)"
                             % (size, x_src.shape[0], x_dst.shape[0]))
        src, dst = edge_index
        if len(src) and (int(src.max()) >= size[0] or int(dst.max()) >= size[1] or int(src.min()) < 0 or int(dst.min()) < 0):
            raise IndexError("SAGEConv stand-in: an edge index outside size %s" % (size,))
        agg = torch.zeros(size[1], x_src.shape[1], dtype=x_src.dtype, device=x_src.device).index_add(0, dst, x_src[src])
        deg = torch.bincount(dst, minlength=size[1]).clamp(min=1).unsqueeze(1).to(x_src.dtype)
        return self.lin_l(agg / deg) + self.lin_r(x_dst)
