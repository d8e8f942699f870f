"""The reference learners ``python -m audit compare --reference NAME`` knows, with their public inputs.

Each entry names a learner of :mod:`reference` (or its ``MODULE:CALLABLE``),
small default parameters with every public fact given (bounds, classes,
target bounds), a fixed set of tiny public inputs that reach the branches of
its algorithm (separable and noisy labels, several classes, a lone record
that leaves most regions empty, records on bin edges and on the bounds, one
record per bin, labels that are not ``0..K-1``) and a public probe grid. A candidate class
takes the same parameters (renamed by ``param_map`` where its names differ);
both sides are fitted once per draw with a ``random_state`` drawn from the
oracle's generator and compared through ``release(**release_kwargs)`` when
the candidate has ``release``, else through their predictions on the probe
grid (the same grid for both sides; its spacing, 1/8 of each public range,
is finer than the learners' bins on these inputs, so neighbouring thresholds
give different predictions).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import numpy as np

from audit.engine.comparison.compare import map_parameters
from audit.engine.comparison.compare_noise_off import make_estimator, privatree_tie_set
from audit.engine.estimation.learner import LearnerMechanism
from reference.papers import cite

__all__ = ["LearnerReference", "LEARNERS", "learner_reference", "resolve_reference", "probe_grid",
           "fitted_mechanism", "rename_parameters"]

_X = np.array([0.1, 0.2, 0.3, 0.45, 0.55, 0.7, 0.8, 0.9])
#: 8 records on two numerical features in [0, 1]
_X2 = np.column_stack((_X, _X[::-1]))
_Y_SEP = np.array([0, 0, 0, 0, 1, 1, 1, 1])          # label = x0 > 0.5
_Y_NOISY = np.array([0, 0, 1, 0, 1, 1, 0, 1])        # one informative feature, label noise
_Y_THREE = np.array([0, 0, 1, 1, 1, 2, 2, 2])        # several classes
_X_ONE = np.array([[0.5, 0.5]])                      # one record: every other region is empty
_Y_REG = np.array([0.1, 0.2, 0.1, 0.3, 0.7, 0.8, 0.9, 0.8])

#: records on the edges of 4 equal bins of [0, 1] and on both bounds: a bin rule off by one at an edge moves them
_X_EDGE0 = np.array([0.0, 0.25, 0.25, 0.5, 0.5, 0.75, 1.0, 1.0])
_X_EDGE = np.column_stack((_X_EDGE0, _X_EDGE0[::-1]))
_Y_EDGE = np.array([0, 0, 0, 0, 0, 1, 1, 1])          # label = x0 > 0.5: the records at 0.5 decide the boundary
#: one record in each of 4 equal bins
_X_PER_BIN = np.column_stack((np.array([0.125, 0.375, 0.625, 0.875]), np.array([0.875, 0.625, 0.375, 0.125])))

CLASSIFICATION_INPUTS = [("8 records, label = x0 > 0.5", (_X2, _Y_SEP)),
                         ("8 records, noisy labels", (_X2, _Y_NOISY)),
                         ("8 records, three classes", (_X2, _Y_THREE)),
                         ("1 record (empty regions)", (_X_ONE, np.array([1]))),
                         ("8 records on bin edges and bounds", (_X_EDGE, _Y_EDGE)),
                         ("4 records, one per bin", (_X_PER_BIN, np.array([0, 1, 1, 0]))),
                         ("8 records, labels {1, 2}", (_X2, _Y_SEP + 1))]
#: inputs of two-class learners (classes [0, 1]): no third class, no label 2
BINARY_INPUTS = [i for i in CLASSIFICATION_INPUTS if "three" not in i[0] and "{1, 2}" not in i[0]]
REGRESSION_INPUTS = [("8 records, y rising with x0", (_X2, _Y_REG)),
                     ("8 records, constant y", (_X2, np.full(8, 0.5))),
                     ("1 record (empty regions)", (_X_ONE, np.array([0.9])))]

_B2 = [(0.0, 1.0), (0.0, 1.0)]
#: categorical features: colour in {0, 1, 2} and a binary flag; labels follow the colour
_XC = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1], [2, 0], [1, 1]])
CATEGORIES = {0: [0, 1, 2], 1: [0, 1]}
#: every combination of the public categories
_CAT_PROBE = np.array([[a, b] for a in CATEGORIES[0] for b in CATEGORIES[1]])
CATEGORICAL_INPUTS = [("8 records, categorical, label = colour 2", (_XC, np.array([0, 0, 0, 0, 1, 1, 1, 0]))),
                      ("8 records, categorical, noisy labels", (_XC, np.array([0, 1, 0, 1, 1, 0, 1, 1]))),
                      ("1 record, categorical (empty cells)", (_XC[:1], np.array([1])))]


def probe_grid(bounds, cells: int = 8) -> np.ndarray:
    """The centres of a ``cells`` x ... x ``cells`` grid over the public ``bounds`` (one row per point)."""
    axes = [lo + (np.arange(cells) + 0.5) * (hi - lo) / cells for lo, hi in bounds]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(bounds))


@dataclass
class LearnerReference:
    """A reference learner for the oracle: its class, default parameters and public inputs."""

    name: str
    target: str  # MODULE:CALLABLE
    params: dict
    inputs: list
    description: str
    release_kwargs: dict = field(default_factory=dict)
    probe: np.ndarray = field(default_factory=lambda: probe_grid(_B2))
    #: parameters that switch the privacy noise off (``--noise off``); None: the algorithm has other randomness
    noise_off: dict | None = None
    #: ``ties(est, X, y, release) -> (accepts, size)``: the releases the reference can give with the noise off
    #: (:mod:`audit.engine.comparison.compare_noise_off`); None: its noise-off release is a function of the data
    noise_off_ties: object = None

    def load(self):
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


_P = "reference.privatree:PrivaTreeClassifier"
LEARNERS: dict[str, LearnerReference] = {r.name: r for r in [
    LearnerReference("privatree", _P,
                     dict(epsilon=4.0, max_depth=1, bounds=_B2, classes=[0, 1, 2], binning="uniform", max_bins=4,
                          epsilon_shares=(0.0, 0.5, 0.5)), CLASSIFICATION_INPUTS,
                     f"PrivaTree ({cite('privatree')}), Algorithm 1", noise_off=dict(epsilon=1e9),
                     noise_off_ties=privatree_tie_set),
    LearnerReference("diprime-regressor", "reference.diprime:DiPriMeForestRegressor",
                     dict(epsilon=4.0, variant="exp", n_estimators=1, max_depth=1, max_features=2, bounds=_B2,
                          target_bounds=(0.0, 1.0)), REGRESSION_INPUTS,
                     f"DiPriMeExp forest regressor ({cite('diprime-v003')}), strict accounting", dict(bins=4, leaf_bins=4)),
    LearnerReference("diprime-classifier", "reference.diprime:DiPriMeForestClassifier",
                     dict(epsilon=4.0, variant="exp", n_estimators=1, max_depth=1, max_features=2, bounds=_B2,
                          classes=[0, 1, 2]), CLASSIFICATION_INPUTS,
                     f"DiPriMeExp forest classifier ({cite('diprime-v003')}), strict accounting", dict(bins=4, leaf_bins=4)),
    LearnerReference("random-trees", "reference.random_trees:RandomDecisionForestClassifier",
                     dict(n_estimators=2, max_depth=0, epsilon=1.0, bounds=_B2, classes=[0, 1]), BINARY_INPUTS,
                     f"random decision forest ({cite('random-trees')}), private leaf counts; depth 0: the structure is "
                     "drawn from public bounds alone"),
    LearnerReference("lpdt", "reference.lpdt:LPDTRegressor",
                     dict(epsilon=2.0, max_depth=1, target_bounds=(0.0, 1.0), bounds=_B2,
                          public_data=(_X2, _Y_REG)), REGRESSION_INPUTS,
                     f"LPDT regressor ({cite('lpdt')}): public partition, local randomiser"),
    LearnerReference("bdpt", "reference.baselines.bdpt:BDPTClassifier",
                     dict(epsilon=2.0, max_depth=1, classes=[0, 1]), BINARY_INPUTS, "BDPT baseline (binary)"),
    LearnerReference("dpgdf", "reference.baselines.dpgdf:DPGDFClassifier",
                     dict(epsilon=2.0, max_depth=1, categories=CATEGORIES, classes=[0, 1], min_samples_split=2),
                     CATEGORICAL_INPUTS,
                     "DPGDF baseline (categorical features, binary)", probe=_CAT_PROBE),
    LearnerReference("diffprivlib-style-tree", "reference.baselines.diffprivlib_tree:RandomTreePFClassifier",
                     dict(epsilon=2.0, max_depth=1, bounds=_B2, classes=[0, 1, 2]), CLASSIFICATION_INPUTS,
                     "DiffPrivLib-style random tree baseline (permute-and-flip leaves)"),
    LearnerReference("dp-ert-regressor", "reference.baselines.dp_ert:DPExtraTreesRegressor",
                     dict(epsilon=4.0, n_estimators=1, max_depth=1, bounds=_B2, target_bounds=(0.0, 1.0)),
                     REGRESSION_INPUTS, "DP extremely randomised trees baseline (regression)", dict(bins=4, leaf_bins=4)),
    LearnerReference("dp-ert-classifier", "reference.baselines.dp_ert:DPExtraTreesClassifier",
                     dict(epsilon=4.0, n_estimators=1, max_depth=1, bounds=_B2, classes=[0, 1, 2]),
                     CLASSIFICATION_INPUTS, "DP extremely randomised trees baseline (classification)",
                     dict(bins=4, leaf_bins=4)),
    LearnerReference("phist", "reference.baselines.phist:PHISTRegressor",
                     dict(epsilon=2.0, n_bins=2, target_bounds=(0.0, 1.0), bounds=_B2), REGRESSION_INPUTS,
                     "PHIST baseline (private histogram regressor)"),
    LearnerReference("dp-logistic", "reference.baselines.dp_logistic:DPLogisticRegression",
                     dict(epsilon=2.0, bounds=_B2, classes=[0, 1]), BINARY_INPUTS,
                     "DP logistic regression by output perturbation (Chaudhuri et al. 2011, Alg. 1)"),
]}


def learner_reference(name: str) -> LearnerReference:
    """The reference named ``name`` (a short name of :data:`LEARNERS`) or ``MODULE:CALLABLE`` of one of their
    classes (or a subclass of one, which takes that reference's inputs and default parameters)."""
    if name in LEARNERS:
        return LEARNERS[name]
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"--reference {name!r} cannot be imported: {exc}") from None
        for ref in LEARNERS.values():
            if isinstance(cls, type) and issubclass(cls, ref.load()):
                return LearnerReference(name, name, ref.params, ref.inputs, f"{cls.__name__} (inputs of "
                                        f"{ref.name!r})", ref.release_kwargs, ref.probe, ref.noise_off,
                                        ref.noise_off_ties)
        raise ValueError(f"--reference {name!r} is not a learner of reference/ (nor a subclass of one); "
                         f"the learners are {', '.join(f'{r.target}' for r in LEARNERS.values())}")
    raise KeyError(name)


def rename_parameters(params: dict, param_map: dict, candidate_cls) -> dict:
    """The reference's ``params`` as ``candidate_cls`` names them (``param_map``: reference name -> candidate
    name); a ``ValueError`` lists the parameters the candidate does not take and map keys that are unknown."""
    unknown = sorted(k for k in param_map if k not in params)
    if unknown:
        raise ValueError(f"--param-map renames unknown parameter(s) {unknown}; the reference's are {sorted(params)}")
    out = {param_map.get(k, k): v for k, v in params.items()}
    return map_parameters(candidate_cls, out, " (map them with --param-map '{\"REFERENCE_NAME\": \"CANDIDATE_NAME\"}')")


class _Fitted(LearnerMechanism):
    """A learner fitted per draw; its ``release(**release_kwargs)`` or its predictions on the probe grid."""

    def __init__(self, make, probe, use_release: bool, release_kwargs: dict, fast: bool = True,
                 output: str = "auto", cls=None, params=None):
        super().__init__(make, probe, output)
        self.cls, self.params = cls, params
        self.use_release, self.release_kwargs = use_release, dict(release_kwargs)
        #: the declared batched sampler stands in for the fits (release only; ``fast=False``: never)
        self._fast_path_ok = use_release and fast

    def _fit(self, data, rng):
        """A fit seeded as :class:`~audit.engine.estimation.learner.LearnerMechanism` seeds it, the seed given to the
        constructor (an estimator that reads ``random_state`` in ``__init__`` sees it)."""
        if self.cls is None:
            return super()._fit(data, rng)
        from reference.randomness import seeded_fits

        X, y = data
        module = getattr(self.cls, "__module__", "") or ""
        seed = rng.spawn(1)[0] if module.startswith(("reference.", "audit.")) else int(rng.integers(0, 2**31 - 1))
        est = make_estimator(self.cls, self.params, seed)
        with seeded_fits():
            est.fit(X, y)
        return est

    def release_of(self, est):
        if self.use_release:
            return est.release(**self.release_kwargs)
        return tuple(np.asarray(est.predict(self.probe)).tolist())

    def __repr__(self):
        return f"_Fitted({self.make_estimator!r}, {'release' if self.use_release else 'probe predictions'})"


def fitted_mechanism(cls, params: dict, ref: LearnerReference, use_release: bool, fast: bool = True,
                     output: str = "auto") -> _Fitted:
    """``cls(**params)`` as an oracle mechanism over ``(X, y)`` in ``ref``'s output format; ``fast=False``
    fits once per draw even when the class declares a batched sampler; ``output="discrete"`` keeps whole
    releases (see :class:`audit.engine.estimation.learner.LearnerMechanism`)."""
    return _Fitted(lambda: cls(**params), ref.probe, use_release, ref.release_kwargs if use_release else {}, fast,
                   output, cls, params)


def resolve_reference(ref: LearnerReference, candidate_cls, params: dict, param_map: dict):
    """``(candidate mechanism, reference mechanism, how they are compared)``: the reference learner is fitted
    once per draw; the candidate goes through its batched sampler when it declares one."""
    cand_params = rename_parameters(params, param_map, candidate_cls)
    use_release = callable(getattr(candidate_cls, "release", None)) and callable(getattr(ref.load(), "release", None))
    how = f"release({', '.join(f'{k}={v!r}' for k, v in ref.release_kwargs.items())})" if use_release else \
        f"predictions on a public probe grid of {len(ref.probe)} points"
    return (fitted_mechanism(candidate_cls, cand_params, ref, use_release),
            fitted_mechanism(ref.load(), params, ref, use_release, fast=False), how)
