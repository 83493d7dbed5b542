"""A stand-in for PyTorch Geometric in the tests, where PyG cannot be
installed (no package index): torch_geometric.nn.SAGEConv as PyG documents
it, written plainly, checking every call against PyG's documented contract
for bipartite inputs. It proves examples/pyg_sage.py calls the layer as PyG
defines the call; it is not PyG."""
