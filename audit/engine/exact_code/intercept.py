"""NumPy's randomness, intercepted: generators whose draws are decisions of the path being explored.

While :func:`intercepted` is active, every way ordinary code reaches NumPy's randomness gives it a
:class:`TracingGenerator` (the ``Generator`` API) or a :class:`TracingRandomState` (the legacy ``RandomState``
API), whatever seed it passes: ``np.random.default_rng(...)``, ``np.random.RandomState(...)``, the global
functions ``np.random.geometric(...)`` and friends, and the global ``RandomState`` scikit-learn's
``check_random_state(None)`` returns. Both draw through the active path
(:mod:`audit.engine.exact_code.symbolic`):

* finite laws are decided at once with their exact probabilities: ``integers`` / ``randint``, ``choice`` (with
  or without ``p``, with or without replacement), ``permutation``, ``shuffle``, ``binomial`` (of public ``n``);
* infinite laws are atoms: ``geometric`` and ``poisson``, and the project's own exact integer noise
  (:class:`reference.mechanisms.discrete_noise.DiscreteLaplaceLaw`, behind its Laplace and two-sided geometric
  mechanisms) as a two-sided geometric atom;
* ``random()`` / ``rand`` / ``random_sample``, ``uniform(low, high)`` and a two-class ``dirichlet((1, 1))``
  (``(U, 1 - U)``) are :class:`~symbolic.Uniform` draws, which the code may shift and scale by constants,
  compare with constants and keep in its release;
* every continuous law (``laplace``, ``normal``, ``exponential``, ...) raises
  :class:`~symbolic.Undecided` at its call site: its exact loss cannot be computed by enumeration.

Python's :mod:`random` module functions draw through the path too (``random()``, ``randint``, ``choice``,
``shuffle``, ``sample``; its continuous laws are undecided). Randomness reached some other way (a generator built
before the audit, ``secrets``, the OS) is not intercepted; the explorer detects it when a path run twice with the
same decisions gives two releases.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np
from scipy import stats

from audit.engine.exact_code.symbolic import Affine, Undecided, Uniform, active_path, call_site

__all__ = ["TracingGenerator", "TracingRandomState", "intercepted", "MAX_OPTIONS"]

#: the most values one finite draw may take (a seed drawn from the generator would take 2^31: undecided)
MAX_OPTIONS = 4096

_CONTINUOUS = ("laplace", "normal", "standard_normal", "exponential", "standard_exponential", "gamma", "beta",
               "gumbel", "logistic", "lognormal", "standard_cauchy", "standard_t", "chisquare", "f", "pareto",
               "rayleigh", "triangular", "vonmises", "wald", "weibull", "power", "dirichlet", "multivariate_normal",
               "randn", "standard_gamma", "noncentral_chisquare", "noncentral_f", "zipf", "logseries",
               "hypergeometric", "negative_binomial", "multinomial", "bytes")


def _refusal(name: str):
    """A draw of a continuous law: undecided at its call site, with the fix."""
    def refuse(*args, **kwargs):
        raise Undecided(f"a continuous draw ({name})", call_site(),
                        "use two-sided geometric noise (a difference of two geometric draws) or another discrete law")

    return refuse


def _shape(size):
    if size is None:
        return None
    return (int(size),) if np.ndim(size) == 0 else tuple(int(s) for s in size)


def _fill(size, one):
    """``one()`` once (``size`` None) or for every cell of an object array of shape ``size``, in C order."""
    shape = _shape(size)
    if shape is None:
        return one()
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        out[idx] = one()
    if all(isinstance(v, (int, np.integer)) for v in out.flat):
        return out.astype(np.int64)
    if all(isinstance(v, (float, np.floating)) for v in out.flat):
        return out.astype(float)
    return out


def _public(x, what: str):
    if isinstance(x, (Affine, Uniform)) or (isinstance(x, np.ndarray) and x.dtype == object):
        raise Undecided(f"the {what} of a draw depends on a noisy value", call_site(),
                        "give the law's parameters from public facts or exact counts")
    return x


class _Draws:
    """The laws both APIs share; ``self._label`` names the API in messages. While intercepted the classes stand
    in for ``np.random.Generator`` and ``np.random.RandomState`` themselves (so the code's ``isinstance`` checks
    accept them): a bit generator or seed given to the constructor is ignored."""

    def __init__(self, *args, **kwargs):
        pass

    def _finite(self, values, probs):
        if len(values) > MAX_OPTIONS:
            raise Undecided(f"a finite draw over {len(values):,} values (more than {MAX_OPTIONS:,})", call_site(),
                            "draw over a small public set, or keep the value out of the release")
        return active_path().draw_finite(list(values), list(probs))

    def _integers(self, low, high, size, endpoint=False):
        low, high = _public(low, "bound"), _public(high, "bound")
        if high is None:
            low, high = 0, low
        lo, hi = int(low), int(high) + (1 if endpoint else 0)
        if hi <= lo:
            raise ValueError(f"high <= low: {high} <= {low}")
        n = hi - lo
        return _fill(size, lambda: self._finite(range(lo, hi), [1.0 / n] * n))

    def _uniform(self, low=0.0, high=1.0, size=None):
        low, high = float(_public(low, "bound")), float(_public(high, "bound"))
        path = active_path()

        def one():
            u = Uniform(len(path.uniforms), call_site(), low, high)
            path.uniforms.append(u)
            return u

        return _fill(size, one)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        a = _public(a, "population")
        pool = np.arange(int(a)) if np.ndim(a) == 0 else np.asarray(a)
        n = len(pool)
        weights = np.full(n, 1.0 / n) if p is None else np.asarray(_public(p, "probabilities"), dtype=float)
        if weights.shape != (n,) or not np.isclose(weights.sum(), 1.0):
            raise ValueError("probabilities do not sum to 1")
        shape = _shape(size)
        if shape is None:
            return pool[self._finite(range(n), weights)]
        count = math.prod(shape)
        if replace:
            idx = [self._finite(range(n), weights) for _ in range(count)]
        else:
            if count > n:
                raise ValueError("Cannot take a larger sample than population when replace is False")
            idx, left = [], list(range(n))
            for _ in range(count):
                w = np.array([weights[i] for i in left])
                j = self._finite(range(len(left)), w / w.sum())
                idx.append(left.pop(j))
        return pool[np.array(idx, dtype=int).reshape(shape)]

    def permutation(self, x):
        arr = np.arange(int(x)) if np.ndim(x) == 0 else np.array(x)
        order, left = [], list(range(len(arr)))
        while left:
            j = self._finite(range(len(left)), [1.0 / len(left)] * len(left))
            order.append(left.pop(j))
        return arr[np.array(order, dtype=int)] if len(arr) else arr

    def shuffle(self, x):
        perm = self.permutation(len(x))
        x[:] = np.array(x)[perm] if isinstance(x, np.ndarray) else [x[i] for i in perm]

    def geometric(self, p, size=None):
        p = float(_public(p, "probability"))
        if not 0.0 < p <= 1.0:
            raise ValueError(f"p must lie in (0, 1], got {p}")
        return _fill(size, lambda: active_path().new_atom("geometric", p))

    def poisson(self, lam=1.0, size=None):
        lam = float(_public(lam, "rate"))
        if lam == 0:
            return _fill(size, lambda: 0)
        return _fill(size, lambda: active_path().new_atom("poisson", lam))

    def binomial(self, n, p, size=None):
        n, p = int(_public(n, "number of trials")), float(_public(p, "probability"))
        values = range(n + 1)
        return _fill(size, lambda: self._finite(values, stats.binom.pmf(values, n, p)))

    def dirichlet(self, alpha, size=None):
        """Two classes with ``alpha = (1, 1)`` (a uniform point of the segment) is ``(U, 1 - U)`` of one uniform
        draw; any other Dirichlet is a continuous law the mode cannot follow."""
        alpha = np.asarray(_public(alpha, "concentration"), dtype=float)
        if alpha.shape != (2,) or not np.all(alpha == 1.0):
            return _refusal("dirichlet")()
        shape = _shape(size)
        u = self._uniform(0.0, 1.0, size)
        if shape is None:
            return np.array([u, 1.0 - u], dtype=object)
        out = np.empty(shape + (2,), dtype=object)
        out[..., 0], out[..., 1] = u, 1.0 - u
        return out

    def __getattr__(self, name):
        if name in _CONTINUOUS:
            return _refusal(name)
        raise AttributeError(name)


class TracingGenerator(_Draws):
    """The ``numpy.random.Generator`` API, drawing through the active path (module docstring)."""

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return self._integers(low, high, size, endpoint)

    def random(self, size=None, dtype=np.float64, out=None):
        return self._uniform(0.0, 1.0, size)

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._uniform(low, high, size)

    def permuted(self, x, axis=None, out=None):
        arr = np.array(x)
        if axis is None:
            return self.permutation(arr.ravel()).reshape(arr.shape)
        res = np.moveaxis(arr, axis, -1).copy()
        for idx in np.ndindex(*res.shape[:-1]):
            res[idx] = self.permutation(res[idx])
        return np.moveaxis(res, -1, axis)

    def spawn(self, n):
        return [TracingGenerator() for _ in range(int(n))]

    @property
    def bit_generator(self):
        raise Undecided("the code reads the generator's bit generator", call_site(),
                        "draw only through the generator's methods")


class TracingRandomState(_Draws):
    """The legacy ``numpy.random.RandomState`` API (and the global functions), drawing through the active path."""

    def randint(self, low, high=None, size=None, dtype=int):
        return self._integers(low, high, size)

    def random_integers(self, low, high=None, size=None):
        return self._integers(1 if high is None else low, low if high is None else high, size, endpoint=True)

    def random_sample(self, size=None):
        return self._uniform(0.0, 1.0, size)

    random = ranf = sample = random_sample

    def rand(self, *shape):
        return self._uniform(0.0, 1.0, shape or None)

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._uniform(low, high, size)

    def seed(self, seed=None):
        return None

    def get_state(self, legacy=True):
        raise Undecided("the code reads the random state", call_site(), "draw only through the generator's methods")

    set_state = get_state


_GLOBALS = ("random", "rand", "randint", "random_sample", "ranf", "sample", "random_integers", "choice",
            "permutation", "shuffle", "geometric", "poisson", "binomial", "uniform", "seed") + _CONTINUOUS


class _PythonRandom:
    """Python's :mod:`random` functions, drawing through the active path."""

    def __init__(self, legacy: TracingRandomState):
        self._legacy = legacy

    def random(self):
        return self._legacy.random_sample()

    def uniform(self, a, b):
        return self._legacy.uniform(a, b)

    def randint(self, a, b):
        return int(self._legacy._integers(a, b, None, endpoint=True))

    def randrange(self, start, stop=None, step=1):
        values = list(range(start) if stop is None else range(start, stop, step))
        return values[int(self._legacy._integers(0, len(values), None))]

    def choice(self, seq):
        return seq[int(self._legacy._integers(0, len(seq), None))]

    def shuffle(self, x):
        items = list(x)
        x[:] = [items[i] for i in self._legacy.permutation(len(items))]

    def sample(self, population, k):
        pool = list(population)
        return [pool[i] for i in self._legacy.permutation(len(pool))[:k]]

    def getrandbits(self, k):
        raise Undecided("random.getrandbits draws a number of 2^k values", call_site(),
                        "draw from a small public set")


_PYTHON = ("random", "uniform", "randint", "randrange", "choice", "shuffle", "sample", "getrandbits")
_PYTHON_CONTINUOUS = ("gauss", "normalvariate", "expovariate", "lognormvariate", "betavariate", "gammavariate",
                      "paretovariate", "weibullvariate", "vonmisesvariate", "triangular", "choices")


def _traced_discrete_laplace(law, size, rng):
    """The project's own exact integer noise, ``DLap(t / s)`` of :class:`reference.mechanisms.discrete_noise.
    DiscreteLaplaceLaw` (its sampler runs rejection loops over uniforms of up to 2^56 values), as what it is: one
    two-sided geometric atom of rate ``s / t`` per value, ``P(k)`` proportional to ``exp(-|k| s / t)``. The rate
    is rounded to a float once, which the verdict states when it matters."""
    return _fill(size, lambda: active_path().new_atom("two_sided_geometric", law.rate))


@contextlib.contextmanager
def intercepted():
    """Route NumPy's randomness (and Python's :mod:`random`) to tracing generators (module docstring) until the
    block exits."""
    import random as pyrandom

    legacy = TracingRandomState()
    saved, saved_py = {}, {}
    targets = {"default_rng": lambda *a, **k: TracingGenerator(), "RandomState": TracingRandomState,
               "Generator": TracingGenerator}
    targets.update({name: getattr(legacy, name) for name in _GLOBALS if hasattr(np.random, name)})
    for name, value in targets.items():
        saved[name] = getattr(np.random, name)
        setattr(np.random, name, value)
    python = _PythonRandom(legacy)
    for name in _PYTHON + _PYTHON_CONTINUOUS:
        saved_py[name] = getattr(pyrandom, name)
        setattr(pyrandom, name, getattr(python, name) if name in _PYTHON else _refusal(f"random.{name}"))
    saved_rand = np.random.mtrand._rand
    np.random.mtrand._rand = legacy
    from reference.mechanisms.discrete_noise import DiscreteLaplaceLaw

    saved_law = DiscreteLaplaceLaw.sample
    DiscreteLaplaceLaw.sample = _traced_discrete_laplace
    try:
        yield
    finally:
        DiscreteLaplaceLaw.sample = saved_law
        for name, value in saved.items():
            setattr(np.random, name, value)
        for name, value in saved_py.items():
            setattr(pyrandom, name, value)
        np.random.mtrand._rand = saved_rand
