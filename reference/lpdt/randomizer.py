"""The LPDT local randomiser, mechanisms (3) and (4), with its exact law; and the flawed per-leaf variant.

Ma, Zhang, Cai and Yang (NeurIPS 2023),
slide "Perturbation Mechanism"; ``spec/lpdt.md`` section 3.3.

Each user ``i`` holding ``(x, y)`` with ``y`` in the public ``target_bounds
= (low, high)`` (``M = (high - low) / 2`` in the paper's centred notation)
releases once, on their own side:

* (3) ``Y~ = y + Laplace(scale = (high - low) / (epsilon (1 - s)))``, which for
  ``s = 1/2`` is the paper's ``y + (4M / epsilon) xi``: budget ``epsilon (1 - s)``; released here as the
  lattice Laplace of :class:`reference.mechanisms.Laplace` (``grid * (round(y / grid) + DLap)``, exact
  integer noise, its public ``grid`` the mechanism's default), so the report is exactly private in the
  arithmetic it is computed in (Mironov 2012);
* (4) every coordinate of the one-hot leaf indicator ``U(x)`` through
  randomized response keeping it with probability ``e^(epsilon s / 2) /
  (1 + e^(epsilon s / 2))`` (``e^(epsilon/4) / (1 + e^(epsilon/4))`` for
  ``s = 1/2``): two coordinates differ between any two users, so budget
  ``epsilon s``. The paper's ``U~ = bit - q`` with ``q = 1/(1 + e^(epsilon s/2))``
  is a fixed shift of the released bit, applied by the curator.

The indicator share ``s`` is the authors' code's ``proportion_budget`` (spec
3.3); the paper fixes ``s = 1/2``.

Theorem 3.1: the pair is epsilon-LDP for *any* partition. The log-likelihood
ratio of an output between two records is separable (label part plus bit
part), at most ``epsilon (1 - s) + epsilon s``, attained when the records lie in
different leaves with labels at the two bounds (spec section 4, exact
supremum); :meth:`LPDTRandomizer.critical_outputs` returns the outputs where it
is attained, so :func:`audit.exact.privacy_loss` is exact.

The authors' code draws fresh label noise for every leaf (spec 9, D1):
:class:`PerLeafNoiseRandomizer` reproduces that release. Its true loss is
``epsilon s + L epsilon (1 - s)`` for ``L`` leaves, i.e. ``(L + 1) epsilon / 2`` at
``s = 1/2``, not ``epsilon``.
"""
from __future__ import annotations

import math

import numpy as np

from reference.mechanisms.base import span_up
from reference.validation import check_generator, check_pair, check_positive_finite, check_probability
from reference.validation import shown
from reference.mechanisms import BitRandomizedResponse, Laplace, Mechanism, round_to_grid

__all__ = ["LPDTRandomizer", "PerLeafNoiseRandomizer", "check_target_bounds", "CHUNK"]

#: users per chunk when summarising many reports: the chunk's users x leaves block is the largest array held
CHUNK = 2048


def check_target_bounds(target_bounds) -> tuple[float, float]:
    """The public label range ``(low, high)``; a missing one is refused (spec 9, D2)."""
    if target_bounds is None or isinstance(target_bounds, str):
        raise ValueError(
            f"target_bounds is required: the public (low, high) range of the labels, got {shown(target_bounds)}; "
            "reading it from the private labels (as the authors' code does) breaks local privacy")
    return check_pair("target_bounds", target_bounds)


class LPDTRandomizer(Mechanism):
    """The user-side randomiser of LPDT, mechanisms (3) and (4) of the paper.

    A mechanism over one user record ``data = (x, y)``; its output is the
    1-D float array ``[Y~, bit_0, ..., bit_{L-1}]`` (the released label and
    the released indicator bits).

    Parameters
    ----------
    epsilon : float
        The local privacy parameter of Theorem 3.1.
    partition : object with ``apply(X)`` and ``n_leaves``
        The public partition (broadcast by the curator).
    target_bounds : (float, float)
        Public label range; labels outside it are clipped before noise.
    indicator_share : float, default 0.5
        Share ``s`` of epsilon spent on the indicator bits (the paper: 1/2).

    References
    ----------
    Seed 002, mechanisms (3) and (4) and Theorem 3.1; spec/lpdt.md 3.3 and 4.
    """

    kind = "discrete"

    def __init__(self, epsilon: float, partition, target_bounds, indicator_share: float = 0.5):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.indicator_share = check_probability("indicator_share", indicator_share, open_low=True, open_high=True)
        self.partition = partition
        self.target_bounds = check_target_bounds(target_bounds)
        self.n_leaves = int(partition.n_leaves)
        low, high = self.target_bounds
        # the exact span rounded up (issue 26 finding 4: the float high - low can fall one grid unit short)
        self.label = Laplace(self.epsilon * (1.0 - self.indicator_share), sensitivity=span_up(low, high))
        self.bits = BitRandomizedResponse(self.epsilon * self.indicator_share, sensitivity=2)
        #: probability that a bit is flipped, ``q`` of mechanism (4)
        self.q = self.bits.p_flip
        #: ``E[U~ | U] = c U``: ``c = 1 - 2q = tanh(epsilon s / 4)``
        self.c = 1.0 - 2.0 * self.q

    def _params(self):
        return {"epsilon": self.epsilon, "n_leaves": self.n_leaves, "target_bounds": self.target_bounds,
                "indicator_share": self.indicator_share}

    # ------------------------------------------------------------------ one user
    def leaf_of(self, x) -> int:
        return int(self.partition.apply(np.atleast_1d(np.asarray(x, dtype=float)))[0])

    def one_hot(self, x) -> np.ndarray:
        u = np.zeros(self.n_leaves, dtype=np.int8)
        u[self.leaf_of(x)] = 1
        return u

    def clip(self, y) -> float:
        low, high = self.target_bounds
        return float(np.clip(float(y), low, high))

    def sample(self, data, rng):
        return self.batch(data, 1, rng)[0]

    def batch(self, data, n, rng):
        """``n`` independent reports of the same user: shape ``(n, 1 + L)``."""
        check_generator(rng)
        x, y = data
        labels = self._labels(self.clip(y), n, rng)
        bits = self.bits.batch(self.one_hot(x), n, rng).astype(float)
        return np.hstack((labels, bits))

    def _labels(self, y: float, n: int, rng) -> np.ndarray:
        return self.label.batch(y, n, rng).reshape(n, 1)

    # ------------------------------------------------------------------ exact law
    def _split(self, output):
        out = np.asarray(output, dtype=float)
        k = out.size - self.n_leaves
        return out[:k], out[k:]

    def log_law(self, output, data) -> float:
        """Log-pmf of a report: the lattice Laplace pmf of the label(s) times the bits' pmf."""
        x, y = data
        labels, bits = self._split(output)
        if not np.all((bits == 0) | (bits == 1)):
            return -math.inf
        y = self.clip(y)
        return sum(self.label.logpmf(v, y) for v in labels) + self.bits.logpmf(bits.astype(int), self.one_hot(x))

    logpmf = log_law

    def critical_outputs(self, d0, d1):
        """The log-ratio is separable: the label part is largest at ``Y~ = y0`` and
        smallest at ``Y~ = y1`` (Laplace), the bit part largest at the bits
        ``U(x0)`` and smallest at ``U(x1)``; both extremes are met together."""
        outs = []
        for x, y in (d0, d1):
            labels = np.full(self._n_labels(), round_to_grid(self.clip(y), self.label.grid) * self.label.grid)
            outs.append(np.concatenate((labels, self.one_hot(x).astype(float))))
        return outs

    def _n_labels(self) -> int:
        return 1

    def privacy_map(self, d_in) -> float:
        """Any two user records (``d_in >= 1``) give loss at most epsilon (Theorem 3.1)."""
        return 0.0 if float(d_in) == 0 else self.epsilon

    def llr(self, outputs, d0, d1) -> np.ndarray:
        """``ln p(o | d0) - ln p(o | d1)`` for each row of ``outputs`` (vectorised closed form, spec 4)."""
        outputs = np.atleast_2d(np.asarray(outputs, dtype=float))
        k = outputs.shape[1] - self.n_leaves
        labels, bits = outputs[:, :k], outputs[:, k:]
        (x0, y0), (x1, y1) = d0, d1
        y0, y1 = self.clip(y0), self.clip(y1)
        c0, c1 = (round_to_grid(v, self.label.grid) for v in (y0, y1))
        lab = self.label.llr_units(labels, c0, c1).sum(axis=1)
        u0, u1 = self.one_hot(x0), self.one_hot(x1)
        diff = u0 != u1
        agree0 = (bits[:, diff] == u0[diff]).sum(axis=1)
        agree1 = (bits[:, diff] == u1[diff]).sum(axis=1)
        return lab + (agree0 - agree1) * self.bits.eps_bit

    # ------------------------------------------------------------------ many users
    def summarise(self, leaves: np.ndarray, y: np.ndarray, rng, chunk: int = CHUNK):
        """Randomise every user once and return the per-leaf sums, never a dense users x leaves matrix.

        Parameters
        ----------
        leaves : int ndarray of shape (n,)
            Each user's leaf (``U_i`` as an index).
        y : ndarray of shape (n,)
            Labels, already clipped to ``target_bounds``.
        rng : numpy.random.Generator

        Returns
        -------
        ones : ndarray (L,)
            ``sum_i bit_ij``; the paper's denominator is ``D_j = ones_j - n q``.
        weighted : ndarray (L,)
            ``sum_i Y~_i bit_ij``; the numerator is ``N_j = weighted_j - q sum_i Y~_i``.
        label_total : ndarray (L,)
            ``sum_i Y~_i`` (the same in every entry; per leaf for the flawed variant).
        """
        check_generator(rng)
        n, L = leaves.size, self.n_leaves
        ones, weighted, label_total = np.zeros(L), np.zeros(L), np.zeros(L)
        buf = np.empty((chunk, L))  # the only users x leaves block: one chunk of released bits
        lhs = np.ones((2, chunk))    # rows: 1 (for the bit counts) and the chunk's Y~ (per-user noise)
        for start in range(0, n, chunk):
            stop = min(n, start + chunk)
            m = stop - start
            y_tilde = self._labels_many(y[start:stop], rng)  # (m, k) label reports, mechanism (3)
            bits = buf[:m]
            rng.random(out=bits)
            np.less(bits, self.q, out=bits, casting="unsafe")  # 1.0 where the RR coin flips, mechanism (4)
            rows, own = np.arange(m), leaves[start:stop]
            bits[rows, own] = 1.0 - bits[rows, own]  # bit = U xor flip
            if y_tilde.shape[1] == 1:
                lhs[1, :m] = y_tilde[:, 0]
                sums = lhs[:, :m] @ bits
                ones += sums[0]
                weighted += sums[1]
            else:  # one label report per leaf (flawed variant): leaf j's numerator uses column j
                ones += bits.sum(axis=0)
                weighted += np.einsum("ij,ij->j", y_tilde, bits)
            label_total += y_tilde.sum(axis=0)
        return ones, weighted, label_total

    def _labels_many(self, y, rng) -> np.ndarray:
        return self.label.sample_each(np.asarray(y, dtype=float).reshape(-1, 1), rng)


class PerLeafNoiseRandomizer(LPDTRandomizer):
    """FLAWED: fresh label noise for every leaf, as in the authors' code (spec 9, D1).

    The code forms, for each leaf ``j``, ``(y + noise_j) * (U~_j + r - 1)`` with a
    new Laplace draw ``noise_j`` per leaf; the factor is never 0, so each
    ``y + noise_j`` is recoverable and the user in effect releases ``L`` noisy
    copies of ``y``. Output: ``[Y~_0, ..., Y~_{L-1}, bit_0, ..., bit_{L-1}]``.

    True loss: ``epsilon s + L epsilon (1 - s)``, i.e. ``(L + 1) epsilon / 2`` for
    ``s = 1/2``, while the code claims epsilon. Kept only as an audit mutant.
    """

    def _labels(self, y: float, n: int, rng) -> np.ndarray:
        return self.label.sample_each(np.full((n, self.n_leaves), y), rng)

    def _labels_many(self, y, rng) -> np.ndarray:
        y = np.asarray(y, dtype=float).reshape(-1, 1)
        return self.label.sample_each(np.repeat(y, self.n_leaves, axis=1), rng)

    def _n_labels(self) -> int:
        return self.n_leaves

    def true_epsilon(self) -> float:
        """The exact worst-case loss (spec 9, D1)."""
        s = self.indicator_share
        return self.epsilon * s + self.n_leaves * self.epsilon * (1.0 - s)
