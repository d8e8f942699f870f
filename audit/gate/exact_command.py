"""``python -m audit check MODULE:CALLABLE --epsilon E --exact``: the exact loss of the user's code on a tiny
domain (:mod:`audit.gate.exact`), written as a ``check`` report whose claim row carries ``exact_epsilon``
(``[lo, hi]``), ``exact_verdict`` (``proved``, ``refuted`` or ``undecided``) and the domain it speaks of.

Exit codes: 0 proved, 1 refuted, and the gate's "could not finish" code (3, which the front end passes in) when
undecided, whatever the reason (a continuous draw, a path count beyond the cap, a coupling that fails).
"""
from __future__ import annotations

import sys

__all__ = ["add_arguments", "command"]


def add_arguments(chk) -> None:
    """The ``--exact`` options of ``check``."""
    chk.add_argument("--exact", action="store_true",
                     help="compute the exact epsilon on a tiny public domain instead of sampling: every dataset of "
                          "at most --exact-records records (estimators: features at the ends of --bounds, labels "
                          "from --classes; mechanisms: records from --classes, or --pairs), every outcome of the "
                          "code's NumPy randomness followed; exit 0 proved on this domain, 1 refuted, 3 undecided")
    chk.add_argument("--exact-records", type=int, default=None, metavar="N",
                     help="--exact: the largest dataset of the domain (default 3)")


def command(args, error, finish, unfinished: int) -> int:
    """Run ``check --exact`` (module docstring); ``error(message)`` reports a usage error, ``finish`` writes the
    report and prints the summary as every command does, ``unfinished`` is the exit status of an undecided
    claim."""
    import re
    from pathlib import Path

    from audit.engine.estimation.estimate import Claim
    from audit.engine.exact_code.symbolic import Undecided
    from audit.engine.runs import checkpoint
    from audit.gate.exact import EXACT_RECORDS, ExactResult, exact_check, exact_row
    from audit.gate.inputs import CheckError, resolve, user_pairs
    from audit.gate.run import Subject, parse_bounds, parse_classes, parse_params
    from audit.results.report import Report

    if args.claims:
        return error("--exact audits one MODULE:CALLABLE, not a claims file")
    if not args.subject:
        return error("check --exact needs MODULE:CALLABLE")
    if args.epsilon is None:
        return error("check MODULE:CALLABLE needs --epsilon")
    if args.delta:
        return error(f"--exact decides pure epsilon claims; got --delta {args.delta:g}")
    records = EXACT_RECORDS if args.exact_records is None else args.exact_records
    if records < 1:
        return error(f"--exact-records must be an integer >= 1, got {records}")
    try:
        Claim(args.epsilon, 0.0, args.neighbours)
        params = parse_params(args.params)
        target = resolve(args.subject)
        bounds, classes = parse_bounds(args.bounds), parse_classes(args.classes)
        pairs = user_pairs(args.pairs, args.neighbours) if args.pairs else None
    except (CheckError, ValueError, TypeError) as exc:
        return error(str(exc))
    subject = Subject(args.subject, args.subject, args.epsilon, 0.0, args.neighbours, params, None)
    # its own folder: an exact run never replaces the sampled report of the same subject
    name = "check-" + re.sub(r"[^A-Za-z0-9_.-]", "_", args.subject.replace(":", "-")) + "-exact"
    report = Report(name, "exact", args.seed, title="The exact privacy loss of outside code on a tiny domain, "
                                                    "computed by `python -m audit check --exact`.")
    try:
        result = exact_check(target, args.epsilon, args.neighbours, bounds=bounds, classes=classes, records=records,
                            params=params, pairs=pairs)
    except Undecided as exc:
        result = ExactResult(0.0, float("inf"), "undecided", str(exc), _domain_text(records, bounds, classes, pairs),
                             0)
    except ValueError as exc:
        return error(str(exc))
    except Exception as exc:  # the code failed under tracing (a NumPy call the traced values do not support)
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1]
        result = ExactResult(0.0, float("inf"), "undecided",
                             f"the code raised {type(exc).__name__}: {exc} at {frame.filename}:{frame.lineno} while "
                             "its draws were traced (a NumPy call on noisy values the exact mode does not follow)",
                             _domain_text(records, bounds, classes, pairs), 0)
    row = exact_row(subject, result)
    report.claims.append(row)
    report.elapsed_s = result.seconds
    report.notes.append(
        "Exact mode: every neighbouring pair of the tiny domain, every outcome of the code's NumPy randomness "
        "followed (finite draws value by value, geometric and Poisson noise as affine forms of known law, "
        "decisions on noisy values symbolically), each pair's loss an interval [lower, upper] holding the true "
        "value. 'proved' speaks of this domain and these sizes only; 'undecided' says why no proof was reached.")
    with checkpoint.active(Path(args.out) / f".{name}.checkpoint-exact-{args.seed}.json", resume=False) as ckpt:
        code = finish(report, args.out, ckpt, True)
    line = _console_line(result, args.epsilon)
    print(line, file=sys.stderr if result.verdict != "proved" else sys.stdout)
    if code != 0:
        return code
    return {"proved": 0, "refuted": 1}.get(result.verdict, unfinished)


def _domain_text(records, bounds, classes, pairs) -> str:
    if pairs:
        return f"the {len(pairs)} pairs given (--pairs)"
    return f"datasets of at most {records} records (bounds {bounds}, classes {classes})"


def _console_line(result, epsilon: float) -> str:
    """What was proved, refuted or left undecided, plainly: the interval, the domain, the worst pair."""
    lo, hi = result.lower, result.upper
    interval = f"[{lo:.6g}, {hi:.6g}]"
    if result.verdict == "proved":
        head = f"PROVED on this domain: exact ε in {interval} ≤ claimed {epsilon:g}"
    elif result.verdict == "refuted":
        head = f"REFUTED: exact ε ≥ {lo:.6g} > claimed {epsilon:g} (exact ε in {interval})"
    else:
        head = f"UNDECIDED: exact ε in {interval}, claimed {epsilon:g}: {result.reason}"
    tail = [f"domain: {result.domain}" + (f" ({result.pairs} neighbouring pairs)" if result.pairs else "")]
    if result.worst_lower:
        tail.append(f"worst pair: {result.worst_lower}; release: {result.release}")
    if result.note:
        tail.append(result.note)
    return head + "\n  " + "\n  ".join(tail)
