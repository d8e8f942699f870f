"""Monte Carlo checks of the papers' theorems, one module per paper."""
