"""The papers the learners implement, cited the way a reader looks them up: authors, title, year.

Every text a user reads (reports, ``audit list``, ``compare --reference list``, the README) cites a paper by
:func:`cite` (``Vos et al. 2023``) and lists it in full in a references section (:func:`references`). The file
of the paper's text in the project's seed collection (``seed_file``) is kept here for developers and is named
in no text a user reads.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Paper", "PAPERS", "cite", "full", "references", "cited_in"]


@dataclass(frozen=True)
class Paper:
    key: str
    authors: str
    title: str
    year: int
    venue: str
    seed_file: str | None = None
    #: a short label the texts use for this version of the paper (DiPriMe has two)
    tag: str | None = None

    @property
    def short(self) -> str:
        """``Vos et al. 2023`` (two authors: ``Consul and Williamson 2021``)."""
        names = [a.split()[-1] for a in self.authors.replace(" and ", ", ").split(", ")]
        who = names[0] if len(names) == 1 else " and ".join(names) if len(names) == 2 else f"{names[0]} et al."
        return f"{who} {self.year}"


PAPERS: dict[str, Paper] = {p.key: p for p in [
    Paper("privatree", "Daniël Vos, Jelle Vos, Tianyu Li, Zekeriya Erkin and Sicco Verwer",
          "Differentially-Private Decision Trees and Provable Robustness to Data Poisoning", 2023,
          "arXiv:2305.15394", "004_2521a6732a5af66c.txt"),
    Paper("diprime-v000", "Shorya Consul and Sinead Williamson",
          "Differentially Private Median Forests for Regression and Classification", 2020,
          "an earlier version of arXiv:2006.08795", "000_3adb53c34ab1d76d.txt", tag="V000"),
    Paper("diprime-v003", "Shorya Consul and Sinead A. Williamson",
          "Balance is key: Private median splits yield high-utility random trees", 2021,
          "arXiv:2006.08795 (later version)", "003_9d9c0c8370f39611.txt", tag="V003"),
    Paper("random-trees", "Mariusz Bojarski, Anna Choromanska, Krzysztof Choromanski and Yann LeCun",
          "Differentially- and non-differentially-private random decision trees", 2014, "arXiv:1410.6973",
          "001_de51f67f43120a4b.txt"),
    Paper("lpdt", "Yuheng Ma, Han Zhang, Yuchao Cai and Hanfang Yang",
          "Decision Tree for Locally Private Estimation with Public Data", 2023, "NeurIPS 2023",
          "002_5a21b2792a729c80.txt"),
    Paper("dpa", "Alexander Levine and Soheil Feizi",
          "Deep Partition Aggregation: Provable Defenses against General Poisoning Attacks", 2021, "ICLR 2021"),
]}


def cite(key: str) -> str:
    """The short in-text citation, ``Vos et al. 2023``; a tagged version adds its tag: ``Consul and Williamson
    2021, V003``."""
    p = PAPERS[key]
    return p.short + (f", {p.tag}" if p.tag else "")


def full(key: str) -> str:
    """``Vos, Vos, Li, Erkin and Verwer (2023). Differentially-Private Decision Trees and ... arXiv:2305.15394.``"""
    p = PAPERS[key]
    return f"{p.authors} ({p.year}). {p.title}. {p.venue}."


def cited_in(text: str) -> list[str]:
    """Keys of the papers whose short citation (or seed file) occurs in ``text``, in registry order."""
    return [k for k, p in PAPERS.items()
            if p.short in text or (p.seed_file and p.seed_file in text) or (p.tag and p.tag in text)]


def references(keys) -> list[str]:
    """Markdown lines of a references section: each paper in full (authors, year, title, venue)."""
    out = []
    for k in keys:
        p = PAPERS[k]
        label = f"{p.short}" + (f", {p.tag}" if p.tag else "")
        out.append(f"- **{label}**: {full(k)}")
    return out
