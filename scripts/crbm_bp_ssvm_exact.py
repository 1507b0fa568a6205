"""crbm_bp's structured SVMs against exact enumeration on tiny conditional RBMs and a tiny
occlusion task (why LSSVM/MSSVM leave an occluded patch at its input value; Table 2's Changed).

    python scripts/crbm_bp_ssvm_exact.py [key=value ...]

Keys (defaults in DEFAULTS): rows, cols (the images; rows · cols ≤ 14 outputs, every output
configuration is enumerated), sizes (occlusion patch sides, comma-separated), prototypes, density,
noise (the task: each clean image is one of ``prototypes`` random patterns of ``density`` ones
with each pixel flipped with probability ``noise``; one random size × size patch of it set to 0 is
the input, rbmlab.data.corruption.occlude), hidden, n_train, n_test, epochs, batch, lr_mle,
lr_ssvm, sweep_lrs (the lr sweep of part 4, comma-separated), sweep_epochs, checks (random
instances of parts 1–2), seed.

Prints four parts:
  1. loss-augmented inference: rbmlab's mixed-product (MSSVM) and max-product (LSSVM) BP on the
     biases b¹ + (1 − 2y), y the clean target, against the exact argmax over v of
     [log Σ_h exp(−E(v, h, x)) + Hamming(v, y)] and of [max_h −E(v, h, x) + Hamming(v, y)]
     (crbm_bp §4.2, Eq. 6 and the v̂ after Eq. 7);
  2. the learners' step against the exact subgradient of the structured hinge (central finite
     differences of the exact hinge, where its argmax is unique);
  3. training on the tiny occlusion task: LR, MLE, MSSVM and LSSVM, each with exact inference and
     with rbmlab's learner (BP), scored All / Changed as crbm_bp Table 2 (and the Bayes predictor
     of the task's own generative model), with the exact structured hinge of each model;
  4. the same learners (rbmlab's BP) over a range of learning rates.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from rbmlab.backend.ops import sigmoid
from rbmlab.data.batch import Batch
from rbmlab.data.corruption import occlude, pixel_errors
from rbmlab.errors import RbmlabError, fail
from rbmlab.evaluators.pixel_error import predict
from rbmlab.inference.matrix_bp import BPResult, decode, loopy_bp
from rbmlab.learners import LEARNERS
from rbmlab.learners.base import difference
from rbmlab.models.crbm import CRBM, CRBMConfig, statistics
from rbmlab.validation import typed_key_values

DEFAULTS = {
    "rows": 3,
    "cols": 4,
    "sizes": "1,2",
    "prototypes": 10,
    "density": 0.3,
    "noise": 0.05,
    "hidden": 4,
    "n_train": 500,
    "n_test": 1000,
    "epochs": 20,
    "batch": 20,
    "lr_mle": 0.1,
    "lr_ssvm": 0.03,
    "sweep_lrs": "0.03,0.3,3",
    "sweep_epochs": 100,
    "checks": 200,
    "seed": 0,
}
MAX_OUTPUTS = 14
BP_NAMES = {"mle": "mle_bp", "mssvm": "mssvm", "lssvm": "lssvm", "lr": "logistic"}
TEST_INFERENCE = {"mle": "sum", "mssvm": "mixed", "lssvm": "max"}


# ------------------------------------------------------------------ exact enumeration
def all_binary(m: int) -> np.ndarray:
    """Every configuration of m binary units, bit i of row a = unit i."""
    return ((np.arange(2**m)[:, None] >> np.arange(m)) & 1).astype(np.float64)


def index_of(v: np.ndarray) -> np.ndarray:
    return (v @ (2 ** np.arange(v.shape[1]))).astype(int)


def marginal_scores(model, x, V):
    """(N, 2^|v|): log Σ_h exp(−E(v, h, x)) = v·b¹ + Σ_j softplus(vW + b²)_j for every v."""
    b1, b2 = model.conditional_biases(x)
    return b1 @ V.T + np.logaddexp(0.0, V @ model.W + b2[:, None, :]).sum(-1)


def joint_scores(model, x, V):
    """(N, 2^|v|): max_h −E(v, h, x) = v·b¹ + Σ_j max(0, vW + b²)_j for every v."""
    b1, b2 = model.conditional_biases(x)
    return b1 @ V.T + np.maximum(0.0, V @ model.W + b2[:, None, :]).sum(-1)


def hamming(y, V):
    """(N, 2^|v|): Hamming(v, yⁿ) for every v."""
    return np.abs(V[None, :, :] - y[:, None, :]).sum(-1)


def loss_augmented(model, x, y, V, kind: str):
    """The exact loss-augmented prediction v̂ (N, |v|) and whether its argmax is unique:
    kind mssvm, argmax_v [log Σ_h exp(Δ(v, yⁿ) − E)] (Eq. 6); lssvm, argmax_v max_h [Δ − E]."""
    s = (marginal_scores if kind == "mssvm" else joint_scores)(model, x, V) + hamming(y, V)
    top = np.sort(s, axis=1)[:, -2:]
    return V[s.argmax(1)], top[:, 1] - top[:, 0] > 1e-9


def hinge(model, x, y, V, kind: str) -> np.ndarray:
    """(N,) the structured hinge of Eq. 6 per instance (kind mssvm), or LSSVM's (max over h)."""
    s = (marginal_scores if kind == "mssvm" else joint_scores)(model, x, V)
    return (s + hamming(y, V)).max(1) - s[np.arange(len(y)), index_of(y)]


def data_hidden(model, x, v, kind: str):
    field = v @ model.W + model.conditional_biases(x)[1]
    return (field > 0).astype(float) if kind == "lssvm" else sigmoid(field)


def exact_step_direction(model, x, y, V, kind: str) -> dict:
    """The ascent direction of an exact step: data statistics minus the model term (mle: exact
    expectations under p(v, h | x); mssvm / lssvm: the exact loss-augmented prediction), as
    rbmlab.learners computes it with its inference."""
    positive = statistics(x, y, data_hidden(model, x, y, kind))
    if kind == "mle":
        s = marginal_scores(model, x, V)
        p = np.exp(s - s.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        hv = sigmoid(V @ model.W + model.conditional_biases(x)[1][:, None, :])  # E[h | v, x]
        negative = statistics(x, p @ V, np.einsum("na,nah->nh", p, hv), np.einsum("na,ai,nah->nih", p, V, hv))
    else:
        v_hat, _ = loss_augmented(model, x, y, V, kind)
        negative = statistics(x, v_hat, data_hidden(model, x, v_hat, kind))
    return difference(positive, negative)


def exact_predict(model, x, V, kind: str):
    """Test-time prediction with exact inference: the marginal mode (mle), the marginal MAP
    (mssvm), the joint MAP's v (lssvm), 1[b¹ > 0] (lr)."""
    if kind == "lr":
        return (model.conditional_biases(x)[0] > 0).astype(float)
    if kind == "mle":
        s = marginal_scores(model, x, V)
        p = np.exp(s - s.max(1, keepdims=True))
        return ((p / p.sum(1, keepdims=True)) @ V > 0.5).astype(float)
    return V[(marginal_scores if kind == "mssvm" else joint_scores)(model, x, V).argmax(1)]


def random_crbm(rng, n_v, n_h, n_x, scale):
    return CRBM(
        W=scale * rng.standard_normal((n_v, n_h)),
        W_xv=scale * rng.standard_normal((n_x, n_v)),
        W_xh=scale * rng.standard_normal((n_x, n_h)),
        b_v=rng.standard_normal(n_v),
        b_h=rng.standard_normal(n_h),
    )


# ------------------------------------------------------------------ part 1: inference
def inference_agreement(n_v, n_h, scale, count, seed):
    """Share of random instances on which rbmlab's loss-augmented BP decodes the exact v̂, per
    mode, and the mean objective lost where it does not."""
    rng = np.random.default_rng(seed)
    model = random_crbm(rng, n_v, n_h, n_v, scale)
    x = (rng.random((count, n_v)) < 0.5).astype(float)
    y = (rng.random((count, n_v)) < 0.4).astype(float)
    V = all_binary(n_v)
    b1, b2 = model.conditional_biases(x)
    out = {}
    for kind, mode, scores in (("mssvm", "mixed", marginal_scores), ("lssvm", "max", joint_scores)):
        result = loopy_bp(model.W, b1 + (1.0 - 2.0 * y), b2, mode=mode, max_iter=200, tol=1e-9)
        v_bp = decode(result)
        s = scores(model, x, V) + hamming(y, V)
        gap = s.max(1) - s[np.arange(count), index_of(v_bp)]
        out[kind] = (float(np.mean(gap < 1e-9)), float(gap.mean()))
    return out


# ------------------------------------------------------------------ part 2: the step
class ExactInference:
    """Stands in for rbmlab.inference.matrix_bp.loopy_bp inside rbmlab.learners.max_margin: the
    beliefs of the exact loss-augmented prediction (η^v = ±1 at v̂; η^h the log-odds of
    E[h | v̂, x] for mixed, ±(v̂W + b²) for max), so a learner's step can be compared with the exact
    subgradient apart from BP."""

    def __init__(self, V):
        self.V = V

    def __call__(self, W, b_v, b_h, *, mode="sum", **_):
        s = b_v @ self.V.T + (np.logaddexp if mode == "mixed" else lambda a, b: np.maximum(a, b))(
            0.0, self.V @ W + b_h[:, None, :]
        ).sum(-1)
        v = self.V[s.argmax(1)]
        field = v @ W + b_h
        return BPResult(
            eta_v=2.0 * v - 1.0,
            eta_h=field,
            L=None,
            K=None,
            converged=np.ones(len(v), dtype=bool),
            iterations=1,
        )


def hinge_gradient_fd(model, x, y, V, kind: str, eps: float = 1e-6) -> dict:
    """Central finite differences of the mean exact hinge in every parameter."""
    grad = {}
    for name in CRBM.PARAMS:
        theta = getattr(model, name)
        g = np.zeros_like(theta)
        for index in np.ndindex(theta.shape):
            step = np.zeros_like(theta)
            step[index] = eps
            up = hinge(model.replace(**{name: theta + step}), x, y, V, kind).mean()
            down = hinge(model.replace(**{name: theta - step}), x, y, V, kind).mean()
            g[index] = (up - down) / (2 * eps)
        grad[name] = g
    return grad


def learner_step(name: str, model, x, y, lr: float, rng, **options):
    learner = LEARNERS.build(LEARNERS.parse({"name": name, "lr": lr, "batch_size": len(x), **options}))
    batch = Batch(x, targets=y)
    new, _ = learner.step(model, learner.init_state(model, batch, rng), batch, rng)
    return {p: (getattr(new, p) - getattr(model, p)) / lr for p in CRBM.PARAMS}


def step_check(kind: str, seed: int, with_bp: bool):
    """max |learner step / lr + ∇ hinge (finite differences)| over the parameters, on 6 random
    instances of a 6-output CRBM whose loss-augmented argmax is unique; with_bp False: the
    learner's BP replaced by :class:`ExactInference`."""
    import rbmlab.learners.max_margin as mm

    rng = np.random.default_rng(seed)
    n_v = 6
    V = all_binary(n_v)
    model = random_crbm(rng, n_v, 2, 5, 0.7)
    x = (rng.random((6, 5)) < 0.5).astype(float)
    y = (rng.random((6, n_v)) < 0.4).astype(float)
    _, unique = loss_augmented(model, x, y, V, kind)
    x, y = x[unique], y[unique]
    original = mm.loopy_bp
    if not with_bp:
        mm.loopy_bp = ExactInference(V)
    try:
        step = learner_step(kind, model, x, y, 0.1, rng, tol=1e-12, base_iterations=300)
    finally:
        mm.loopy_bp = original
    fd = hinge_gradient_fd(model, x, y, V, kind)
    return max(float(np.abs(step[p] + fd[p]).max()) for p in CRBM.PARAMS)


# ------------------------------------------------------------------ part 3: the task
def prototypes(rows, cols, size, count, density, rng):
    """``count`` random patterns any two of which differ outside every size × size patch (the
    visible part names the pattern)."""
    for _ in range(10_000):
        P = (rng.random((count, rows * cols)) < density).astype(float)
        if all(
            len({tuple(p[outside(rows, cols, size, t, l)]) for p in P}) == count
            for t in range(rows - size + 1)
            for l in range(cols - size + 1)
        ):
            return P
    fail(
        f"prototypes: no {count} patterns of density {density} found that differ outside every "
        f"{size} × {size} patch"
    )


def outside(rows, cols, size, top, left):
    keep = np.ones((rows, cols), dtype=bool)
    keep[top : top + size, left : left + size] = False
    return keep.ravel()


def occlusion_task(opts, size, seed):
    """(prototypes, train, test): Batches of occluded inputs, clean targets, changed mask."""
    rows, cols = opts["rows"], opts["cols"]
    P = prototypes(rows, cols, size, opts["prototypes"], opts["density"], np.random.default_rng(seed))

    def split(n, stream):
        rng = np.random.default_rng([seed, stream])
        y = P[rng.integers(0, len(P), n)]
        y = np.where(rng.random(y.shape) < opts["noise"], 1.0 - y, y)
        return occlude(y, (rows, cols), size, 0.0, rng)

    return P, split(opts["n_train"], 1), split(opts["n_test"], 2)


def bayes_predict(P, x, opts, size):
    """The marginal mode of p(y | x) under the task's own generative model (prototype uniform,
    noise flips, patch corner uniform): the lowest expected All error any predictor can have."""
    rows, cols, noise = opts["rows"], opts["cols"], opts["noise"]
    p1 = np.where(P == 1, 1.0 - noise, noise)  # p(y_i = 1 | prototype)
    num, den = np.zeros_like(x), np.zeros(len(x))
    for t in range(rows - size + 1):
        for l in range(cols - size + 1):
            keep = outside(rows, cols, size, t, l)
            fits = ~x[:, ~keep].any(1)  # the patch is all 0 in x
            lik = np.prod(np.where(x[:, None, keep] == 1, p1[None, :, keep], 1 - p1[None, :, keep]), -1)
            lik *= fits[:, None]  # (N, K)
            filled = np.where(keep[None, None, :], x[:, None, :], p1[None])  # (N, K, D)
            num += (lik[:, :, None] * filled).sum(1)
            den += lik.sum(1)
    return (num / den[:, None] > 0.5).astype(float)


def train(kind: str, via: str, train_set, opts, lr, epochs, seed):
    """A CRBM (rbmlab's initialisation) trained by ``kind`` with exact inference (via exact) or
    by rbmlab's learner (via bp: mle_bp, mssvm, lssvm; logistic for lr); returns (model, T)."""
    rng = np.random.default_rng(seed)
    model = CRBM.initialize(
        CRBMConfig(n_hidden=opts["hidden"]),
        xp=np,
        rng=rng,
        data_mean=train_set.targets.mean(0),
        dtype=np.float64,
    )
    V = all_binary(train_set.targets.shape[1])
    learner = state = None
    if via == "bp":
        learner = LEARNERS.build(
            LEARNERS.parse({"name": BP_NAMES[kind], "lr": lr, "batch_size": opts["batch"]})
        )
        model = learner.initial_model(model, False)
        state = learner.init_state(model, train_set, rng)
    n, b = len(train_set), opts["batch"]
    for _ in range(epochs):
        order = rng.permutation(n)
        for start in range(0, n, b):
            batch = train_set.take(order[start : start + b])
            if learner is not None:
                model, state = learner.step(model, state, batch, rng)
            else:
                g = exact_step_direction(model, batch.inputs, batch.targets, V, kind)
                model = model.replace(**{p: getattr(model, p) + lr * g[p] for p in g})
    t = learner.inference_iterations(state) if learner is not None else 7 + epochs - 1
    return model, t


def score(model, kind, t, test, V):
    """All / Changed (%) with exact test inference and with rbmlab's (matched T, tol 0.001)."""
    out = {}
    e = pixel_errors(exact_predict(model, test.inputs, V, kind), test.targets, test.mask)
    out["exact"] = (e["all"], e["changed"])
    if kind in TEST_INFERENCE:
        predicted, _ = predict(model, test.inputs, TEST_INFERENCE[kind], t, 1e-3)
        e = pixel_errors(predicted, test.targets, test.mask)
        out["bp"] = (e["all"], e["changed"])
    return out


def copy_weights(model):
    """(mean W_xv[i, i], mean |W_xv[j, i]| j ≠ i, mean |W|): the input copy against the context."""
    off = ~np.eye(model.W_xv.shape[0], dtype=bool)
    return (
        float(np.diag(model.W_xv).mean()),
        float(np.abs(model.W_xv[off]).mean()),
        float(np.abs(model.W).mean()),
    )


# ------------------------------------------------------------------ options and main
LISTS = {"sizes": int, "sweep_lrs": float}


def parse(argv):
    """The options, checked; any bad one ends the run with ``rbmlab: error: <key>: <problem>``."""
    try:  # an empty list item stays one (and fails as a number)
        opts = typed_key_values(argv, DEFAULTS, LISTS, keep_empty=True)
    except RbmlabError as error:
        fail(str(error))
    for key in ("rows", "cols", "prototypes", "hidden", "n_train", "n_test", "batch", "checks"):
        if opts[key] < 1:
            fail(f"{key}: must be ≥ 1, got {opts[key]}")
    for key in ("epochs", "sweep_epochs", "seed"):
        if opts[key] < 0:
            fail(f"{key}: must be ≥ 0, got {opts[key]}")
    d = opts["rows"] * opts["cols"]
    if d > MAX_OUTPUTS:
        fail(
            f"rows: rows × cols = {d} outputs, at most {MAX_OUTPUTS} (every output configuration "
            "is enumerated)"
        )
    for size in opts["sizes"]:
        if not 1 <= size <= min(opts["rows"], opts["cols"]):
            fail(f"sizes: a {size} × {size} patch does not fit in {opts['rows']} × {opts['cols']} images")
    if not 0 < opts["density"] < 1:
        fail(f"density: must be in (0, 1), got {opts['density']}")
    if not 0 <= opts["noise"] < 0.5:
        fail(f"noise: must be in [0, 0.5), got {opts['noise']}")
    for key in ("lr_mle", "lr_ssvm"):
        if not opts[key] > 0:
            fail(f"{key}: must be > 0, got {opts[key]}")
    if not all(lr > 0 for lr in opts["sweep_lrs"]):
        fail(f"sweep_lrs: every lr must be > 0, got {opts['sweep_lrs']}")
    if opts["prototypes"] > 2 ** (d - max(opts["sizes"]) ** 2) // 2:
        fail(
            f"prototypes: {opts['prototypes']} patterns cannot all differ outside a "
            f"{max(opts['sizes'])} × {max(opts['sizes'])} patch of {d} pixels (at most "
            f"{2 ** (d - max(opts['sizes']) ** 2) // 2})"
        )
    return opts


def main(argv: list[str]) -> None:
    opts = parse(argv)
    start = time.perf_counter()
    print("1. loss-augmented inference: rbmlab's BP on b1 + (1 - 2y) against exact enumeration")
    print("   (share of instances where BP decodes the exact argmax; mean objective lost)")
    for n_v, n_h, scale in ((10, 1, 1.0), (10, 3, 0.3), (10, 3, 1.0), (10, 3, 2.0), (12, 4, 1.0)):
        a = inference_agreement(n_v, n_h, scale, opts["checks"], opts["seed"])
        print(
            f"   |v|={n_v:2d} |h|={n_h} weight scale {scale}: mixed-product = exact marginal MAP "
            f"{100 * a['mssvm'][0]:5.1f} % (lost {a['mssvm'][1]:.4f}), max-product = exact joint "
            f"MAP {100 * a['lssvm'][0]:5.1f} % (lost {a['lssvm'][1]:.4f})"
        )
    print("2. a learner's step / lr against minus the finite-difference gradient of the exact hinge")
    for kind in ("mssvm", "lssvm"):
        exact = max(step_check(kind, s, with_bp=False) for s in range(3))
        bp = max(step_check(kind, s, with_bp=True) for s in range(3))
        print(
            f"   {kind}: max |difference| {exact:.1e} (exact inference inside the learner), "
            f"{bp:.1e} (rbmlab's BP)"
        )
    print(
        f"3. tiny occlusion task: {opts['rows']} x {opts['cols']} images, {opts['prototypes']} "
        f"patterns of density {opts['density']}, {opts['noise']} pixel noise, {opts['hidden']} hidden "
        f"units, {opts['n_train']} train / {opts['n_test']} test, {opts['epochs']} epochs, batch "
        f"{opts['batch']}, lr {opts['lr_mle']} (LR, MLE) / {opts['lr_ssvm']} (SSVMs)"
    )
    print(
        "   method       train   All %  Changed %  (rbmlab's BP at test: All, Changed)  "
        "W_xv diag  |W_xv off|  |W|  hinge train/test (Eq. 6)"
    )
    for size in opts["sizes"]:
        P, train_set, test = occlusion_task(opts, size, opts["seed"])
        V = all_binary(opts["rows"] * opts["cols"])
        per_image = test.mask.sum(1).mean()
        e = pixel_errors(bayes_predict(P, test.inputs, opts, size), test.targets, test.mask)
        print(
            f"   -- {size} x {size} patch ({100 * size * size / V.shape[1]:.0f} % of the pixels; "
            f"{per_image:.2f} changed pixels per image; copying the input everywhere: All "
            f"{100 * per_image / V.shape[1]:.2f}, Changed 100)"
        )
        print(f"   Bayes        -      {e['all']:6.2f}  {e['changed']:8.2f}")
        runs = [("lr", "bp", opts["lr_mle"])] + [
            (k, via, opts["lr_mle"] if k == "mle" else opts["lr_ssvm"])
            for k in ("mle", "mssvm", "lssvm")
            for via in ("exact", "bp")
        ]
        for kind, via, lr in runs:
            model, t = train(kind, via, train_set, opts, lr, opts["epochs"], opts["seed"])
            s = score(model, kind, t, test, V)
            bp = f"({s['bp'][0]:6.2f}, {s['bp'][1]:6.2f})" if "bp" in s else " " * 16
            d, off, w = copy_weights(model)
            h = hinge(model, train_set.inputs, train_set.targets, V, "mssvm" if kind != "lssvm" else "lssvm")
            ht = hinge(model, test.inputs, test.targets, V, "mssvm" if kind != "lssvm" else "lssvm")
            name = "LR" if kind == "lr" else kind.upper()
            print(
                f"   {name:6s} {via:5s}  {lr:5g}  {s['exact'][0]:6.2f}  {s['exact'][1]:8.2f}   {bp:38s}"
                f"{d:6.2f}     {off:6.2f}    {w:5.2f}  {h.mean():.3f} / {ht.mean():.3f}"
            )
    print(
        f"4. rbmlab's learners (BP) over the lr, {opts['sweep_epochs']} epochs (All %, Changed %; "
        "test inference as in training)"
    )
    for size in opts["sizes"]:
        _, train_set, test = occlusion_task(opts, size, opts["seed"])
        V = all_binary(opts["rows"] * opts["cols"])
        for kind in ("mle", "mssvm", "lssvm"):
            cells = []
            for lr in opts["sweep_lrs"]:
                model, t = train(kind, "bp", train_set, opts, lr, opts["sweep_epochs"], opts["seed"])
                a, c = score(model, kind, t, test, V)["bp"]
                cells.append(f"lr {lr:g}: {a:5.2f} / {c:6.2f}")
            print(f"   {size} x {size}  {kind.upper():6s} " + "   ".join(cells))
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
