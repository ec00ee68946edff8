"""numba kernels only: no strings, dicts or polars objects cross into them."""
