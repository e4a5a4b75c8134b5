"""python -m errscan"""

import sys

from errscan.cli import main

sys.exit(main())
