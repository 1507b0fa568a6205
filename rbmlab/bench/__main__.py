"""``python -m rbmlab.bench`` (``make bench``): see :mod:`rbmlab.bench`."""
from rbmlab.bench.cli import main

main()
