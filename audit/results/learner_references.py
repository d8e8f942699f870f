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

A release holding floats is compared number by number; :func:`release_paths`
and a reference's ``describe`` name each number (``tree 1, leaf 0: theta of
class index 0 (release.leaves[1][0][0])``) for the verdict. The random forest
is compared at depth 2, so that its records are routed, and read at the probe
points too (:class:`ForestProbeView`: its release's own numbers keep their laws
when a candidate swaps a split's children on inputs symmetric under
``x1 = 1 - x0``); parameters that route nothing say so (``unexercised``).
"""
from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field

import numpy as np

from audit.engine.comparison.compare import map_parameters
from audit.engine.comparison.compare_noise_off import make_estimator, privatree_tie_set
from audit.engine.estimation.learner import LearnerMechanism
from reference.papers import cite

__all__ = ["LearnerReference", "LEARNERS", "learner_reference", "resolve_reference", "probe_grid",
           "fitted_mechanism", "rename_parameters", "release_paths", "path_text", "ForestProbeView"]

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
    #: numbers read off a numeric release besides its own entries, compared as more coordinates (both sides'
    #: releases read alike: post-processing), e.g. the forest at the probe points (:class:`ForestProbeView`)
    view: object = None
    #: ``describe(path) -> str``: what a numeric entry of the release is, ``path`` its keys (:func:`release_paths`)
    describe: object = None
    #: ``unexercised(params) -> str``: what these parameters leave untested ("" when nothing)
    unexercised: object = None

    def load(self):
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


def release_paths(release) -> list[tuple]:
    """The path (keys from the top) of each number of ``release``, in the order
    :class:`~audit.engine.estimation.learner.LearnerMechanism` flattens a numeric release into a vector. A
    *tagged* tuple ``("tag", value)`` keys its value by the tag, ``("tag", a, b, ...)`` its entries by
    ``"tag.1"``, ``"tag.2"``, ...; other tuples and arrays key an entry by its position, except a tagged entry
    whose tag no sibling shares (its tag is key enough): ``(("structure", S), ("leaves", L))`` gives
    ``("leaves", 1, 0, 0)`` for ``L[1][0][0]``."""
    from numbers import Real

    out = []

    def tag(obj):
        return obj[0] if isinstance(obj, (tuple, list)) and len(obj) > 1 and isinstance(obj[0], str) else None

    def walk(obj, path):
        if isinstance(obj, (tuple, list)):
            own = tag(obj)
            if own is not None:
                for i, v in enumerate(obj[1:], 1):
                    walk(v, path + ((own if len(obj) == 2 else f"{own}.{i}"),))
                return
            tags = [tag(v) for v in obj]
            for i, v in enumerate(obj):
                walk(v, path if tags[i] is not None and tags.count(tags[i]) == 1 else path + (i,))
        elif isinstance(obj, np.ndarray):
            for i, v in enumerate(obj.ravel().tolist()):
                walk(v, path + (i,))
        elif isinstance(obj, (Real, np.number)):
            out.append(path)

    walk(release, ())
    return out


def path_text(path: tuple) -> str:
    """``release.leaves[1][0][0]``: a path of :func:`release_paths` as text."""
    return "release" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)


def _forest_entry(path: tuple) -> str:
    """A random decision forest's release entry (``release()``'s format) by what it is."""
    if len(path) == 4 and path[0] == "structure":
        return f"tree {path[1]}, split {path[2]}: " + ("attribute" if path[3] == 0 else "threshold")
    if len(path) == 4 and path[0] == "leaves":
        return f"tree {path[1]}, leaf {path[2]}: theta of class index {path[3]}"
    return ""


def _partition_entry(path: tuple) -> str:
    """LPDT's and PHIST's release entries (``(NAME, structure, leaf values)``) by what they are."""
    if len(path) == 2 and str(path[0]).endswith(".2"):
        return f"leaf {path[1]}: value" if path[0].startswith("LPDT") else f"cell {path[1]}: value"
    if len(path) == 3 and str(path[0]).startswith("LPDT") and path[0].endswith(".1"):
        return f"public partition node {path[1]}: " + ("feature" if path[2] == 0 else "threshold")
    if len(path) >= 2 and str(path[0]).startswith("PHIST") and path[0].endswith(".1"):
        if path[1] == "grid":
            return "grid cells per feature"
        return f"public range of feature {path[1] - 1}: " + ("low" if path[-1] == 0 else "high")
    return ""


def _weight_entry(path: tuple) -> str:
    """DP logistic regression's released weights (``coef_`` flattened, on the mapped features, the intercept's
    constant feature last)."""
    return f"weight {path[0]} on the mapped features" if len(path) == 1 else ""


def _forest_unexercised(params: dict) -> str:
    depth = params.get("max_depth")
    if isinstance(depth, int) and depth < 1:
        return (f"routing: max_depth={depth} has no split, so no record is routed; a candidate that routes wrongly "
                "reads the same (use max_depth >= 2, the default)")
    return ""


class ForestProbeView:
    """A random decision forest's release read at the public probe points: the mean over the trees of the leaf
    value ``theta`` of every class but the first, each point routed through the released structure by the
    reference's rule (``x[attribute] > threshold`` goes right). Marginally, a leaf's values and a split's
    attribute and threshold can keep their laws when a candidate routes wrongly (on inputs symmetric under
    ``x1 = 1 - x0``, the swapped children of a split on ``x0`` look like a split on ``x1``); the probe points
    see structure and leaves together. Nothing at depth 0 (no split)."""

    def __call__(self, release, probe) -> np.ndarray:
        from reference.tree import route_heap

        (_, structure), (_, leaves) = release
        if not any(structure):
            return np.zeros(0)
        att = np.array([[a for a, _ in tree] for tree in structure], dtype=np.int64)
        thr = np.array([[t for _, t in tree] for tree in structure], dtype=float)
        theta = np.asarray(leaves, dtype=float)  # (trees, leaves, classes)
        depth = int(round(np.log2(theta.shape[1])))
        where = route_heap(np.asarray(probe, dtype=float), att, thr, depth)  # (trees, points)
        at = theta[np.arange(theta.shape[0])[:, None], where]  # (trees, points, classes)
        return at[..., 1:].mean(axis=0).T.ravel()  # class by class, point by point

    def names(self, release, probe) -> list:
        (_, structure), (_, leaves) = release
        if not any(structure):
            return []
        return [f"forest's mean theta of class index {c} at probe point ({', '.join(f'{v:g}' for v in x)})"
                for c in range(1, len(leaves[0][0])) for x in np.asarray(probe)]


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
                     dict(n_estimators=2, max_depth=2, epsilon=1.0, bounds=_B2, classes=[0, 1]), BINARY_INPUTS,
                     f"random decision forest ({cite('random-trees')}), private leaf counts; depth 2: records routed "
                     "through a structure drawn from public bounds alone", view=ForestProbeView(),
                     describe=_forest_entry, unexercised=_forest_unexercised),
    LearnerReference("lpdt", "reference.lpdt:LPDTRegressor",
                     dict(epsilon=2.0, max_depth=1, target_bounds=(0.0, 1.0), bounds=_B2,
                          public_data=(_X2, _Y_REG)), REGRESSION_INPUTS,
                     f"LPDT regressor ({cite('lpdt')}): public partition, local randomiser", describe=_partition_entry),
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
                     "PHIST baseline (private histogram regressor)", describe=_partition_entry),
    LearnerReference("dp-logistic", "reference.baselines.dp_logistic:DPLogisticRegression",
                     dict(epsilon=2.0, bounds=_B2, classes=[0, 1]), BINARY_INPUTS,
                     "DP logistic regression by output perturbation (Chaudhuri et al. 2011, Alg. 1)",
                     describe=_weight_entry),
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
                return dataclasses.replace(ref, name=name, target=name,
                                           description=f"{cls.__name__} (inputs of {ref.name!r})")
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
                 output: str = "auto", cls=None, params=None, view=None, describe=None):
        super().__init__(make, probe, output)
        self.cls, self.params = cls, params
        #: the reference's view (:attr:`LearnerReference.view`) and entry names, for releases only
        self.view, self.describe = (view, describe) if use_release else (None, None)
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

    def _shape(self, released):
        """The release as :class:`LearnerMechanism` shapes it, a numeric one followed by the numbers of the
        reference's view (an error says when the release is not in the reference's format)."""
        out = super()._shape(released)
        if self.view is None or not isinstance(out, np.ndarray):
            return out
        try:
            extra = self.view(released, self.probe)
        except (TypeError, ValueError, IndexError) as exc:
            raise ValueError(f"the release is not in the reference's format, which the comparison reads at the "
                             f"probe points ({type(exc).__name__}: {exc}): {str(released)[:200]}") from None
        return np.concatenate([out, extra]) if len(extra) else out

    def coordinate_names(self, data, seed: int = 0) -> list | None:
        """What each coordinate of this mechanism's numeric output on ``data`` is (one fit, seeded by ``seed``):
        the release's entries by :attr:`LearnerReference.describe` and their paths, then the view's numbers, or
        the probe points of predictions; None for a discrete output or when the names do not match the shape."""
        released = self.release_of(self._fit(data, np.random.default_rng(seed)))
        out = self._shape(released)
        if not isinstance(out, np.ndarray):
            return None
        if not self.use_release:
            names = [f"prediction at probe point #{i} ({', '.join(f'{v:g}' for v in x)})"
                     for i, x in enumerate(np.asarray(self.probe))]
        else:
            names = []
            for path in release_paths(released):
                what = self.describe(path) if self.describe is not None else ""
                names.append(f"{what} ({path_text(path)})" if what else path_text(path))
            if self.view is not None:
                names += list(self.view.names(released, self.probe))
        return names if len(names) == len(out) else None

    def __repr__(self):
        return f"_Fitted({self.make_estimator!r}, {'release' if self.use_release else 'probe predictions'})"


def fitted_mechanism(cls, params: dict, ref: LearnerReference, use_release: bool, fast: bool = True,
                     output: str = "auto") -> _Fitted:
    """``cls(**params)`` as an oracle mechanism over ``(X, y)`` in ``ref``'s output format; ``fast=False``
    fits once per draw even when the class declares a batched sampler; ``output="discrete"`` keeps whole
    releases (see :class:`audit.engine.estimation.learner.LearnerMechanism`)."""
    return _Fitted(lambda: cls(**params), ref.probe, use_release, ref.release_kwargs if use_release else {}, fast,
                   output, cls, params, ref.view, ref.describe)


def resolve_reference(ref: LearnerReference, candidate_cls, params: dict, param_map: dict):
    """``(candidate mechanism, reference mechanism, how they are compared)``: the reference learner is fitted
    once per draw; the candidate goes through its batched sampler when it declares one."""
    cand_params = rename_parameters(params, param_map, candidate_cls)
    use_release = callable(getattr(candidate_cls, "release", None)) and callable(getattr(ref.load(), "release", None))
    how = f"release({', '.join(f'{k}={v!r}' for k, v in ref.release_kwargs.items())})" if use_release else \
        f"predictions on a public probe grid of {len(ref.probe)} points"
    return (fitted_mechanism(candidate_cls, cand_params, ref, use_release),
            fitted_mechanism(ref.load(), params, ref, use_release, fast=False), how)
