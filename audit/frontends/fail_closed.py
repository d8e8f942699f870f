"""The command line fails closed: outside code runs in a worker process that cannot end the gate.

``check`` and ``compare`` run a user's code, and that code can end the process it runs in: ``os._exit(0)``
inside ``fit``, a crash in C code, a signal. Run in the gate's own process, such an end would look like
whatever status it chose (``os._exit(0)`` reads as a green CI job, with no report). :func:`run_in_worker` runs
the whole command in a child interpreter instead, and the parent, which runs no outside code, decides the exit
status: the child's own status only when the child says, through a pipe it alone was given, that it finished
(:func:`finished`); otherwise :data:`EXIT_UNFINISHED` with one line saying what happened. The child's console
lines pass through unchanged, and its report is written whole or not at all (:func:`audit.results.report.write_report`),
so no half report is left either.

Exit status of ``check`` (and of ``compare``), one cause each:

======  ============================================================================================
``0``   every claim passed, with a complete report
``1``   a claim was refuted (or, in a claims file, a verdict other than the one ``expected``)
``2``   a usage error, found before any sampling (an unwritable ``--out`` included)
``3``   the gate could not finish: the subject ended the process (``sys.exit``, ``os._exit``, a crash),
        or the gate itself failed; no report, or a report whose row reads ``error``
``130`` interrupted (Ctrl-C); the finished estimates are saved for ``--resume``
======  ============================================================================================

The Python doors (:func:`audit.assert_private`, the pytest plugin) run in the caller's process; a subject that
ends it ends the test run, which a test runner reports as a failure, never as a pass.
"""
from __future__ import annotations

import os
import subprocess
import sys
import traceback

__all__ = ["EXIT_PASS", "EXIT_VIOLATION", "EXIT_USAGE", "EXIT_UNFINISHED", "EXIT_INTERRUPTED", "WORKER_ENV",
           "runs_outside_code", "run_in_worker", "finished", "worker_main"]

EXIT_PASS, EXIT_VIOLATION, EXIT_USAGE, EXIT_UNFINISHED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
#: the environment variable that makes a process the worker: the number of the pipe's write end
WORKER_ENV = "DPTREE_AUDIT_WORKER_FD"
#: the commands that run outside code
OUTSIDE_CODE = ("check", "compare")


def runs_outside_code(argv: list[str]) -> bool:
    """Whether the command line ``argv`` (without the program name) runs a user's code: ``check`` or ``compare``,
    not their ``--help``."""
    words = [a for a in argv if not a.startswith("-")]
    return bool(words) and words[0] in OUTSIDE_CODE and not {"-h", "--help"} & set(argv)


def finished(code: int) -> None:
    """In the worker: say that the command finished with ``code`` (a no-op in any other process)."""
    fd = os.environ.get(WORKER_ENV)
    if fd is None:
        return
    try:
        os.write(int(fd), f"{int(code)}\n".encode())
    except (OSError, ValueError):  # the parent is gone: nobody to tell
        pass


def worker_main(main) -> int:
    """The worker's entry: ``main()``, an unexpected exception read as :data:`EXIT_UNFINISHED` (the gate itself
    failed: never 1, which means a refuted claim), then :func:`finished`."""
    try:
        code = main()
    except Exception:  # noqa: BLE001 - the gate crashed: say so, with its traceback, under its own status
        traceback.print_exc()
        print("error: the gate could not finish (an internal error, above); no report was written",
              file=sys.stderr)
        code = EXIT_UNFINISHED
    finished(code)
    return code


def _start(argv: list[str], main, write: int) -> int | None:
    """Start the worker: a fork of this process running ``main()`` where the system forks (it has imported
    the gate already, so it starts at once), else a new interpreter running ``python -m audit ARGV``. Returns
    the child's pid (a fork) or None (a subprocess, kept in ``_start.proc``)."""
    if hasattr(os, "fork"):
        pid = os.fork()
        if pid == 0:  # the worker
            code = EXIT_UNFINISHED
            try:
                os.environ[WORKER_ENV] = str(write)
                code = worker_main(main)
            finally:
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except Exception:  # noqa: BLE001
                        pass
                os._exit(code)
        return pid
    _start.proc = subprocess.Popen([sys.executable, "-m", "audit", *argv], pass_fds=(write,),
                                   env={**os.environ, WORKER_ENV: str(write)})
    return None


def _wait(pid: int | None) -> int:
    """The worker's status (negative: the signal that ended it), Ctrl-C waiting on as the worker handles it."""
    while True:
        try:
            if pid is None:
                return _start.proc.wait()
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status)
        except KeyboardInterrupt:
            continue


def run_in_worker(argv: list[str], main) -> int:
    """Run the command ``main()`` (the command line ``argv``) in a worker process and return the status the worker
    says it finished with, or :data:`EXIT_UNFINISHED` (with a line on stderr) when it ended without saying so."""
    read, write = os.pipe()
    try:
        pid = _start(argv, main, write)
    finally:
        os.close(write)
    said = b""
    with os.fdopen(read, "rb") as pipe:
        while True:
            try:
                said += pipe.read()
                break
            except KeyboardInterrupt:  # Ctrl-C reaches the worker too: wait for what it says
                continue
    status = _wait(pid)
    text = said.decode(errors="replace").strip()
    if text.lstrip("-").isdigit():
        return int(text)
    how = f"exit status {status}" if status >= 0 else f"signal {-status}"
    print(f"error: the gate could not finish: the process running the subject ended ({how}) before the audit "
          "finished, so no report was written. The subject's code ended the process (os._exit, a crash in C code, "
          "a kill); the gate fails closed (exit 3), never reading that as a pass.", file=sys.stderr)
    return EXIT_UNFINISHED
