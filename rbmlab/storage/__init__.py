"""File primitives below everything that persists: atomic writes (fileio), the faults tests inject
into them (faults), one owner per directory (locking), the commit that produced a file
(provenance) and how a committed file spells a path so that it means the same in any checkout
(portable). They know nothing of models or runs, so the data cache and the run records alike
use them (rbmlab.run keeps the run's own records, checkpoints and outputs)."""
