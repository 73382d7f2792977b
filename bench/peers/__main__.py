"""`python3 -m bench.peers`: what bench/peers.sh runs."""

import sys

from .main import main

sys.exit(main(sys.argv[1:]))
