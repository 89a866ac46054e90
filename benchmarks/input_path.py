"""Which files the ``ambppl score`` command's input passes through (issue 23's layering target).

Runs ``ambppl score <example> -o <tmp>`` under :func:`sys.setprofile` and follows the input
by data flow: the path string is tracked; a call into ambppl that receives a tracked object
(as an argument, or inside a list/tuple/dict argument) is a *visit* of its file, and what that
call returns is tracked too. Prints the files visited in order of first visit, their number,
the *climbs back up*: visits whose caller sits in a lower layer than the callee (layers:
cli > report > validation > analysis > inference > data > maths > internal), which an
acyclic, downward-only design never makes, and, more broadly, the number of files in which
any function of ambppl ran during the command.

Usage: ``python benchmarks/input_path.py [-v]`` (``-v``: list the files of the broad count).
``tests/test_architecture.py`` runs :func:`trace` and holds the target (at most 8 files, no
climb back up).

Returned values are tracked too, except ``True``/``False`` and ints: they are shared objects
(one ``True``, cached small ints), so tracking their ids would make every later call that gets
a flag or a count look like a visit.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

LAYERS = ["internal", "maths", "data", "inference", "analysis", "validation", "report", "cli"]


def layer(path: str, root: str) -> int:
    """The layer of a file under the package folder ``root`` (top-level modules: above cli)."""
    parts = Path(os.path.relpath(path, root)).parts
    sub = parts[0] if len(parts) > 1 else ""
    return LAYERS.index(sub) if sub in LAYERS else len(LAYERS)


def trace() -> tuple[int, list[str], list[tuple[str, str]], set[str]]:
    """Run the command under the profiler: its exit status, the files the input passes
    through (in order of first visit), the climbs back up (caller, callee) and the files any
    function of ambppl ran in."""
    import ambppl
    import ambppl.cli
    from ambppl.data import example_path

    src = str(example_path("weather_sentiment"))
    root = str(Path(ambppl.__file__).parent)
    tracked: set[int] = set()
    keep: list = []  # keep tracked objects alive so their ids stay unique
    visits: list[str] = []
    climbs: list[tuple[str, str]] = []
    pending: dict[int, bool] = {}
    ran: set[str] = set()  # every file a function of ambppl ran in (module bodies left out)

    def is_tracked(value: object) -> bool:
        if id(value) in tracked:
            return True
        if isinstance(value, list | tuple):
            return any(id(v) in tracked for v in value[:8])
        if isinstance(value, dict):
            return any(id(v) in tracked for v in list(value.values())[:16])
        return False

    def prof(frame, event, arg):
        code = frame.f_code
        if not code.co_filename.startswith(root):
            return
        if event == "call" and code.co_name != "<module>":
            ran.add(os.path.relpath(code.co_filename, root))
        if event == "call":
            args = [
                frame.f_locals.get(n)
                for n in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
            ]
            hit = any(is_tracked(a) for a in args)
            pending[id(frame)] = hit
            if hit:
                rel = os.path.relpath(code.co_filename, root)
                visits.append(rel)
                caller = frame.f_back.f_code.co_filename if frame.f_back else ""
                if caller.startswith(root) and layer(caller, root) < layer(code.co_filename, root):
                    climbs.append((os.path.relpath(caller, root), rel))
        elif (
            event == "return"
            and pending.pop(id(frame), False)
            and arg is not None
            and not isinstance(arg, bool | int)  # singletons and cached small ints: an id
        ):  # of True or 0 would make every later call given a flag or a count a "visit"
            tracked.add(id(arg))
            keep.append(arg)

    keep.append(src)
    tracked.add(id(src))
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["score", src, "--cant-solve", "I can't tell", "-q", "-o", f"{tmp}/s.csv"]
        sys.setprofile(prof)
        try:
            rc = ambppl.cli.main(argv)
        finally:
            sys.setprofile(None)
    return rc, list(dict.fromkeys(visits)), climbs, ran


def main() -> None:
    rc, first, climbs, ran = trace()
    print(f"exit status {rc}; files the input passes through ({len(first)}):")
    for f in first:
        print("  ", f)
    print(f"climbs back up: {len(climbs)}", *(f"\n   {a} -> {b}" for a, b in climbs[:10]))
    print(f"files any function of ambppl ran in during the command: {len(ran)}")
    if "-v" in sys.argv:
        print(*(f"   {f}" for f in sorted(ran)), sep="\n")


if __name__ == "__main__":
    main()
