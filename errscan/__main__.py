"""The `errscan` command's entry point, and `python -m errscan`.

`--version` and `-V` alone are answered here, before click and the pipeline load, so
that the answer costs little more than the interpreter's own start; so is an `extract`
command line run before whose inputs are all as they were (errscan.launch). `run` ends the
process without tearing the interpreter down.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not loaded at run time: a replayed rescan needs none of it
if TYPE_CHECKING:
    from typing import NoReturn


def main() -> int:
    if sys.argv[1:] in (["--version"], ["-V"]):
        from errscan import __version__

        sys.stdout.write(f"errscan, version {__version__}\n")
        return 0
    if sys.argv[1:2] == ["extract"]:  # a rescan answered from its stored output, if it can be
        from errscan import launch

        code = launch.answer(sys.argv[1:])
        if code is not None:
            return code
        from errscan import build

        build.ident_ahead()  # read while click and the API load
        # A scan ahead, which tunes the collector so (api.tune_allocator): what loads
        # until then lives as long as the process, and collecting the young generation
        # every 700 objects it makes (some fifty times) only costs time.
        import gc

        gc.set_threshold(100_000, 50, 100)
    from errscan.cli import main as cli_main

    return cli_main()


def run() -> NoReturn:
    """The command: main, then the exit handlers and a flush of stdout and stderr, then
    the process's end, skipping the interpreter's teardown (freeing every module and
    object one by one: about 10 ms of a 110 ms warm rescan), as mypy's command does.
    Everything errscan opens is closed by the time main returns."""
    import atexit
    import contextlib
    import os

    code = main()
    atexit._run_exitfuncs()  # what an exit would have run: Ray's shutdown, helpers' close
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone, a stream closed
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
