"""``python -m rbmlab.bench`` (``make bench``): see :mod:`rbmlab.bench`."""
from rbmlab.bench import main

main()
