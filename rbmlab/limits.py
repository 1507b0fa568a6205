"""Upper bounds on every count and size a configuration may ask for, each derived from the time or
memory it implies, in one place (issue 33: an unbounded count is a run that never ends).

A bound is a :class:`Limit`: an ``int`` that carries its one-line justification, which the
validation error quotes (``learner.k: must be <= 100000 (sampler sweeps or ...), got ...``).
Options declare it as ``option(..., hi=limits.UPDATE_STEPS)`` (rbmlab.validation); checks made in
code compare against the same constants, so a bound is changed here or nowhere.

How the numbers were derived. The reference model is the 784 x 500 binary RBM of MNIST trained on
mini-batches of 100 (600 updates an epoch): one block-Gibbs sweep of 100 chains costs
2 x 784 x 500 x 100 = 7.8e7 multiply-adds. The reference rate is 1e12 multiply-adds a second, a
GPU's (numpy on one CPU core is some 10 to 50 times slower), so each bound below is already
impractical at the fastest rate rbmlab runs at. Every count and size bound is at least 10 times
the largest value any committed configuration uses (conf/ and experiments/, every tier;
tests/test_limits.py checks it), so it refuses only what no experiment asks for; the enumeration
limits at the end are what exact enumeration can do at all.

A count times another can pass both bounds and still be too much; the products that matter are
checked where the options meet (S-DCP's d x k, a dataset's array size) with :func:`exceeds`.
"""

from __future__ import annotations


class Limit(int):
    """An upper bound with its reason: compares, formats and hashes as the plain int."""

    why: str

    def __new__(cls, value: int, why: str) -> Limit:
        self = super().__new__(cls, value)
        self.why = why
        return self

    def __repr__(self) -> str:
        return int.__repr__(self)

    def __reduce__(self):  # deep copies and pickles (launcher workers) keep the reason
        return (Limit, (int(self), self.why))


# ---------------------------------------------------------------- time: steps and iterations
UPDATE_STEPS = Limit(
    10**5,
    "sampler sweeps or solver iterations inside one training update, "
    "repeated every mini-batch: 1e5 sweeps of a 784x500 RBM's batch of 100 are 8 s "
    "an update at 1e12 multiply-adds/s, over an hour an MNIST epoch",
)
EVALUATION_STEPS = Limit(
    10**6,
    "sweeps, iterations or temperatures of one evaluation or sampling "
    "job: 1e6 sweeps of 100 chains of a 784x500 RBM are 78 s at 1e12 "
    "multiply-adds/s, per 100 chains or examples",
)
EPOCHS = Limit(
    10**6,
    "passes over the training set (or evaluation points): the training loop's "
    "own work is about 1 ms an epoch even for a model that costs nothing, 1e6 epochs "
    "17 min of it; the longest committed runs have 1e5",
)
REPEATS = Limit(
    1000,
    "repetitions of a whole solve (L-BFGS-B restarts of each Frank-Wolfe unit): "
    "each is up to maxiter iterations over every chain",
)
TRIALS = Limit(
    1000,
    "models trained side by side in one process: T trials are T runs' work and "
    "memory (the committed maximum is 25)",
)

# ---------------------------------------------------------------- memory: sizes
UNITS = Limit(
    10**6,
    "units of a layer: 1e6 hidden units on 784 visible ones are 3 GB of weights "
    "per copy, 19 GB with the 6 copies a learner keeps",
)
CHAINS = Limit(
    10**6,
    "chains or problems advanced together: 1e6 states of 784 float32 units are "
    "3 GB per copy, and a sweep keeps several",
)
STATES = Limit(
    64,
    "states of one categorical (Potts) unit, each a column of its layer: 784 units of "
    "64 states are 50,176 columns, 100 MB of weights per copy at 500 hidden units",
)
EXAMPLES = Limit(10**7, "rows of data or draws: 1e7 rows of 784 float32 pixels are 31 GB")
ARRAY_ELEMENTS = Limit(
    2**32,
    "elements of one array a dataset builds: 2^32 float32 are 16 GiB, "
    "and building them takes float64 temporaries of twice that",
)
CSV_BYTES = Limit(
    2**28,
    "bytes of a .csv data file: parsed in Python at about 17 MB/s into lists of about 32 bytes a "
    "value, 256 MiB take some 15 s and 1-2 GB; a .npy of any size is read directly",
)

# ---------------------------------------------------------------- exact enumeration
ENUMERATION_UNITS = Limit(
    25,
    "units enumerated for an exact log Z: the 2^25 = 3.4e7 states of a "
    "25-variable Ising model take about 5 s, and each unit more doubles it",
)
EXACT_SAMPLING_UNITS = Limit(
    20,
    "units whose 2^n states are all held at once (exact sampling's "
    "table, KL's probabilities and counts): 2^20 states take 0.1 s and "
    "8 MiB per list, 2^25 take 5 s and 256 MiB, at every evaluation point",
)
MARGINAL_UNITS = Limit(
    20,
    "latent units summed out by enumeration for each row's log p(x) (a "
    "DBM's): 2^20 states a row, 1e10 for a test split of 10,000 rows",
)
TRANSFER_MATRIX_SIDE = Limit(
    18,
    "side of a torus whose exact log Z comes from column transfer "
    "matrices (2^side column states through side steps): side 15 takes "
    "about 40 s, each side more about 3x, side 18 about 20 min",
)


# Integer options with no ``hi`` of their own, by "<module>.<class>.<field>", and why they need none.
BOUNDED_ELSEWHERE = {
    "rbmlab.data.tasks.OccludeConfig.size": "a patch side: refused unless the patch fits in the "
    "images (rbmlab.data.tasks), before any work",
}


def unbounded_reason(config_class: type, name: str) -> str | None:
    """Why the integer option ``name`` of ``config_class`` needs no upper bound, or None (it needs
    one): a seed names a random stream (hashed, rbmlab.backend.host_rng) and no work or memory
    grows with it; the others are listed in BOUNDED_ELSEWHERE."""
    if name == "seed" or name.endswith("_seed"):
        return "a seed names a random stream; no work or memory grows with it"
    for cls in getattr(config_class, "__mro__", (config_class,)):
        reason = BOUNDED_ELSEWHERE.get(f"{cls.__module__}.{cls.__qualname__}.{name}")
        if reason is not None:
            return reason
    return None


def exceeds(limit: Limit, value: int, what: str) -> str | None:
    """The problem when ``value`` (a product of options, described by ``what``, e.g.
    "d x k (sampler sweeps an update)") passes ``limit``, else None; for cross-option checks."""
    if value <= limit:
        return None
    return f"{what} is {value}; must be <= {limit} ({limit.why})"
