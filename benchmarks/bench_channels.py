"""CPU seconds of each channel ``audit check`` reads before sampling (:mod:`audit.gate.channels`), children included.

Target (the gate as an adversary): the fresh-process and seed-recording probe adds at most 5 CPU-s per subject at
quick. Measured on a correct classifier (every channel runs to its end: the costly case) and on two leaks the
new channels find (a module-level generator, a structure that switches at 1,000 records). The fresh-process
probe's CPU is mostly its server interpreter's imports (the gate's own), paid once per subject; its children are
forks.

Run: ``PYTHONPATH=.:tests python benchmarks/bench_channels.py``.
"""
from __future__ import annotations

import resource
import sys
import time


def cpu_now() -> float:
    """CPU seconds of this process and its finished children (the fresh-process server is one)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


SUBJECTS = ("subjects.shipped_leaks:Correct", "subjects.seeded_at_import:ModuleGenerator",
            "subjects.as_shipped:FinerAtAThousand")


def main() -> int:
    from audit.gate import channels
    from audit.gate.run import Subject, plan_subject

    print("subject                                     in-process  round sizes  fresh processes  verdict")
    for target in SUBJECTS:
        subject = Subject(target, target, 1.0, bounds=[(0.0, 1.0)], classes=[0, 1])
        plan = plan_subject(subject)
        det, laps = None, []
        for read in channels.TRACE_CHANNELS:
            start = cpu_now()
            det = read(plan, subject, "quick", 0, det)
            laps.append(cpu_now() - start)
            if det.verdict == "violation":
                break
        laps += [float("nan")] * (3 - len(laps))
        print(f"{target:43s} {laps[0]:10.2f} {laps[1]:12.2f} {laps[2]:16.2f}  {det.verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
