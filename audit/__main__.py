"""Command line: ``python -m audit list | run TARGET | check MODULE:CALLABLE | check --claims FILE | compare |
reproduce PAPER``.

Exit status: for ``run``, 0 when every verdict matches what is expected and
1 when one does not; for ``check``, 0 when no claim is violated and 1 when
one is, except that a claims-file subject marked ``expected = "violation"`` must be
violated (its row is then as expected); 2 for a usage error (the message says what is wrong, found before
any sampling, an unwritable ``--out`` included); 3 when the gate could not finish (the subject ended the
process, or the gate failed: :mod:`audit.frontends.fail_closed`, which runs ``check`` and ``compare`` in a worker process);
130 when interrupted.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

import reference
from audit.results import extras
from audit.engine.runs import checkpoint, progress
from audit.engine.estimation import sampling
from audit.gate import exact_command
from audit.frontends.fail_closed import EXIT_UNFINISHED
from audit.frontends.options import Parser, common_options
from audit.engine.estimation.parts import single_thread
from audit.results.report import write_report
from audit.targets import TARGETS, load
from reference.randomness import seeded_fits


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (every subcommand and option; the docs' command line page is generated from it)."""
    from audit.gate.verdict import AFTER_FINDING

    p = Parser(prog="python -m audit", description="Audit differential-privacy claims.")
    p.add_argument("--version", action="version", version=f"dptree-audit {reference.__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                           help="what to do (python -m audit COMMAND --help for its options)")
    sub.add_parser("list", help="list the audit targets")
    found = sub.add_parser("findings", help="each paper's privacy claim, measured, with its verdict (from the committed "
                                            "reports)")
    found.add_argument("--format", choices=("text", "markdown"), default=None,
                       help="text: one block per finding, verdict first, wrapped to the terminal's width; markdown: "
                            "the README's table (default: text on a terminal, markdown when piped)")
    run = sub.add_parser("run", help="audit one target and write its report")
    run.add_argument("target", help="a name from `python -m audit list`")
    common_options(run, "quick")
    chk = sub.add_parser("check", help="audit an outside mechanism or estimator, or a claims file")
    chk.add_argument("subject", nargs="?", help="MODULE:CALLABLE (omit with --claims)")
    chk.add_argument("--claims", help="a dp-claims.toml file of several subjects")
    chk.add_argument("--epsilon", type=float, help="the claimed epsilon")
    chk.add_argument("--delta", type=float, default=0.0, help="the claimed delta (default 0)")
    chk.add_argument("--neighbours", choices=("add-remove", "substitute"), default="add-remove",
                     help="the neighbouring relation of the claim: add-remove (the default: D' is D plus or minus "
                          "one record) or substitute (D' is D with one record replaced); the searched and default "
                          "pairs follow it")
    chk.add_argument("--params", default="{}",
                     help="constructor or factory arguments: a JSON object, a Python literal dict where JSON cannot "
                          "say it (tuples: \"{'bounds': ((0, 0), (1, 1))}\", as diffprivlib wants), or "
                          "MODULE:FUNCTION returning the dict (numpy arrays, objects)")
    chk.add_argument("--data", default=None,
                     help="estimators: builtin:NAME or PATH.csv (default builtin:blobs); "
                          "mechanisms: scalar (default) or query:N")
    chk.add_argument("--pairs", default=None,
                     help="MODULE:FUNCTION returning extra neighbouring pairs [(d0, d1), ...], always audited")
    chk.add_argument("--bounds", default=None,
                     help='public bounds per feature, JSON: [[0, 1], [0, 1]] (default: the dataset\'s)')
    chk.add_argument("--classes", default=None, help="public class labels, JSON list or comma-separated")
    chk.add_argument("--n-samples", "--samples", dest="n_samples", type=int, default=None,
                     help="outputs per input for each audited pair (default: the budget's); --samples, as "
                          "compare spells it, is the same option")
    chk.add_argument("--release", default="auto",
                     help="estimators: auto (everything published: release() if any, predict and predict_proba "
                          "on a grid over the domain, the fitted structure when recognised, and every number the "
                          "fitted model's pickle carries, by attribute path), or a comma list of the kinds release, "
                          "predictions, structure, attributes and fitted attribute names ATTR (length and first "
                          "values)")
    chk.add_argument("--no-search", action="store_true",
                     help="estimators: audit only the default (or --pairs) pairs, no neighbour search")
    chk.add_argument("--exceptions", choices=("fail", "report", "off"), default="fail",
                     help="estimators: an exception in fit is an outcome (its type and message) that decides the "
                          "verdict (fail, the default: a refusal on one dataset of a pair and not the other tells "
                          "them apart), except the refusals --exempt names (by default an empty dataset's, "
                          "reported on a line of its own); report: the same with empty,one-class exempt; off: an "
                          "exception is a usage error")
    chk.add_argument("--no-exceptions", action="store_true", help="the same as --exceptions off")
    chk.add_argument("--exempt", default=None,
                     help="estimators: refusals that do not decide, as a comma list of empty (a dataset of no "
                          "records), one-class (a single label) and exception type names, or none; a pair one of "
                          "whose datasets fit refuses so on every one of 5 fits lies outside the claim's domain and "
                          "is reported on a line of its own (default: empty with --exceptions fail, empty,one-class "
                          "with --exceptions report)")
    chk.add_argument("--no-float-probe", action="store_true",
                     help="mechanisms and estimators: no floating-point (mantissa pattern) events, on scalar "
                          "outputs and on every real-valued coordinate of vector outputs")
    chk.add_argument("--no-scale", action="store_true",
                     help="estimators: no scale family (tiny patterns grown to thousands of records, bisected to "
                          "the size where the outputs move most; up to 16,000 records at quick)")
    chk.add_argument("--scale-records", type=int, default=None, metavar="N",
                     help="estimators: the largest size the scale family reaches, rounded down to 1,000 times a "
                          "power of two (default 16,000 at quick, 32,000 at standard, 128,000 at full); its pair is "
                          "confirmed at 24 M (quick), 128 M (standard) or 1.28 G (full) records fitted per input, "
                          "divided by the pair's size")
    chk.add_argument("--scale-seconds", type=float, default=None, metavar="S",
                     help="estimators: safety cap on the wall seconds the scale family may spend choosing its pair "
                          "(default 450 at quick, 2,400 at standard, 9,000 at full, about ten times the expected); "
                          "the work itself is fixed by --scale-records, never by time. When the cap stops the "
                          "family, the report and console name the patterns left out and a pass reads inconclusive")
    chk.add_argument("--witnesses", default=None, metavar="PATH|off",
                     help="the witness store: the pairs that came closest to refuting each claim, re-tested first "
                          "on every run (a bug they found fails in seconds), with their evidence accumulated over "
                          "runs (a test martingale: over the whole history a claim that holds is refuted by them "
                          "with probability at most alpha), and the fingerprint of the last full audit (unchanged: "
                          "the full audit is skipped). Default: $DP_AUDIT_WITNESSES, else .dp-audit in the working "
                          "directory; off: none")
    chk.add_argument("--strict-power", action="store_true",
                     help="fail the gate (exit 1) on an inconclusive pass: one that could not have caught a loss of "
                          "1.25 times the claim with probability 0.9 (default: such a pass exits 0 and its line "
                          "and report say 'inconclusive' with the sample size that would make it conclusive)")
    chk.add_argument("--no-grow", action="store_true",
                     help="do not grow an inconclusive pass (default: its winning pair is audited again at 4 and 16 "
                          "times the outputs, each stage at most --grow-max outputs per input, with a fifth of alpha "
                          "kept for it, until it is conclusive)")
    chk.add_argument("--grow-max", type=int, default=None, metavar="N",
                     help="the most outputs per input a growth stage may draw (default for mechanisms 80,000 at "
                          "quick, 1,600,000 at standard, 16,000,000 at full; for estimators the budget's own outputs "
                          "per input); a safety cap of 600 s (quick) stops further stages and is named in the report")
    chk.add_argument("--state", choices=("fail", "warn", "off"), default="fail",
                     help="estimators: random generators, their states, copies of the seed, and kept values whose "
                          "replay reproduces the published model (a derived or OS-entropy seed), found in the "
                          "fitted model or its pickle before any sampling: fail the gate (default: whoever holds "
                          "the model can replay the noise, ε = ∞), warn (report only) or off (no probe)")
    chk.add_argument("--determinism", choices=("fail", "warn", "off"), default="fail",
                     help="estimators: any observable (attribute, method output on the probe grid, repr, warning, "
                          "log line, printed text, exception) the same on every fit as shipped of a dataset and "
                          "different on its neighbour, a trace of the data that no noise covers: fail the gate "
                          "(default), warn (report only) or off (no probe)")
    chk.add_argument("--after-finding", choices=AFTER_FINDING, default="stop",
                     help="estimators: once kept state or determinism (both certain, from fits before any sampling) "
                          "has decided a violation, stop (default: the verdict is final and the report says the "
                          "sampled stages were skipped) or sample (run the scale family, the neighbour search and the "
                          "floating-point probe too, to measure every other leak)")
    common_options(chk, "quick")
    exact_command.add_arguments(chk)
    cmp = sub.add_parser("compare", help="compare a candidate implementation with a reference, in distribution")
    cmp.add_argument("subject", nargs="?",
                     help="MODULE:CALLABLE: the candidate (a class or factory taking the reference's parameters)")
    cmp.add_argument("--reference", required=True,
                     help="a reference's short name or MODULE:CALLABLE of a reference learner (`--reference list`)")
    cmp.add_argument("--params", default=None,
                     help="parameters given to both (mechanisms: replaces the reference's defaults; learners: "
                          "overrides them): a JSON object, a Python literal dict (tuples allowed) or MODULE:FUNCTION "
                          "returning the dict, as for check")
    cmp.add_argument("--param-map", default="{}",
                     help="JSON object renaming the reference's parameters to the candidate's names")
    cmp.add_argument("--noise", choices=("on", "off"), default="on",
                     help="off: exact equality of releases with the privacy noise off, on hypothesis-generated "
                          "datasets (learners whose only randomness is their noise: privatree)")
    cmp.add_argument("--exact", action="store_true",
                     help="test the candidate's releases against the reference's exact law (no reference draws; "
                          "references with one: privatree, random-trees, diprime-flip-classifier; their inputs and "
                          "default parameters are those within the law's reach)")
    cmp.add_argument("--inputs-of", default=None,
                     help="with --reference self: the reference learner whose public inputs and default parameters "
                          "are used (default: the one the candidate subclasses)")
    cmp.add_argument("--inputs", action="append", default=None, metavar="MODULE:FUNCTION|CSV",
                     help="more inputs beside the reference's: MODULE:FUNCTION returning a list of (name, (X, y)), "
                          "or a CSV file (features, then the label; an optional header); repeatable")
    cmp.add_argument("--generated", type=int, default=0, metavar="N",
                     help="add N hypothesis-generated datasets (as --noise off draws them, seeded by --seed)")
    cmp.add_argument("--alpha", type=float, default=None,
                     help="false-alarm rate of the comparison: an identical candidate is called different with "
                          "probability at most alpha (default 0.01)")
    cmp.add_argument("--samples", "--n-samples", dest="samples", type=int, default=None,
                     help="draws per side and input (default: the budget's; learners 8,000 at quick); "
                          "with --noise off, the number of generated datasets (default 200); --n-samples, as "
                          "check spells it, is the same option")
    common_options(cmp, "quick")
    dat = sub.add_parser("data", help="list or fetch the public benchmark files the reproductions read")
    dsub = dat.add_subparsers(dest="data_command", required=True, metavar="ACTION",
                              help="list (what is known and present) or fetch (download and verify)")
    dl = dsub.add_parser("list", help="every known file, whether the data directory has it, and its source")
    dl.add_argument("--data-dir", default=None, help="the directory to check (default: where reproduce looks)")
    df = dsub.add_parser("fetch", help="download, verify (SHA-256) and place files where reproduce finds them")
    df.add_argument("names", nargs="*", help="file or dataset names (default: every file of --paper, or of all papers)")
    df.add_argument("--paper", default=None, choices=("privatree", "diprime", "random-trees", "lpdt"),
                    help="only the files this paper's reproduction needs")
    df.add_argument("--data-dir", default=None,
                    help="where to put them (default: $DPTREE_AUDIT_DATA, else ~/.cache/dptree-audit/data)")
    df.add_argument("--source-url", default=None,
                    help="base URL replacing https://raw.githubusercontent.com (a mirror: BASE/OWNER/REPO/COMMIT/PATH)")
    df.add_argument("--force", action="store_true", help="fetch again files already present")
    df.add_argument("--timeout", type=float, default=60.0, help="seconds per download (default 60)")
    from audit.results.certify import CERTIFY_TARGETS

    cert = sub.add_parser("certify", help="exact privacy loss over every neighbouring pair of a tiny public domain",
                          formatter_class=argparse.RawDescriptionHelpFormatter,
                          epilog="targets:\n" + "\n".join(f"  {t}" for t in CERTIFY_TARGETS))
    cert.add_argument("target", help="a target with exact laws (the list below)")
    cert.add_argument("--out", default=None,
                      help="directory of reports (default: reports/.runs, never a committed report)")
    cert.add_argument("--replace", action="store_true",
                      help="replace a certificate that git tracks in OUT/TARGET/ (by default it is kept and this "
                           "run goes to OUT/.runs/certify/)")
    cert.add_argument("--seed", type=int, default=0, help="master seed (recorded; the certificate draws nothing)")
    cert.add_argument("--jobs", type=int, default=1, help="worker processes computing the datasets' laws")
    cert.add_argument("--format", choices=("text", "json"), default="text",
                      help="the closing summary as text (default) or as one JSON object on stdout")
    cert.add_argument("--quiet", action="store_true", help="no progress output")
    rep = sub.add_parser("reproduce", help="reproduce a paper's tables side by side with ours")
    rep.add_argument("paper", help="privatree, diprime, random-trees or lpdt")
    rep.add_argument("--datasets", default=None, help="comma-separated dataset names (default: all the paper's)")
    rep.add_argument("--data-dir", default=None,
                     help="directory of the benchmark files (default: $DPTREE_AUDIT_DATA, else ../shared/data)")
    rep.add_argument("--smoke", action="store_true",
                     help="a reduced protocol (one epsilon, few runs) on a dataset bundled with scikit-learn: checks "
                          "the pipeline, not the numbers, offline (no data directory needed)")
    rep.add_argument("--out", default=None,
                     help="directory of reports (default: reports for a full run with every dataset present, which "
                          "replaces the committed reproduction; TMPDIR/dptree-audit/smoke for --smoke; reports/.runs "
                          "otherwise)")
    rep.add_argument("--seed", type=int, default=0, help="master seed")
    rep.add_argument("--jobs", type=int, default=1, help="worker processes (same seed, same tables)")
    rep.add_argument("--quiet", action="store_true", help="no progress output")
    rep.add_argument("--baseline", default=None,
                     help="an earlier run's PAPER.json: the report adds how far each of our numbers moved from it")
    return p


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _certify(args) -> int:
    from audit.results.certify import command

    return command(args, checkpoint.progress, _error)


def _data(args) -> int:
    from audit.results.data_fetch import command

    return command(args, _error)


def _error(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def _unwritable(out) -> str | None:
    """Why the directory ``--out`` names cannot take a report (None when it can): checked before any sampling,
    so a run never spends its work and then fails to write."""
    try:  # the nearest folder that exists must take a file; nothing is created (a failed run writes nothing)
        where = Path(out).absolute()
        while not where.exists() and where != where.parent:
            where = where.parent
        if not where.is_dir():
            raise NotADirectoryError(20, f"{where} is not a directory")
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as exc:
        return (f"--out {str(out)!r} cannot be written ({type(exc).__name__}: {exc.strerror or exc}); choose a "
                "writable directory")
    return None


def _witnesses_unusable(given) -> str | None:
    """Why the witness store cannot be used (None when it can, or is off): checked before any sampling."""
    from audit.gate.witnesses import WitnessStore, store_path

    try:
        folder = store_path(given)
    except ValueError as exc:
        return str(exc)
    if folder is None:
        return None
    why = _unwritable(folder)
    if why is not None:
        return why.replace("--out", "--witnesses", 1)
    try:
        WitnessStore(folder)
    except ValueError as exc:
        return str(exc)
    return None


def _finish(report, out: str, ckpt: checkpoint.Checkpoint, ok: bool, note: str = "") -> int:
    report.elapsed_s += ckpt.elapsed_before()  # a resumed run's report shows the whole time
    path = write_report(report, out)
    ckpt.discard()
    args = _ARGS
    if getattr(args, "print_report", False):
        print(report.to_markdown([]).split("## Versions")[0].rstrip() + "\n")
    if getattr(args, "format", "text") == "json":
        print(progress.summary_json(report, path, note))
    else:
        print("\n".join(progress.summary_lines(report, path, note)))
    return 0 if ok else 1


def _default_out(target: str, budget: str) -> tuple[str, str]:
    """Where ``run`` writes without ``--out``: ``reports``, unless ``reports/TARGET`` holds a report of a
    larger budget (a committed one, say), which is kept; the run then goes to ``reports/.runs/BUDGET``
    (:mod:`audit.engine.runs.destination`, the rule ``certify`` shares)."""
    from audit.engine.runs.destination import kept_aside, larger_budget

    old = larger_budget(Path("reports") / target / "report.json", budget)
    if old is None:
        return "reports", ""
    return kept_aside("reports", target, budget, f"a {old}-budget report", "choose with --out DIR")


def _run(args) -> int:
    if args.target not in TARGETS:
        return _error(f"unknown target {args.target!r}; choose one of: {', '.join(TARGETS)}")
    note = ""
    if args.out is None:
        args.out, note = _default_out(args.target, args.budget)
    if (why := _unwritable(args.out)) is not None:
        return _error(why)
    if note and not args.quiet and args.format == "text":
        print(note, flush=True)
    ckpt_path = Path(args.out) / f".{args.target}.checkpoint-{args.budget}-{args.seed}.json"
    total = progress.expected_rows(args.target, args.out, Path(__file__).resolve().parents[1] / "reports")
    console = progress.Console(lines=not args.quiet, bar=not args.quiet, total=total, desc=args.target,
                               stream=sys.stderr if args.format == "json" else sys.stdout)
    with checkpoint.active(ckpt_path, resume=args.resume) as ckpt, progress.listening(console):
        report = load(args.target).run(args.budget, args.seed)
    return _finish(report, args.out, ckpt, report.ok, note)


def _budget_given(argv) -> bool:
    """Whether ``argv`` (the command line ``main`` parsed) sets ``--budget`` (``--budget X`` or ``--budget=X``)."""
    return any(a == "--budget" or a.startswith("--budget=") for a in argv)


def _check(args) -> int:
    from audit.gate.run import CheckError, Subject, check_report
    from audit.frontends.claims_file import load_claims

    if args.exact:
        return exact_command.command(args, _error, _finish, EXIT_UNFINISHED)
    try:
        if args.claims:
            if args.subject:
                return _error("give either MODULE:CALLABLE or --claims FILE, not both")
            subjects, settings = load_claims(args.claims)
            # the claims file's budget unless --budget was given on this command line (main's argv)
            budget = args.budget if _budget_given(args.argv) else settings["budget"]
            seed, name = settings["seed"], re.sub(r"[^A-Za-z0-9_-]", "_", Path(args.claims).stem)
        else:
            if not args.subject:
                return _error("check needs MODULE:CALLABLE or --claims FILE")
            if args.epsilon is None:
                return _error("check MODULE:CALLABLE needs --epsilon")
            from audit.gate.run import parse_params
            from audit.engine.estimation.estimate import Claim

            params = parse_params(args.params)

            Claim(args.epsilon, args.delta, args.neighbours)
            subjects = [Subject(args.subject, args.subject, args.epsilon, args.delta, args.neighbours, params,
                                args.data, **_check_options(args))]
            budget, seed = args.budget, args.seed
            name = "check-" + re.sub(r"[^A-Za-z0-9_.-]", "_", args.subject.replace(":", "-"))  # module and class
        from audit.gate.inputs import resolve

        for subject in subjects:  # a subject that cannot be imported is a usage error, before any claim starts
            resolve(subject.target)
        ckpt_path = Path(args.out) / f".{name}.checkpoint-{budget}-{seed}.json"
        with checkpoint.active(ckpt_path, resume=args.resume) as ckpt:
            report = check_report(subjects, budget, seed, name, witnesses=args.witnesses)
    except (CheckError, ValueError, TypeError) as exc:
        return _error(str(exc) + extras.hint(exc))
    violated = [c["id"] + (" (expected)" if c["expected"] == "violation" and c.get("expected_stated", True) else "")
                for c in report.claims if c["verdict"] == "violation"]
    if violated:
        print(f"VIOLATED: {', '.join(violated)}", file=sys.stderr)
    errors = [c for c in report.claims if c["verdict"] == "error"]
    unfinished = [c for c in report.claims if c.get("finished") is False]
    code = _finish(report, args.out, ckpt, report.ok)
    for c in errors:
        print(f"error: {c['id']}: {c['detail'].removeprefix('error: ')}", file=sys.stderr)
    for c in unfinished:
        print(f"could not finish: {c['id']}: a safety cap cut its coverage ("
              + "; ".join(f"{cut['stage']}: {cut['cut']}" for cut in c["coverage_cut"]) + ")", file=sys.stderr)
    refuted = any(c["verdict"] == "violation" for c in report.claims)
    return EXIT_UNFINISHED if errors or (unfinished and not refuted) else code


def _check_options(args) -> dict:
    """The ``check`` flags as :class:`audit.check.Subject` fields (``ValueError`` naming the flag)."""
    from audit.gate.run import parse_bounds, parse_classes, parse_release

    if args.n_samples is not None and args.n_samples < 2:
        raise ValueError(f"--n-samples must be an integer >= 2, got {args.n_samples}")
    if args.scale_records is not None and args.scale_records < 1_000:
        raise ValueError(f"--scale-records must be an integer >= 1000 (the scale family's smallest size), got "
                         f"{args.scale_records}")
    if args.scale_seconds is not None and not args.scale_seconds > 0:
        raise ValueError(f"--scale-seconds must be a positive number of seconds (a safety cap), got "
                         f"{args.scale_seconds}")
    if args.grow_max is not None and args.grow_max < 2:
        raise ValueError(f"--grow-max must be an integer >= 2, got {args.grow_max}")
    return {"pairs": args.pairs, "bounds": parse_bounds(args.bounds), "classes": parse_classes(args.classes),
            "n_samples": args.n_samples, "release": parse_release(args.release), "search": not args.no_search,
            "exceptions": "off" if args.no_exceptions else args.exceptions, "float_probe": not args.no_float_probe,
            "scale": not args.no_scale, "scale_seconds": args.scale_seconds, "scale_records": args.scale_records,
            "grow_max": args.grow_max, "state": args.state,
            "determinism": args.determinism, "after_finding": args.after_finding,
            "strict_power": args.strict_power, "grow": not args.no_grow,
            "exempt": None if args.exempt is None else [e.strip() for e in args.exempt.split(",")]}


def _compare(args) -> int:
    from audit.frontends.compare_command import command

    return command(args, _error, _finish)


def _reproduce(args) -> int:
    """Run a paper's protocol; a committed reproduction (``reports/reproductions/PAPER.md``) is replaced only
    by a full run with every dataset present and ``--out`` not given; anything else goes to
    ``reports/.runs/`` (or ``--out``). Exit 2 when a requested dataset's files are missing or no cell could
    be computed (the message names the files and the command that fetches them)."""
    from audit.reproduce import PAPERS, reproduce

    if args.paper not in PAPERS:
        return _error(f"unknown paper {args.paper!r}; choose one of: {', '.join(PAPERS)}")
    names = None if args.datasets is None else [d.strip() for d in args.datasets.split(",") if d.strip()]
    try:
        rep = reproduce(args.paper, names, data_dir=args.data_dir, jobs=args.jobs, smoke=args.smoke,
                        seed=args.seed, out=None, baseline=args.baseline)
    except ValueError as exc:
        return _error(str(exc) + extras.hint(exc))
    full = not args.smoke and names is None
    fetch = f"python -m audit data fetch --paper {args.paper}" + (f" --data-dir {args.data_dir}" if args.data_dir else "")
    if args.smoke and rep.skipped:  # a smoke run writes a whole report or nothing
        return _error(f"reproduce {args.paper} --smoke: requested data missing, nothing written: "
                      f"{'; '.join(rep.skipped)}. Get the files with: {fetch} (without --datasets the smoke run "
                      "needs no file)")
    if not rep.cells:
        missing = "; ".join(rep.skipped) or "no dataset ran"
        return _error(f"reproduce {args.paper}: no table cell could be computed, nothing written ({missing}). "
                      f"Get the files with: {fetch}")
    if args.out:
        out = args.out
    elif args.smoke:  # a pipeline check: under the system's temporary folder, never in a working tree
        out = str(Path(tempfile.gettempdir()) / "dptree-audit" / "smoke")
    else:
        out = "reports" if full and not rep.skipped else str(Path("reports") / ".runs")
    from audit.reproduce import write_reproduction

    path = write_reproduction(rep, out)
    marked = sum(c.marked for c in rep.cells)
    print(f"{args.paper}: {len(rep.cells)} cells, {marked} outside 2 SE, {len(rep.skipped)} datasets skipped; "
          f"{rep.elapsed_s:.0f} s")
    why = "" if args.out or out == "reports" else (" (a smoke run, a subset or a run with missing data never "
                                                  "replaces the committed reproduction)")
    print(f"written to {path}{why}")
    if rep.skipped:
        return _error(f"reproduce {args.paper}: requested data missing: {'; '.join(rep.skipped)}. "
                      f"Get the files with: {fetch}")
    return 0


_ARGS = None  # the parsed arguments of the command being run (read by _finish)


def _interrupted(argv) -> int:
    """Ctrl-C: one line saying what was saved and how to continue, no traceback."""
    ck = checkpoint.last()
    argv = list(sys.argv[1:] if argv is None else argv)
    again = "python -m audit " + shlex.join(argv + ([] if "--resume" in argv else ["--resume"]))
    if ck is None or not ck.path.exists():
        print("\ninterrupted before any estimate finished; nothing saved.", file=sys.stderr)
    else:
        ck.save_elapsed()
        print(f"\ninterrupted: {ck.n_saved()} finished estimate(s) saved in {ck.path}; continue with: {again}",
              file=sys.stderr)
    return 130


def main(argv=None) -> int:
    global _ARGS
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    _ARGS = args
    args.argv = list(sys.argv[1:] if argv is None else argv)
    # the auditor's fits are seeded (the same seed gives the same report) inside this call only, and in the
    # worker processes it hands work to explicitly; the mode the caller had comes back on return (a notebook
    # or script calling main() keeps its own); the reference learners' default is fresh OS entropy per fit
    try:
        with seeded_fits():
            return _dispatch(args)
    except KeyboardInterrupt:
        return _interrupted(argv)
    except ImportError as exc:  # a module of an optional extra, wherever it was imported: say which extra
        if extras.missing_extra(exc) is None:
            raise
        return _error(f"{type(exc).__name__}: {exc}{extras.hint(exc)}")


def _dispatch(args) -> int:
    if args.command == "list":
        for name in TARGETS:
            print(f"{name:16s} {load(name).DESCRIPTION}")
        return 0
    if args.command == "data":
        return _data(args)
    if args.command == "findings":
        import shutil

        from audit.results.findings import findings_table, findings_text

        fmt = args.format or ("text" if sys.stdout.isatty() else "markdown")
        try:
            print(findings_text(shutil.get_terminal_size().columns) if fmt == "text" else findings_table(), end="")
        except ValueError as exc:  # no committed reports here (an installed copy), or one lacks a row
            return _error(str(exc))
        return 0
    if args.seed < 0:
        return _error(f"--seed must be a non-negative integer, got {args.seed}")
    if args.jobs is None:
        args.jobs = available_cores() if args.command == "run" else 1
    if args.jobs < 1:
        return _error(f"--jobs must be a positive integer, got {args.jobs}")
    if getattr(args, "scheduler", None):
        try:
            import distributed  # noqa: F401
        except ImportError as exc:
            return _error(f"--scheduler needs distributed: {exc}{extras.hint(exc)}")
    checkpoint.set_progress(not args.quiet)
    if args.command in ("check", "compare") and args.out is None:
        args.out = "reports"
    if args.command != "run" and args.out is not None and (why := _unwritable(args.out)) is not None:
        return _error(why)  # run checks its own, once it has chosen where to write
    if args.command == "check" and (why := _witnesses_unusable(args.witnesses)) is not None:
        return _error(why)
    if args.command == "reproduce":
        return _reproduce(args)
    if args.command == "certify":
        return _certify(args)
    with sampling.jobs(args.jobs), sampling.scheduler(args.scheduler), single_thread():
        if args.command == "run":
            return _run(args)
        console = progress.Console(lines=not args.quiet, bar=False, steps=True,
                                   stream=sys.stderr if args.format == "json" else sys.stdout)
        with progress.listening(console):
            return {"check": _check, "compare": _compare}[args.command](args)


def cli() -> int:
    """The command line's entry (``python -m audit``): a command that runs outside code (``check``, ``compare``)
    runs in a worker process, so that code cannot end the gate with a status of its choosing
    (:mod:`audit.frontends.fail_closed`); ``main`` itself, called from Python, runs in the caller's process."""
    from audit.frontends.fail_closed import WORKER_ENV, run_in_worker, runs_outside_code, worker_main

    if os.environ.get(WORKER_ENV):
        return worker_main(main)
    if runs_outside_code(sys.argv[1:]):
        return run_in_worker(sys.argv[1:], main)
    return main()


if __name__ == "__main__":
    sys.exit(cli())
