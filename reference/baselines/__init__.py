"""The papers' comparison methods (non-private histogram CART, DiffPrivLib-style tree, BDPT, DPGDF, DPA, ...)."""
