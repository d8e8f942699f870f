"""Turning a scikit-learn-style estimator into a mechanism over ``(X, y)``."""
from __future__ import annotations

from numbers import Real

import numpy as np

__all__ = ["learner_mechanism", "LearnerMechanism"]


def _flatten(obj, out):
    if isinstance(obj, (tuple, list)):
        for v in obj:
            _flatten(v, out)
    elif isinstance(obj, np.ndarray):
        for v in obj.ravel().tolist():
            out.append(v)
    else:
        out.append(obj)
    return out


def _has_float(obj) -> bool:
    return any(isinstance(v, (float, np.floating)) for v in _flatten(obj, []))


class LearnerMechanism:
    """``m((X, y), rng)``: fit a fresh estimator with a ``random_state`` drawn from ``rng`` and release it.

    The output is the estimator's ``release()`` when it has one, otherwise its
    predictions on the public ``probe`` points (post-processing of the fit, so
    any privacy loss seen there is a real loss of the learner).

    ``output`` decides how the auditor sees it: ``"discrete"`` (a hashable
    tuple, counted by value: whole released trees), ``"vector"`` (every
    number of the release, flattened to a float array: released leaf values),
    or ``"auto"`` (when the release holds floats, the vector of its numeric
    entries, structure labels such as strings dropped, which is
    post-processing and so sound; otherwise discrete).
    """

    def __init__(self, make_estimator, probe=None, output: str = "auto"):
        if not callable(make_estimator):
            raise TypeError(f"make_estimator must be a class or a zero-argument callable, got {make_estimator!r}")
        if output not in ("auto", "discrete", "vector"):
            raise ValueError(f"output must be 'auto', 'discrete' or 'vector', got {output!r}")
        self.make_estimator = make_estimator
        self.probe = None if probe is None else np.asarray(probe)
        self.output = output

    def _fit(self, data, rng):
        X, y = data
        est = self.make_estimator()
        seed = int(rng.integers(0, 2**31 - 1))
        if hasattr(est, "random_state"):  # what set_params does for a plain parameter, without its introspection
            est.random_state = seed
        elif hasattr(est, "get_params") and "random_state" in est.get_params(deep=False):
            est.set_params(random_state=seed)
        est.fit(X, y)
        return est

    def release_of(self, est):
        if callable(getattr(est, "release", None)):
            return est.release()
        if self.probe is None:
            raise ValueError(f"{type(est).__name__} has no release(); give learner_mechanism a public probe set")
        return tuple(est.predict(self.probe).tolist())

    def __call__(self, data, rng):
        released = self.release_of(self._fit(data, rng))
        kind = self.output
        if kind == "auto" and _has_float(released):
            return np.asarray([v for v in _flatten(released, []) if isinstance(v, (Real, np.number))], dtype=float)
        if kind == "vector":
            flat = _flatten(released, [])
            if not all(isinstance(v, (Real, np.number)) for v in flat):
                raise ValueError(f"output='vector' needs a numeric release, got {released!r}")
            return np.asarray(flat, dtype=float)
        return released if isinstance(released, tuple) else (released,)


def learner_mechanism(make_estimator, probe=None, output: str = "auto") -> LearnerMechanism:
    """Wrap an estimator factory into a mechanism over ``data = (X, y)`` (see :class:`LearnerMechanism`)."""
    return LearnerMechanism(make_estimator, probe, output)
