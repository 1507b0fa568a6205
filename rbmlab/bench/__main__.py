"""``python -m rbmlab.bench`` (``make bench``): see :mod:`rbmlab.bench`."""

from rbmlab.bench.cli import main

if __name__ == "__main__":
    main()
