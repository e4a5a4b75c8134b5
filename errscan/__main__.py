"""The `errscan` command's entry point, and `python -m errscan`.

`--version` and `-V` alone are answered here, before click and the pipeline load, so
that the answer costs little more than the interpreter's own start.
"""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:] in (["--version"], ["-V"]):
        from errscan import __version__

        sys.stdout.write(f"errscan, version {__version__}\n")
        return 0
    from errscan.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
