"""Turning a scikit-learn-style estimator into a mechanism over ``(X, y)``."""
from __future__ import annotations

from numbers import Real

import numpy as np

from reference.randomness import seeded_fits

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

    Fast path: when the estimator declares a batched sampler of its releases
    (``batched_release_sampler``, :mod:`reference.fast_path`), ``batch(data,
    n, rng)`` draws the ``n`` releases through it (same law, another random
    stream); a learner without one, a subclass its sampler refuses, or a
    release read through ``probe`` predictions is fitted once per draw.
    """

    def __init__(self, make_estimator, probe=None, output: str = "auto"):
        if not callable(make_estimator):
            raise TypeError(f"make_estimator must be a class or a zero-argument callable, got {make_estimator!r}")
        if output not in ("auto", "discrete", "vector"):
            raise ValueError(f"output must be 'auto', 'discrete' or 'vector', got {output!r}")
        self.make_estimator = make_estimator
        self.probe = None if probe is None else np.asarray(probe)
        self.output = output

    #: keyword arguments of ``release()``
    release_kwargs: dict = {}

    def _sampler(self):
        """The estimator's declared batched sampler (built once), or None."""
        if not hasattr(self, "_fast"):
            self._fast = None
            # only when the way a release is read is LearnerMechanism's own (not replaced on a subclass or
            # on this instance), unless the owner declares its release_of compatible (``_fast_path_ok``)
            own = all(getattr(getattr(self, k), "__func__", None) is getattr(LearnerMechanism, k)
                      for k in ("_fit", "__call__", "release_of"))
            if own or getattr(self, "_fast_path_ok", False):
                from reference.fast_path import batched_sampler

                est = self.make_estimator()
                if callable(getattr(est, "release", None)):
                    self._fast = batched_sampler(est, **self.release_kwargs)
        return self._fast

    @property
    def batch(self):
        """``batch(data, n, rng)``: ``n`` independent outputs through the estimator's batched sampler; ``None``
        when it declares none (the auditor then calls the mechanism once per draw)."""
        sampler = self._sampler()
        if sampler is None:
            return None
        return lambda data, n, rng: [self._shape(r) for r in sampler.batch(data, n, rng)]

    def _fit(self, data, rng):
        X, y = data
        est = self.make_estimator()
        # the project's learners take a Generator: each fit gets a child of the run's SeedSequence (no seed
        # collisions across millions of fits); outside estimators get an integer (scikit-learn's take < 2**32)
        seed = rng.spawn(1)[0] if type(est).__module__.startswith(("reference.", "audit.")) else \
            int(rng.integers(0, 2**31 - 1))
        if hasattr(est, "random_state"):  # what set_params does for a plain parameter, without its introspection
            est.random_state = seed
        elif hasattr(est, "get_params") and "random_state" in est.get_params(deep=False):
            est.set_params(random_state=seed)
        with seeded_fits():  # the seed above decides the fit: same seed, same release (reference.randomness)
            est.fit(X, y)
        return est

    def release_of(self, est):
        if callable(getattr(est, "release", None)):
            return est.release(**self.release_kwargs)
        if self.probe is None:
            raise ValueError(f"{type(est).__name__} has no release(); give learner_mechanism a public probe set")
        return tuple(est.predict(self.probe).tolist())

    def __call__(self, data, rng):
        return self._shape(self.release_of(self._fit(data, rng)))

    def _shape(self, released):
        """A release as the auditor sees it (``output``)."""
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
