"""File primitives below everything that persists: atomic writes (fileio), the faults tests inject
into them (faults), one owner per directory (locking) and the commit that produced a file
(provenance). They know nothing of models or runs, so the data cache and the run records alike
use them (rbmlab.run keeps the run's own records, checkpoints and outputs)."""
