"""List or run the studies (``make bench``, ``make bench-list``).

    python -m benchmarks list [AREA | AREA/NAME ...]
    python -m benchmarks run [AREA | AREA/NAME ...] [--dry-run]

``run`` plays each selected study in its own process with its default arguments, one after
another from the repository root, and stops at the first that fails. No selector: every study.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from benchmarks.studies import BENCHMARKS, find_studies, select


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("list", "run"))
    parser.add_argument("selectors", nargs="*", metavar="AREA[/NAME]")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    arguments = parser.parse_args(argv)
    try:
        studies = select(find_studies(), arguments.selectors)
    except ValueError as error:
        parser.exit(2, f"python -m benchmarks: {error}\n")
    if arguments.command == "list":
        width = max(len(study.key) for study in studies)
        for study in studies:
            print(f"{study.key:<{width}}  {study.title}")
        return 0
    for index, study in enumerate(studies, 1):
        command = [sys.executable, "-m", study.module]
        print(f"[{index}/{len(studies)}] python -m {study.module}", flush=True)
        if arguments.dry_run:
            continue
        start = time.perf_counter()
        returncode = subprocess.run(command, cwd=BENCHMARKS.parent, check=False).returncode
        if returncode != 0:
            print(f"python -m {study.module} failed (exit {returncode}); stopped", file=sys.stderr)
            return returncode
        print(f"[{index}/{len(studies)}] {study.key}: {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
