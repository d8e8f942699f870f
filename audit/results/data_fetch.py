"""``python -m audit data list|fetch``: get the public benchmark files the reproductions read.

The files, their public sources (GitHub repositories at fixed commits, served raw), their content's
SHA-256 and what is known of their licences are listed in :mod:`reference.data_sources`. ``fetch``
downloads each file named (or every file a paper's loaders need), checks the checksum, gzips it when
its name ends in ``.gz`` (the loaders read gzip), and places it in the data directory: ``--data-dir``,
else ``$DPTREE_AUDIT_DATA``, else the per-user cache (``~/.cache/dptree-audit/data``), where
:func:`reference.datasets.data_dir` finds it. A file is written whole or not at all (a temporary file,
checked, then renamed); a file that cannot be fetched or fails its checksum is named with the reason, and
the command exits 1 if any did.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from reference import datasets as ds
from reference.data_sources import DEFAULT_BASE, SOURCES

__all__ = ["fetch", "wanted_files", "status"]

PAPERS = ("privatree", "diprime", "random-trees", "lpdt")


def wanted_files(names=None, paper=None) -> list[str]:
    """The files to fetch: the file names given, the files of the datasets named, or every file a paper's
    loaders need (all papers when nothing is named)."""
    if names:
        out = []
        for n in names:
            if n in SOURCES:
                out.append(n)
                continue
            hits = [f for p in ([paper] if paper else PAPERS) for f in ds.files_of(p, [n]).get(n, ())]
            if not hits:
                raise ValueError(f"{n!r} is neither a file of reference.data_sources nor a dataset of "
                                 f"{paper or 'any paper'} (see `python -m audit data list`)")
            out += hits
        return list(dict.fromkeys(out))
    papers = [paper] if paper else list(PAPERS)
    return list(dict.fromkeys(f for p in papers for files in ds.files_of(p).values() for f in files))


def destination(data_dir=None) -> Path:
    if data_dir:
        return Path(data_dir)
    if os.environ.get(ds.ENV):
        return Path(os.environ[ds.ENV])
    return ds.cache_dir()


def status(data_dir=None) -> list[tuple[str, bool, str]]:
    """``(file, present, source URL)`` for every known file, against the directory reproductions would read."""
    d = ds.data_dir(data_dir) if data_dir else ds.data_dir()
    return [(f, d is not None and (d / f).is_file(), s.url()) for f, s in SOURCES.items()]


def _download(url: str, timeout: float, chunk: int = 1 << 16):
    with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - public https or a local mirror
        total = int(resp.headers.get("Content-Length") or 0)
        parts = []
        bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            bar = tqdm(total=total or None, unit="B", unit_scale=True, leave=False, desc=url.rsplit("/", 1)[-1],
                       file=sys.stderr)
        while True:
            block = resp.read(chunk)
            if not block:
                break
            parts.append(block)
            if bar is not None:
                bar.update(len(block))
        if bar is not None:
            bar.close()
        return b"".join(parts)


def fetch(files, *, data_dir=None, base: str = DEFAULT_BASE, timeout: float = 60.0, force: bool = False,
          log=print) -> dict[str, str]:
    """Fetch ``files`` into the data directory; returns ``{file: "ok" | "present" | reason}``."""
    dest = destination(data_dir)
    dest.mkdir(parents=True, exist_ok=True)
    out = {}
    for name in files:
        src = SOURCES.get(name)
        if src is None:
            out[name] = f"unknown file (not in reference.data_sources)"
            log(f"{name}: {out[name]}")
            continue
        final = dest / name
        if final.is_file() and not force:
            out[name] = "present"
            log(f"{name}: already in {dest}")
            continue
        url = src.url(base)
        try:
            content = _download(url, timeout)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            out[name] = f"could not be fetched from {url}: {exc}"
            log(f"{name}: {out[name]}")
            continue
        digest = hashlib.sha256(content).hexdigest()
        if digest != src.sha256 or len(content) != src.size:
            out[name] = (f"checksum mismatch for {url}: sha256 {digest[:16]}... ({len(content):,} bytes), expected "
                         f"{src.sha256[:16]}... ({src.size:,} bytes); not placed")
            log(f"{name}: {out[name]}")
            continue
        data = gzip.compress(content, compresslevel=9, mtime=0) if name.endswith(".gz") else content
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=dest)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, final)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        out[name] = "ok"
        log(f"{name}: fetched and verified ({len(content):,} bytes) into {dest}")
    return out


def command(args, error) -> int:
    """``python -m audit data list|fetch`` (the parsed arguments; ``error(msg)`` prints and returns 2)."""
    if args.data_command == "list":
        try:
            searched = ds.data_dir(args.data_dir) if args.data_dir else ds.data_dir()
        except ValueError as exc:
            return error(str(exc))
        rows = status(args.data_dir)
        for name, present, url in rows:
            print(f"{'present' if present else 'missing':8s} {name:60s} {url}")
        where = (f"in {searched}" if searched is not None else
                 f"(no data directory: none given with --data-dir or ${ds.ENV}, and neither ../shared/data nor "
                 f"{ds.cache_dir()} exists)")
        print(f"{sum(p for _, p, _ in rows)} of {len(rows)} files present {where}; fetch the missing ones with "
              "`python -m audit data fetch`; `reproduce PAPER --smoke` needs none (it runs on a set bundled with "
              "scikit-learn)")
        return 0
    try:
        files = wanted_files(args.names, args.paper)
    except ValueError as exc:
        return error(str(exc))
    res = fetch(files, data_dir=args.data_dir, base=args.source_url or DEFAULT_BASE, timeout=args.timeout,
                force=args.force)
    bad = {k: v for k, v in res.items() if v not in ("ok", "present")}
    print(f"{len(res) - len(bad)} of {len(res)} files in {destination(args.data_dir)}"
          + (f"; {len(bad)} failed: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0
