"""The witness store: ``check`` remembers the pairs that came closest to refuting a claim, and re-tests them first.

A CI gate that searches from scratch on every commit re-rolls its dice every time. The store (``.dp-audit/`` in
the working directory by default; ``--witnesses PATH|off``; ``$DP_AUDIT_WITNESSES`` changes the default) keeps,
per subject and claim, in one plain JSON file (``witnesses.json``, sorted keys, readable in a review):

* the *witnesses*: the pairs of neighbouring datasets on which the full audits found their largest lower bounds
  (at most :data:`MAX_WITNESSES`; a pair that refuted the claim is kept first), each with its evidence so far:
  a test martingale (:class:`audit.engine.estimation.betting.Martingale`, the counts of its paired steps);
* the *fingerprint* of what each full audit audited: a hash of the subject's source files (every ``.py`` file
  of its top-level package, or its module), its parameters, the versions of the libraries those files import
  and of Python; with the row that audit gave, per budget and audit settings.

A run of ``check`` on a claim with a store then:

1. **re-tests every stored witness first**, on new outputs (:func:`retest`): a pilot of :func:`pilot_size` outputs
   per input chooses each direction's event, and batches that double from 100 outputs per input, up to
   :func:`topup_size`, are bet on, the event chosen again before each batch on everything drawn before it. The
   witness's martingale takes every batch in; when its wealth reaches its threshold the claim is refuted at
   once (exit 1: a bug re-introduced under the same name fails in seconds), without the full audit;
2. **if the fingerprint is unchanged** since a full audit at these settings, the run ends there: the row is that
   audit's, with the witnesses' evidence added (a small top-up, a tenth of the first run's fits or less);
3. **otherwise** it runs the full audit (every channel, the search), and the audit's best pairs join the store.

Why the false-alarm rate holds over a whole history. Every witness's martingale is a test supermartingale for
"every version of the subject that drew its outputs keeps the claim" (the event of a batch is chosen before the
batch is drawn; each run draws new outputs, from a seed that includes the witness's run count). The ``j``-th
martingale ever started for a claim refutes at wealth ``1 / alpha_j`` with ``alpha_j = alpha / (j (j + 1))``,
which sum to ``alpha``: whatever the number of runs and witnesses, the stored witnesses' re-tests together raise
a false alarm with probability at most ``alpha`` (the gate's :data:`audit.gate.verdict.ALPHA`) over the
repository's whole history (Ville's inequality). A martingale that refuted is closed; the next run starts a new
one on the same pair (a fix is judged afresh). The full audit, which runs only when the fingerprint changed, is
a test of its own at ``alpha`` each time it runs. The store changes no verdict of a full audit and no number of
its report; it adds the ``witnesses`` field to the claim's row.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import math
import os
import sys
import tempfile
from dataclasses import fields
from pathlib import Path

import numpy as np

from audit.engine.estimation.betting import Martingale, wealth_threshold
from audit.engine.estimation.estimate import unpack_pair
from audit.engine.estimation.events import choose_event, coordinates
from audit.engine.estimation.neighbours import NeighbourPair
from audit.engine.estimation.sampling import collect, concat, draw_many, gather
from audit.engine.runs import progress

__all__ = ["DEFAULT", "ENV", "FILE", "MAX_WITNESSES", "WitnessStore", "store_path", "fingerprint", "retest",
           "pilot_size", "topup_size", "witness_alpha", "encode", "decode", "audit_with_witnesses"]

#: the store's folder when neither ``--witnesses`` nor :data:`ENV` says otherwise
DEFAULT = ".dp-audit"
#: the environment variable that changes the default (``off`` turns the store off)
ENV = "DP_AUDIT_WITNESSES"
#: the file inside the store's folder
FILE = "witnesses.json"
#: witnesses kept per claim
MAX_WITNESSES = 4
#: full-audit pairs added to the store per run (the largest lower bounds)
ADD_PER_RUN = 2
#: the store's format
VERSION = 1
#: the first batch bet on, outputs per input (later batches double)
FIRST_BATCH = 100


def store_path(given: str | None) -> Path | None:
    """The store's folder: ``given`` (``--witnesses``), else ``$DP_AUDIT_WITNESSES``, else :data:`DEFAULT`; None
    when it is ``off``."""
    value = given if given is not None else os.environ.get(ENV, DEFAULT)
    if value.strip().lower() == "off":
        return None
    if not value.strip():
        raise ValueError(f"--witnesses must be a folder or 'off', got {value!r}")
    return Path(value)


def pilot_size(n_samples: int) -> int:
    """Outputs per input of a re-test's pilot (it chooses the events; never bet on): 1% of the budget's outputs
    per input, between 100 and 1,000 (200 at quick)."""
    return int(min(1_000, max(100, n_samples // 100)))


def topup_size(n_samples: int) -> int:
    """Outputs per input bet on per witness and run, at most: 2.5% of the budget's (500 at quick), at least 200.
    With the pilots, a re-run of an unchanged subject fits about a tenth of what its first run fitted."""
    return int(max(200, n_samples // 40))


def witness_alpha(index: int, alpha: float) -> float:
    """The error level of the ``index``-th martingale started for a claim (1-based): ``alpha / (j (j + 1))``,
    which sum to ``alpha`` over every martingale ever started."""
    if index < 1:
        raise ValueError(f"a witness index starts at 1, got {index!r}")
    return alpha / (index * (index + 1))


# ----------------------------------------------------------------------------------------------------------------
# plain JSON for datasets

def encode(obj):
    """``obj`` as plain JSON (arrays keep their dtype, tuples stay tuples); None when it cannot be."""
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            return None
        return {"ndarray": obj.tolist(), "dtype": str(obj.dtype), "shape": list(obj.shape)}
    if isinstance(obj, tuple):
        items = [encode(o) for o in obj]
        return None if any(i is None and o is not None for i, o in zip(items, obj)) else {"tuple": items}
    if isinstance(obj, list):
        items = [encode(o) for o in obj]
        return None if any(i is None and o is not None for i, o in zip(items, obj)) else items
    if isinstance(obj, (bool, str)) or obj is None:
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(float(obj)) else None
    return None


def decode(obj):
    """The inverse of :func:`encode`."""
    if isinstance(obj, dict) and "ndarray" in obj:
        return np.array(obj["ndarray"], dtype=obj["dtype"]).reshape(obj["shape"])
    if isinstance(obj, dict) and "tuple" in obj:
        return tuple(decode(o) for o in obj["tuple"])
    if isinstance(obj, list):
        return [decode(o) for o in obj]
    return obj


# ----------------------------------------------------------------------------------------------------------------
# what was audited

def _made_by(target):
    """What a subject given in Python really calls: the factory's ``make`` (a partial's function)."""
    make = getattr(target, "make", target)
    return getattr(make, "func", make)


def _module_name(target) -> str | None:
    if isinstance(target, str):
        return target.split(":")[0]
    obj = _made_by(target)
    return getattr(obj, "__module__", None) or getattr(type(obj), "__module__", None)


def _source_files(target) -> list[Path]:
    """Every ``.py`` file of the subject's top-level package (or its module's file alone)."""
    name = _module_name(target)
    if not name:
        return []
    try:
        spec = importlib.util.find_spec(name.split(".")[0])
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return []
    if spec.submodule_search_locations:
        found = []
        for root in spec.submodule_search_locations:
            found += [p for p in Path(root).rglob("*.py") if "__pycache__" not in p.parts]
        return sorted(set(found))[:5_000]
    return [Path(spec.origin)] if spec.origin and spec.origin.endswith(".py") else []


def _imported(files) -> set[str]:
    names = set()
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


@functools.lru_cache(maxsize=1)
def auditor_digest() -> str:
    """A digest of the auditor's own source (every ``.py`` file of the ``audit`` package): a gate that learnt to
    read a new channel judges an unchanged subject afresh, instead of keeping the verdict an older gate gave."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def fingerprint(subject) -> dict:
    """The fingerprint of what a full audit audits: ``{"digest", "files", "libraries", "params", "auditor"}``. A
    change to any source file of the subject's top-level package, to its parameters, to the version of a library
    those files import (or of Python), or to the auditor's own code (:func:`auditor_digest`) changes the
    digest."""
    files = _source_files(subject.target)
    sources = []  # the contents' hashes: moving a checkout elsewhere changes nothing
    for path in files:
        try:
            sources.append(hashlib.sha256(path.read_bytes()).hexdigest()[:16])
        except OSError:
            continue
    dists = importlib.metadata.packages_distributions()
    libraries = {"python": sys.version.split()[0]}
    for name in sorted(_imported(files)):
        for dist in dists.get(name, []):
            try:
                libraries[dist] = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                continue
    params = json.dumps(subject.params, sort_keys=True, default=repr)
    auditor = auditor_digest()
    digest = hashlib.sha256(json.dumps([sorted(sources), libraries, params, auditor]).encode()).hexdigest()[:16]
    return {"digest": digest, "files": len(sources), "libraries": libraries, "params": params, "auditor": auditor}


def _target_text(target) -> str:
    if isinstance(target, str):
        return target
    code = getattr(_made_by(target), "__code__", None)
    where = f"@{code.co_firstlineno}" if code is not None and "<lambda>" in code.co_name else ""
    return str(target) + where  # a lambda is named by its line too: two in one module are two claims


def claim_key(subject) -> str:
    """The claim a store's entry is about: the subject, its parameters, the claim and its public domain."""
    return json.dumps({"target": _target_text(subject.target), "params": subject.params, "epsilon": subject.epsilon,
                       "delta": subject.delta, "neighbours": subject.neighbours, "bounds": subject.bounds,
                       "classes": subject.classes, "data": subject.data, "release": subject.release},
                      sort_keys=True, default=repr)


def settings_key(subject, budget: str) -> str:
    """The settings a full audit's row depends on beyond the claim (the budget and every option)."""
    skip = {"name", "target", "params", "note", "expect", "expected_stated", "pairs"}
    opts = {f.name: getattr(subject, f.name) for f in fields(subject) if f.name not in skip}
    return json.dumps({"budget": budget, **opts}, sort_keys=True, default=repr)


# ----------------------------------------------------------------------------------------------------------------
# the store

class WitnessStore:
    """The JSON file of a store's folder: read at open, written whole (atomically) by :meth:`save`."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.path = self.folder / FILE
        self.data = {"version": VERSION, "claims": {}}
        if self.path.exists():
            try:
                data = json.loads(self.path.read_text())
            except (OSError, ValueError) as exc:
                raise ValueError(f"--witnesses {self.folder}: {self.path} is not a witness store ({exc}); move it "
                                 "away or give another folder") from exc
            if data.get("version") != VERSION:
                raise ValueError(f"--witnesses {self.folder}: {self.path} has format {data.get('version')!r}, this "
                                 f"auditor reads {VERSION}")
            self.data = data

    def entry(self, subject) -> dict:
        key = claim_key(subject)
        return self.data["claims"].setdefault(key, {"claim": json.loads(key), "next_index": 1, "witnesses": [],
                                                     "full_audits": {}, "runs": 0})

    def save(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".witnesses-", suffix=".json", dir=self.folder)
        with os.fdopen(fd, "w") as out:
            json.dump(self.data, out, indent=1, sort_keys=True)
            out.write("\n")
        os.replace(tmp, self.path)


def _counts(x: np.ndarray, y: np.ndarray) -> dict:
    return {"both": int(np.count_nonzero(x & y)), "only_d": int(np.count_nonzero(x & ~y)),
            "only_d1": int(np.count_nonzero(~x & y)), "neither": int(np.count_nonzero(~x & ~y))}


def retest(mech, pair, claim, martingale: Martingale, *, threshold: float, n_pilot: int, n_bet: int, seed) -> dict:
    """Re-test one witness on new outputs (module text, step 1): returns ``{"outputs", "refuted", "events"}``,
    with ``martingale`` updated in place (its ``runs`` too). ``seed`` is a ``SeedSequence`` entropy (the run's
    seed, the witness's index and its run count)."""
    d0, d1, _ = unpack_pair(pair)
    pilot_seeds, batch_seeds = np.random.SeedSequence(seed).spawn(2)
    a, b = gather(draw_many(mech, [(d, n_pilot, s) for d, s in zip((d0, d1), pilot_seeds.spawn(2))]), collect)
    drawn, size, refuted, events = 0, FIRST_BATCH, False, None
    while drawn < n_bet and not refuted:
        m = min(size, n_bet - drawn)
        fwd = choose_event(a, b, delta=claim.delta, alpha=0.05)
        bwd = choose_event(b, a, delta=claim.delta, alpha=0.05)
        # each spawn gives the next two children: the batches' seeds follow one another
        xa, xb = gather(draw_many(mech, [(d, m, s) for d, s in zip((d0, d1), batch_seeds.spawn(2))], expect=a),
                        concat)
        martingale.update(0, **_counts(fwd.member(xa), fwd.member(xb)))
        martingale.update(1, **_counts(bwd.member(xb), bwd.member(xa)))
        events = (fwd.description, bwd.description)
        drawn += m
        refuted = martingale.wealth(claim.epsilon, claim.delta) >= threshold
        a, b = collect([a, xa]), collect([b, xb])
        size *= 2
    martingale.runs += 1
    return {"outputs": n_pilot + drawn, "refuted": refuted, "events": events}


def _pair_record(pair) -> dict | None:
    d0, d1, desc = unpack_pair(pair)
    e0, e1 = encode(d0), encode(d1)
    if (e0 is None and d0 is not None) or (e1 is None and d1 is not None):
        return None
    return {"d0": e0, "d1": e1, "description": desc, "relation": getattr(pair, "relation", "add-remove")}


def _pair_of(record: dict) -> NeighbourPair:
    return NeighbourPair(decode(record["d0"]), decode(record["d1"]), record["description"], record["relation"])


def _evidence_text(w: dict, claim) -> str:
    m = Martingale.from_dict(w["martingale"])
    return (f"{w['pair']['description'] or 'a stored pair'}: e-value {m.wealth(claim.epsilon, claim.delta):.3g} "
            f"(refutes at {1 / w['alpha']:.3g}) over {m.runs} run(s) and {m.outputs:,} outputs per input")


def _summary(entry: dict, claim, folder: Path, full_audit: str, run_outputs: int) -> dict:
    rows = []
    for w in entry["witnesses"]:
        m = Martingale.from_dict(w["martingale"])
        rows.append({"pair": w["pair"]["description"], "index": w["index"], "status": w["status"],
                     "alpha": w["alpha"], "found": w["found"], "e_value": m.wealth(claim.epsilon, claim.delta),
                     "outputs": m.outputs, "runs": m.runs})
    return {"store": str(folder / FILE), "full_audit": full_audit, "outputs_this_run": run_outputs,
            "runs": entry["runs"], "witnesses": rows}


def _pair_key(record: dict) -> str:
    return json.dumps([record["d0"], record["d1"]], sort_keys=True)


def _add_witnesses(entry: dict, pairs: list, run: int, alpha: float, refuted: bool) -> None:
    """The full audit's best pairs join the store (a pair already stored keeps its evidence); when the audit
    refuted the claim, its first pair (the winning one) is marked ``refuted``, which keeps it first."""
    stored = {_pair_key(w["pair"]): w for w in entry["witnesses"]}
    for k, (pair, bound) in enumerate(pairs[:ADD_PER_RUN]):
        record = _pair_record(pair)
        if record is None:
            continue
        w = stored.get(_pair_key(record))
        if w is None:
            j = entry["next_index"]
            entry["next_index"] += 1
            w = {"index": j, "pair": record, "status": "open", "alpha": witness_alpha(j, alpha),
                 "found": f"full audit of run {run}: ε ≥ {bound:.4g}", "martingale": Martingale().to_dict()}
            entry["witnesses"].append(w)
            stored[_pair_key(record)] = w
        if refuted and k == 0:
            w["status"] = "refuted"
    rank = {"refuted": 0, "fixed": 1}
    newest_first = sorted(entry["witnesses"], key=lambda w: -w["index"])
    entry["witnesses"] = sorted(newest_first, key=lambda w: rank.get(w["status"], 2))[:MAX_WITNESSES]


def _restart(entry: dict, w: dict, alpha: float) -> None:
    """A closed martingale (it refuted) gives way to a new one on the same pair, with the next index: the next
    version is judged afresh."""
    j = entry["next_index"]
    entry["next_index"] += 1
    w.update(index=j, alpha=witness_alpha(j, alpha), martingale=Martingale().to_dict(), closed=False)


def audit_with_witnesses(subject, budget: str, seed: int, folder: Path, audit, plan_subject, *, n_samples: int,
                         alpha: float, stage_cpu: dict | None = None) -> dict:
    """Audit ``subject`` with the store in ``folder`` (module text): ``audit(subject, budget, seed, stage_cpu)``
    is the full audit and ``plan_subject(subject)`` its plan (:mod:`audit.gate.run`'s, passed in: that module
    calls this one); returns the claim row, with its ``witnesses`` field."""
    from audit.engine.estimation.estimate import Claim

    store = WitnessStore(folder)
    entry = store.entry(subject)
    entry["runs"] += 1
    run = entry["runs"]
    claim = Claim(subject.epsilon, subject.delta, subject.neighbours)
    fp = fingerprint(subject)
    outputs, refuting = 0, None
    if entry["witnesses"]:
        plan = plan_subject(subject)
        mech = plan["mechanism"]
        if hasattr(mech, "calibrate"):
            mech.calibrate([d for w in entry["witnesses"] for d in unpack_pair(_pair_of(w["pair"]))[:2]])
        for w in entry["witnesses"]:
            if w.get("closed"):
                _restart(entry, w, alpha)
            m = Martingale.from_dict(w["martingale"])
            progress.step(f"re-testing a stored witness ({_evidence_text(w, claim)})")
            names = mech.coordinates() if callable(getattr(mech, "coordinates", None)) else None
            with coordinates(names):  # events named by attribute path, as the full audit names them
                got = retest(mech, _pair_of(w["pair"]), claim, m, threshold=wealth_threshold(w["alpha"]),
                             n_pilot=pilot_size(n_samples), n_bet=topup_size(n_samples),
                             seed=[int(seed), int(w["index"]), int(m.runs)])
            w["martingale"] = m.to_dict()
            progress.step(f"re-tested on {got['outputs']:,} new outputs: {_evidence_text(w, claim)}")
            outputs += got["outputs"]
            if got["refuted"]:
                w["status"], w["closed"] = "refuted", True
                refuting = (w, m, got)
                break
    if refuting is not None:
        w, m, got = refuting
        row = _refuted_row(subject, claim, w, m, got)
        row["witnesses"] = _summary(entry, claim, store.folder, "skipped: a stored witness refuted the claim",
                                    outputs)
        progress.step("full audit skipped: a stored witness refuted the claim (--witnesses off runs the full audit, "
                      "which names what leaked and the remedy)")
        store.save()
        return row
    key = settings_key(subject, budget)
    full = entry["full_audits"].get(key)
    if full is not None and full["fingerprint"] == fp["digest"]:
        row = json.loads(json.dumps(full["row"]))
        since = full["run"]
        row["detail"] = (f"full audit skipped: the fingerprint ({fp['files']} source file(s), parameters, "
                         f"library versions) is unchanged since run {since}, whose verdict stands; the stored "
                         f"witnesses were re-tested on {outputs:,} new outputs — " + row["detail"])
        row["witnesses"] = _summary(entry, claim, store.folder, f"skipped: fingerprint unchanged since run {since}",
                                    outputs)
        progress.step(f"full audit skipped: the subject's fingerprint is unchanged since run {since}, whose verdict "
                      "stands (--witnesses off runs the full audit)")
        store.save()
        return row
    row = audit(subject, budget, seed, stage_cpu)
    pairs = row.pop("_witness_pairs", [])
    _add_witnesses(entry, pairs, run, alpha, refuted=row["verdict"] == "violation")
    if row["verdict"] == "pass" and row.get("power") == "conclusive":
        for w in entry["witnesses"]:  # a conclusive pass: a witness that refuted an earlier version is kept, as
            if w["status"] == "refuted":  # the regression test of that bug
                w["status"] = "fixed"
    if row["verdict"] in ("pass", "violation", "inconclusive") and row.get("finished") is not False:
        entry["full_audits"][key] = {"fingerprint": fp["digest"], "run": run, "row": dict(row),
                                     "libraries": fp["libraries"]}
    row["witnesses"] = _summary(entry, claim, store.folder, f"run (fingerprint {fp['digest']})", outputs)
    store.save()
    return row


def _refuted_row(subject, claim, w: dict, m: Martingale, got: dict) -> dict:
    from audit.gate.inputs import params_text

    threshold = wealth_threshold(w["alpha"])
    lower = m.epsilon_lower(threshold, claim.delta)
    fwd, bwd = got["events"] or ("?", "?")
    detail = (f"refuted by a stored witness before any search: {_evidence_text(w, claim)}; its last events: "
              f"[{fwd}] (D over D'), [{bwd}] (D' over D); anytime-valid ε ≥ {lower:.4g} at alpha {w['alpha']:.3g} "
              f"(martingale number {w['index']} of this claim; the shares of every martingale ever "
              f"started sum to the gate's alpha over the store's whole history). Found by: {w['found']}")
    return {"id": subject.name, "subject": f"{_target_text(subject.target)} {params_text(subject.params)}",
            "neighbouring": subject.neighbours, "epsilon_claimed": subject.epsilon, "delta": subject.delta,
            "epsilon_lower": lower, "epsilon_point": m.point(claim.delta), "n_samples": m.outputs, "alpha": w["alpha"],
            "verdict": "violation", "expected": subject.expect, "expected_stated": bool(subject.expected_stated),
            "method": "stored witness", "decided_by": ["stored witness"], "winning_pair": w["pair"]["description"],
            "detail": detail}
