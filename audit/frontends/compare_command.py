"""``python -m audit compare CANDIDATE --reference REFERENCE``: does the candidate release the same law?

The candidate and the reference get the same parameters (``--params``, renamed by ``--param-map``) and
the reference's public inputs; their releases are compared in distribution
(:func:`audit.engine.comparison.compare.compare_distributions`), or, with ``--noise off``, for exact equality on
generated datasets (:mod:`audit.engine.comparison.compare_noise_off`). The report is named after both,
``compare-MODULE-CLASS-vs-REFERENCE``, and shows releases as ``run`` does (:func:`audit.engine.presentation.render.compact`).
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

from audit.results import extras
from audit.engine.runs import checkpoint
from reference.validation import shown

__all__ = ["command", "report_name"]


def report_name(candidate: str, reference: str) -> str:
    """``compare-MODULE-CLASS-vs-REFERENCE``: the candidate and the reference name the report (as ``check``'s
    reports are named after module and class), so comparisons of one class with two references, or of two
    modules' classes of one name, never overwrite each other."""
    def part(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]", "_", text.replace(":", "-"))

    return f"compare-{part(candidate)}-vs-{part(reference)}"


def params_suffix(params_text: str | None) -> str:
    """``""`` without ``--params``; else ``-p`` and a short readable form of the parameters with 8 hex digits of
    their hash, so runs with different ``--params`` write different report folders."""
    if not params_text:
        return ""
    import hashlib

    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", params_text).strip("_")[:40]
    return f"-p{readable}-{hashlib.sha256(params_text.encode()).hexdigest()[:8]}"


def accounting_label(description: str, params: dict) -> str:
    """``description`` with the accounting ``params`` use (``"strict"`` unless they say otherwise) in place of
    the one it names: a label never says strict when paper accounting was given and used."""
    acc = params.get("accounting") if isinstance(params, dict) else None
    if acc is None:
        return description
    text = re.sub(r"\b(strict|paper) accounting", f"{acc} accounting", description)
    return text if text != description or f"{acc} accounting" in text else f"{description}, {acc} accounting"


def _json_object(text: str, option: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{option} must be a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{option} must be a JSON object, got {text!r}")
    return value


def _params(text) -> dict:
    from audit.gate.run import parse_params

    return parse_params(text)


def _list_references(given=None) -> int:
    from audit.results.learner_references import LEARNERS
    from audit.oracle.cases import REFERENCES

    print("learners (candidate: a class taking the reference's parameters; compared through release() or "
          "predictions on a public probe grid):")
    for r in LEARNERS.values():
        params = dict(r.params, **(given or {}))
        if "accounting" not in params:  # the class's default accounting, where it has one
            from inspect import signature

            default = signature(r.load()).parameters.get("accounting")
            if default is not None and isinstance(default.default, str):
                params["accounting"] = default.default
        print(f"  {r.name:24s} {r.target}  {accounting_label(r.description, params)}")
    print("  self                     the candidate's own batched_release_sampler against its one-fit-per-draw "
          "path (inputs: --inputs-of NAME or the learner it subclasses)")
    print("mechanisms (candidate: a mechanism m(data, rng) built from the reference's parameters):")
    for name in REFERENCES:
        if name not in LEARNERS:
            print(f"  {name}")
    from audit.oracle.exact_laws import EXACT_REFERENCES

    print("exact laws (--exact: the candidate alone against the reference's exact release law):")
    for name, ref in EXACT_REFERENCES.items():
        only = "" if name in LEARNERS or name in REFERENCES else " (with --exact only)"
        print(f"  {name:24s} {ref.description}{only}")
    return 0


def _compare_setup(args):
    """``(candidate, reference, params, inputs, n per side, how they are compared)`` for ``args``."""
    from audit.gate.run import resolve
    from audit.engine.comparison.compare import map_parameters
    from audit.results.learner_references import learner_reference, resolve_reference
    from audit.oracle.cases import REFERENCES
    from audit.oracle.claims import N_LEARNER, N_SAMPLES

    given = None if args.params is None else _params(args.params)
    param_map = _json_object(args.param_map, "--param-map")
    if args.reference == "self":
        return _self_setup(args, given, param_map)
    if args.inputs_of is not None:
        raise ValueError("--inputs-of applies to --reference self only")
    try:
        ref = learner_reference(args.reference)
    except KeyError:
        ref = None
    if ref is None:
        if args.reference not in REFERENCES:
            raise ValueError(f"unknown reference {args.reference!r}; `--reference list` lists them")
        if param_map:
            raise ValueError("--param-map applies to learner references only")
        factory, params, inputs = REFERENCES[args.reference]
        params = params if given is None else given
        candidate_cls = resolve(args.subject)
        candidate = candidate_cls(**map_parameters(candidate_cls, params))
        return candidate, factory(**params), params, inputs, N_SAMPLES[args.budget], "outputs", ""
    params = _learner_params(ref, given)
    candidate, reference, how = resolve_reference(ref, resolve(args.subject), params, param_map)
    return candidate, reference, params, ref.inputs + extra_inputs(args, ref, params), N_LEARNER[args.budget], how, \
        unexercised(ref, params)


def unexercised(ref, params: dict) -> str:
    """What the reference's parameters ``params`` leave untested (:attr:`LearnerReference.unexercised`), or ""."""
    return ref.unexercised(params) if ref.unexercised is not None else ""


def _coordinate_names(reference):
    """``names(data)`` for :func:`compare_distributions`: what each coordinate of ``reference``'s numeric
    output is (learner references), None when it cannot say."""
    method = getattr(reference, "coordinate_names", None)
    if method is None:
        return None

    def names(data):
        try:
            return method(data)
        except Exception:  # noqa: BLE001 - a name is a courtesy: the sampling reports the reference's errors
            return None

    return names


def _user_inputs(spec: str) -> list:
    """``(name, (X, y))`` pairs of ``--inputs SPEC``: a CSV file (features, then the label in the last column;
    an optional header line), or ``MODULE:FUNCTION`` returning a list of ``(name, (X, y))`` or ``(X, y)``."""
    import numpy as np

    path = Path(spec)
    if spec.lower().endswith(".csv") or path.is_file():
        if not path.is_file():
            raise ValueError(f"--inputs {spec!r}: no such file")
        lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
        try:
            float(lines[0].split(",")[0])
        except (ValueError, IndexError):
            lines = lines[1:]  # a header
        try:
            table = np.array([[float(v) for v in ln.split(",")] for ln in lines], dtype=float)
        except ValueError as exc:
            raise ValueError(f"--inputs {spec!r}: every row must hold numbers (features, then the label): {exc}") \
                from None
        if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 2:
            raise ValueError(f"--inputs {spec!r}: need at least one row of features and a label, got shape "
                             f"{table.shape}")
        y = table[:, -1]
        y = y.astype(np.int64) if np.all(y == np.round(y)) else y
        return [(f"{path.name}", (table[:, :-1], y))]
    from audit.gate.run import resolve

    got = resolve(spec)
    got = got() if callable(got) else got
    out = []
    for k, item in enumerate(list(got)):
        if len(item) == 2 and isinstance(item[0], str):
            name, data = item
        else:
            name, data = f"{spec} #{k}", item
        X, y = data
        out.append((str(name), (np.asarray(X), np.asarray(y))))
    if not out:
        raise ValueError(f"--inputs {spec!r} gave no inputs")
    return out


def extra_inputs(args, ref, params) -> list:
    """The user's ``--inputs`` and ``--generated N`` hypothesis-generated datasets (as ``--noise off`` draws
    them, seeded by ``--seed``) added to the reference's built-in inputs."""
    out = []
    for spec in getattr(args, "inputs", None) or []:
        out.extend(_user_inputs(spec))
    n = getattr(args, "generated", None) or 0
    if n:
        out.extend(generated_inputs(ref, params, n, args.seed))
    return out


def generated_inputs(ref, params, n: int, seed: int) -> list:
    """``n`` datasets drawn by the ``--noise off`` generator (records inside the public bounds, labels among the
    public classes), the same for the same ``seed``."""
    from hypothesis import HealthCheck, given, seed as hyp_seed, settings

    from audit.engine.comparison.compare_noise_off import dataset_strategy

    got = []

    @hyp_seed(seed)
    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(dataset_strategy(ref, params))
    def collect(data):
        if len(got) < n:
            got.append(data)

    collect()
    return [(f"generated #{k}: X = {X.tolist()}, y = {y.tolist()}", (X, y)) for k, (X, y) in enumerate(got)]


def _learner_params(ref, given):
    """``ref``'s default parameters overridden by ``--params``; one it does not take is an error listing them."""
    params = dict(ref.params)
    if given is not None:
        from inspect import signature

        accepted = signature(ref.load()).parameters
        unknown = sorted(k for k in given if k not in accepted or k == "random_state")
        if unknown:
            raise ValueError(f"--params: the reference {ref.name!r} takes no parameter(s) {unknown}; it accepts "
                             f"{sorted(k for k in accepted if k != 'random_state')}")
        params.update(given)
    return params


def _self_setup(args, given, param_map):
    """``--reference self``: the candidate's declared batched sampler against its own one-fit-per-draw path."""
    from audit.gate.run import resolve
    from audit.results.learner_references import LEARNERS, fitted_mechanism, learner_reference, rename_parameters
    from audit.oracle.claims import N_LEARNER

    cls = resolve(args.subject)
    if args.inputs_of is not None:
        if args.inputs_of not in LEARNERS:
            raise ValueError(f"--inputs-of {args.inputs_of!r} is not a reference learner; `--reference list` "
                             "lists them")
        ref = LEARNERS[args.inputs_of]
    else:
        base = next((r for r in LEARNERS.values() if isinstance(cls, type) and issubclass(cls, r.load())), None)
        if base is None:
            raise ValueError(f"--reference self: {args.subject!r} subclasses no reference learner; name the one "
                             "whose inputs to use with --inputs-of NAME")
        ref = learner_reference(base.name)
    params = rename_parameters(_learner_params(ref, given), param_map, cls)
    fast = fitted_mechanism(cls, params, ref, True)
    if fast._sampler() is None:
        raise ValueError(f"{args.subject!r} declares no batched sampler for these parameters "
                         "(batched_release_sampler returned None or is absent): nothing to compare")
    slow = fitted_mechanism(cls, params, ref, True, fast=False)
    return fast, slow, params, ref.inputs, N_LEARNER[args.budget], \
        "release() through its batched sampler against one fit per draw", unexercised(ref, params)


def _compare_noise_off(args, _error) -> int:
    """``--noise off``: exit 0 when every generated dataset's candidate release lies in the reference's tie set
    and the tie splits pass their two-sample test, 1 with the shrunk dataset or the failing test, 2 on a usage
    error (a candidate without ``release()``, a reference that raises)."""
    from audit.gate.run import CheckError, resolve
    from audit.engine.comparison.compare_noise_off import NoiseOffMismatch, ReferenceRaised, check_noise_off
    from audit.results.learner_references import fitted_mechanism, learner_reference, rename_parameters
    from audit.oracle.claims import ALPHA

    try:
        try:
            ref = learner_reference(args.reference)
        except KeyError:
            raise ValueError(f"--noise off compares learners; {args.reference!r} is not one "
                             "(`--reference list`)") from None
        if ref.noise_off is None:
            raise ValueError(f"--noise off: the reference {ref.name!r} has randomness beyond its privacy noise "
                             "(random structure or features), so its release is not a function of the data")
        given = None if args.params is None else _params(args.params)
        params = dict(_learner_params(ref, given), **ref.noise_off)
        cls = resolve(args.subject)
        cand_params = rename_parameters(params, _json_object(args.param_map, "--param-map"), cls)
        alpha = ALPHA if args.alpha is None else args.alpha
        n, ties, conventions = check_noise_off(cls, cand_params, ref, params, max_examples=args.samples or 200, seed=args.seed,
                                  alpha=alpha, mechanism=lambda c, p: fitted_mechanism(c, p, ref, True, fast=False,
                                                                                       output="discrete"))
    except NoiseOffMismatch as exc:
        print(f"DIFFERENT (noise off, shrunk counterexample): {exc}")
        return 1
    except ReferenceRaised as exc:
        return _error(f"{exc}: the reference must fit every generated dataset; check --params")
    except (CheckError, ValueError, TypeError) as exc:
        return _error(str(exc) + extras.hint(exc))
    print(f"no difference found: {n} hypothesis-generated datasets, every candidate release in the reference's tie "
          f"set with the noise off ({json.dumps(ref.noise_off)})")
    for text in conventions[:3]:
        print(f"  note: {text}")
    if len(conventions) > 3:
        print(f"  note: {len(conventions) - 3} more datasets where an exact Gini tie went to another split")
    if ties is None:
        print("no generated dataset had a leaf of tied classes: the split within the tie set was not tested")
        return 0
    for r in ties.rows:
        print(f"  tie split on {r.input}: {r.test}, p {r.p_value:.3g}, Holm-adjusted {r.p_adjusted:.3g}")
    if ties.rejected:
        print(f"DIFFERENT (noise off): the split within the reference's tie set differs: {ties.summary()}")
        return 1
    print(f"the split within tie sets: {ties.summary()}")
    return 0


def command(args, _error, _finish) -> int:
    """The ``compare`` command (``_error(msg)`` prints and returns 2; ``_finish`` writes the report)."""
    from audit.gate.run import CheckError, params_text
    from audit.engine.comparison.compare import CandidateRaised, compare_distributions
    from audit.oracle.claims import ALPHA

    if args.reference == "list":
        try:
            return _list_references(None if args.params is None else _params(args.params))
        except (CheckError, ValueError) as exc:
            return _error(str(exc))
    if not args.subject:
        return _error("compare needs the candidate MODULE:CALLABLE")
    if args.exact and (args.noise == "off" or args.reference == "self"):
        return _error("--exact tests a candidate against a reference's exact law; it takes neither --noise off nor "
                      "--reference self")
    if args.noise == "off":
        return _compare_noise_off(args, _error)
    if args.samples is not None and args.samples < 2:
        return _error(f"--samples must be an integer >= 2, got {args.samples}")
    alpha = ALPHA if args.alpha is None else args.alpha
    if not 0 < alpha < 1:
        return _error(f"--alpha must be in (0, 1), got {args.alpha}")
    if args.exact:
        return _compare_exact(args, alpha, _error, _finish)
    try:
        candidate, reference, params, inputs, n, how, untested = _compare_setup(args)
        n = args.samples or n
        start = time.perf_counter()
        res = compare_distributions(candidate, reference, inputs, n_samples=n, alpha=alpha, seed=args.seed,
                                    names=_coordinate_names(reference))
    except CandidateRaised as exc:  # the reference fits the input: a candidate that raises differs from it
        print(f"DIFFERENT: {exc}")
        return 1
    except (CheckError, ValueError, TypeError) as exc:
        return _error(str(exc) + extras.hint(exc))
    probe = getattr(candidate, "probe", None) if not getattr(candidate, "use_release", True) else None
    return _write(args, res, alpha, start, f"Parameters (both sides): {params_text(params)}; compared through "
                  f"{how}, {len(inputs)} public inputs.", _finish, probe, untested)


def _compare_exact(args, alpha, _error, _finish) -> int:
    """``--exact``: the candidate's releases against the reference's exact law (:mod:`audit.engine.comparison.exact_oracle`)."""
    from audit.gate.run import CheckError, params_text, resolve
    from audit.engine.comparison.exact_oracle import compare_exact
    from audit.results.learner_references import rename_parameters, fitted_mechanism
    from audit.oracle.claims import N_LEARNER
    from audit.oracle.exact_laws import exact_reference

    try:
        ref = exact_reference(args.reference)
        given = None if args.params is None else _params(args.params)
        params = _learner_params(ref, given)
        cls = resolve(args.subject)
        if not callable(getattr(cls, "release", None)):
            raise ValueError(f"--exact compares whole releases: the candidate {args.subject!r} has no release()")
        cand_params = rename_parameters(params, _json_object(args.param_map, "--param-map"), cls)
        candidate = fitted_mechanism(cls, cand_params, ref.learner_reference(), True, output="discrete")
        laws = [ref.law(params, *data) for _, data in ref.inputs]
        start = time.perf_counter()
        res = compare_exact(candidate, ref.inputs, laws, n_samples=args.samples or N_LEARNER[args.budget],
                            alpha=alpha, seed=args.seed, floor=ref.floor)
    except (CheckError, ValueError, TypeError) as exc:
        return _error(str(exc) + extras.hint(exc))
    return _write(args, res, alpha, start, f"Parameters: {params_text(params)}; the candidate's release() against "
                  f"the exact law of {accounting_label(ref.description, params)}; {len(ref.inputs)} public inputs; "
                  "one-sample test, no reference draws.", _finish,
                  unexercised=ref.not_exercised)


def first_disagreement(differences, probe) -> str:
    """For predictions on a probe grid: the first probe point where the reference's and the candidate's most
    frequent outcomes (among ``differences``, ``(outcome, reference count, candidate count)``) disagree."""
    import numpy as np

    items = [d for d in differences if isinstance(d, tuple) and len(d) == 3 and isinstance(d[0], tuple)]
    if probe is None or len(items) < 2:
        return ""
    ref_top = max(items, key=lambda d: d[1])[0]
    cand_top = max(items, key=lambda d: d[2])[0]
    if ref_top == cand_top or len(ref_top) != len(cand_top) or len(ref_top) != len(probe):
        return ""
    i = next(k for k in range(len(ref_top)) if ref_top[k] != cand_top[k])
    point = ", ".join(f"{v:g}" for v in np.asarray(probe)[i])
    return (f"; first probe point where the most frequent predictions disagree: #{i} ({point}): reference "
            f"{ref_top[i]}, candidate {cand_top[i]}")


def _most_different(r, side: str, limit: int | None = None) -> str:
    """The outcomes of most different frequency (``side`` vs candidate counts; the first ``limit``), or the most
    different coordinate of vector outputs by what it is, as text ("" when there is neither)."""
    if not r.differences:
        return ""
    if isinstance(r.differences[0], tuple):
        from audit.engine.presentation.render import compact

        return (f"outcomes of most different frequency, {side} vs candidate counts: "
                + "; ".join(f"{compact(o)}: {a} vs {b}" for o, a, b in r.differences[:limit]))
    return "most different coordinate: " + ", ".join(map(str, r.differences))


def _write(args, res, alpha, start, note, _finish, probe=None, unexercised="") -> int:
    """The comparison's report (``res``: a two-sample or an exact comparison), written by ``_finish``;
    ``unexercised``: what the comparison leaves untested, said in the notes and on the console."""
    from audit.results.report import Report

    name = report_name(args.subject, args.reference) + params_suffix(args.params) + ("-exact" if args.exact else "")
    report = Report(name, args.budget, args.seed, title=f"`{args.subject}` against the reference `{args.reference}`"
                    + (" (its exact law)." if args.exact else "."))
    side = "expected" if args.exact else "reference"
    detail = res.summary()
    if res.rejected:
        worst = [r for r in res.rows if r.p_adjusted < res.level]
        detail += "; different on " + "; ".join(
            f"input {shown(r.input)}" + (f" ({_most_different(r, side, 3)})" if r.differences else "")
            + first_disagreement(r.differences, probe) for r in worst)
    report.comparisons.append({"id": name, "candidate": args.subject, "reference": args.reference,
                               "expected": "same", "expected_stated": False,
                               "verdict": "different" if res.rejected else "same",
                               "p_min": min(r.p_adjusted for r in res.rows), "n_samples": res.n_samples,
                               "alpha": alpha, "test": "exact" if args.exact else "two-sample",
                               "detail": detail})
    report.notes.append(note)
    if unexercised:
        report.notes.append(f"Not exercised: {unexercised}.")
    for r in res.rows:
        diffs = _most_different(r, side)
        report.notes.append(f"input {shown(r.input)}: {r.test}, statistic {r.statistic:.4g}, p {r.p_value:.3g}, "
                            f"Holm-adjusted {r.p_adjusted:.3g}" + (f"; {diffs}" if diffs else "")
                            + first_disagreement(r.differences, probe))
    report.elapsed_s = time.perf_counter() - start
    return _finish(report, args.out, checkpoint.Checkpoint(Path(args.out) / f".{name}.unused", resume=False),
                   not res.rejected, f"Not exercised: {unexercised}." if unexercised else "")
