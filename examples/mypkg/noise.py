"""A user's Laplace mechanism (the README's first ``check`` example)."""


class MyLaplace:
    """Adds Laplace noise of scale ``1 / epsilon`` to a value of sensitivity 1: epsilon-DP."""

    def __init__(self, epsilon):
        self.scale = 1.0 / epsilon

    def __call__(self, value, rng):          # the mechanism contract: one output per call
        return float(value + rng.laplace(0, self.scale))
