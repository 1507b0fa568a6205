"""TAP learning, one learner for every depth (tap paper Alg. 2; a DBM's: App. E.2, Alg. 4): the
negative phase is a set of TAP fixed points, not samples. Each step (:class:`TapLearning`) starts
free TAP solutions at the mini-batch, ascends by the positive statistics minus the free solutions'
(the derivative of −F at them; rbmlab.inference.tap) and takes one optimizer step. The depths
differ in the positive statistics, the solver and the options: ``tap`` (:class:`TapLearner`, an
RBM or GRBM: the two-layer stack) and ``tap_dbm`` (:class:`TapDBM`, a DBM: three layers or more,
greedy pretraining first).

RBM (``tap``). Every mini-batch of M examples starts K = M TAP solutions at the examples themselves
(a^v = x, c^v = 0; Eqs. 37–38, Table 1's K = M), iterates Alg. 1 with damping for at most
``max_iter`` iterations (or until the mean-square change is below ``tol``), and ascends the TAP
log-likelihood: the exact clamped data term minus the derivative of the TAP free energy at the
solutions, averaged over all K (Eqs. 40–42; all K rather than the unique ones is our reading).
``persistent=true`` instead carries the solutions from one mini-batch to the next (the NIPS 2015
predecessor's option; the paper itself restarts from data). ``inference=adatap`` finds the fixed
points by VAMP instead (App. D, Fig. 10). Table 1's momentum η = 0.5 on W only and ℓ2 decay ε are
the optimizer's (``learner.optimizer.momentum``, ``momentum_on: interactions``, ``weight_decay``).
Packed runs (rbmlab.run.packed): every array with a leading run axis, each run's K solutions
iterated as that run's alone (the solver's ``runs``), its step at its own rate.

DBM (``tap_dbm``). Joint training: each mini-batch X^B of M examples gets K = M free TAP solutions
started at its examples (a_0 = x, c_0 = 0) and M clamped ones (layer 0 held at x; the positive
statistics are theirs, not exact), each at most ``max_iter`` damped iterations (fewer once the
mean-square change is below ``tol``), and one step on every W_l and b_l along Eqs. 126–129.
Alg. 4 shows plain SGD (no momentum, no decay): the default optimizer is sgd with momentum 0.

Pretraining (``pretrain_epochs`` at ``pretrain_lr``; Fig. 11: 50 epochs at 0.001) trains RBM 1 =
(layer 0, W_1, layer 1) on the data by TAP (Alg. 2: the step above on that two-layer stack, whose
clamped solution is the exact conditional f_a(xW_1 + b_1)), then RBM l on H^{(l−1)}, the
conditional means of layer l − 1 given the data through the trained layers below
(H^{(l)} = f_a(H^{(l−1)} W_l + b_l), H^{(0)} = X): rbmlab.learners.greedy's loop. RBM l ≥ 2
learns W_l and b_l only (Alg. 4 returns W^{(l)}, θ^{h(l)}): its visible fields are b_{l−1} as
RBM l − 1 left them (the authors' Julia code ties them so too). No weights are doubled or halved
(Salakhutdinov & Hinton 2009, and the Julia code, do so; Alg. 4 does not). It runs in
:meth:`TapDBM.initial_model` (a fresh model only: not for ``model.init``, not on resume), on the
whole training set; its time is not in the run's wall_time.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend.run_streams import RunStreams
from rbmlab.errors import RbmlabError
from rbmlab.inference import tap
from rbmlab.inference.solvers import SOLVERS
from rbmlab.inference.solvers.base import Beliefs
from rbmlab.learners import greedy
from rbmlab.learners.base import Learner, LearnerConfig, pretraining_unread, total
from rbmlab.limits import EPOCHS, UPDATE_STEPS
from rbmlab.models.base import TapForm, TapStack
from rbmlab.units.requirements import BERNOULLI, PRIORS
from rbmlab.validation import option

SOLUTION_KEYS = ("tap_a_v", "tap_c_v", "tap_a_h", "tap_c_h")
PRETRAIN_STREAM = 7305  # the key of tap_dbm's pretraining shuffles: (PRETRAIN_STREAM, layer, epoch)


@dataclass
class TapIterationConfig(LearnerConfig):
    """How a TAP learner iterates its fixed points every mini-batch (tap and tap_dbm)."""

    max_iter: int = option(
        10,
        "TAP iterations per mini-batch at most (Fig. 10: 3, 10 and 100 train alike)",
        lo=1,
        hi=UPDATE_STEPS,
        label="TAP iterations per mini-batch",
    )
    tol: float = option(
        1e-8, "stop earlier when the mean-square change is below this", lo=0, label="inference tolerance"
    )
    damping: float = option(0.5, "new ← d·f + (1 − d)·old", lo=0, hi=1, open_lo=True, label="damping")

    def solver_options(self) -> dict:
        return {"damping": self.damping, "tol": self.tol, "max_iter": self.max_iter}


def _tap_solver(value, key: str) -> str:
    if not isinstance(value, str):
        raise RbmlabError(f"{key}: expected a string, got {value!r}")
    if value not in SOLVERS or TapForm not in SOLVERS.get(value).requires:
        tap_solvers = [name for name, cls in SOLVERS.items() if TapForm in cls.requires]
        raise RbmlabError(f"{key}: {value!r} is not a TAP solver; choose one of {', '.join(tap_solvers)}")
    return value


@dataclass
class TapLearnerConfig(TapIterationConfig):
    name: str = option("tap", "learner", label="learner")
    persistent: bool = option(
        False,
        "carry the TAP solutions across mini-batches instead of restarting them at the data",
        label="persistent TAP solutions",
    )
    inference: str = option(
        "tap",
        "the negative phase's fixed points: a TapForm solver "
        "(rbmlab.inference.solvers): tap (Alg. 1) | adatap (VAMP, Alg. 3; binary units) | "
        "nmf (naive mean field: Alg. 1 without the Onsager term)",
        parse=_tap_solver,
        label="negative-phase solver",
    )
    lr_decay: float = option(
        1.0,
        "the step size is lr · lr_decay^epoch (real-MNIST's γ from 1e-2 to 1e-5: 0.933 over 100 epochs)",
        lo=0,
        hi=1,
        open_lo=True,
        label="learning-rate decay",
    )


@dataclass
class TapDBMConfig(TapIterationConfig):  # max_iter: for the free and the clamped solutions
    name: str = option("tap_dbm", "learner", label="learner")
    lr: float = option(
        0.001,
        "step size of joint training (the paper gives only pretraining's)",
        lo=0,
        open_lo=True,
        label="learning rate",
    )
    pretrain_epochs: int = option(
        50,
        "greedy layer-wise TAP epochs per RBM before joint training (Alg. 4; Fig. 11: 50; 0: none)",
        lo=0,
        hi=EPOCHS,
    )
    pretrain_lr: float = option(0.001, "step size of pretraining (Fig. 11)", lo=0, open_lo=True)

    def unread_given(self, model) -> dict[str, str]:
        return pretraining_unread(model, self.pretrain_epochs)


class TapLearning(Learner):
    """One TAP step for every depth (Alg. 2; Alg. 4's joint training and pretraining): free TAP
    solutions from the rows ``x`` (:meth:`free_solutions`), the positive statistics minus the
    free solutions' (:meth:`gradient`: Eqs. 40–42, Eqs. 126–129), the optimizer's update."""

    samples = False  # its negative phase is TAP's fixed points

    def diagnostics(self, state):
        return {"tap_train_iterations": float(state.get("tap_iterations", 0.0))}

    def step_size(self, state) -> float:
        return self.lr

    def step(self, model, state, batch, rng):
        model, state, s = self.ascend(model, state, batch.inputs, self.step_size(state), rng)
        return model, self.recorded(model, state, s)

    def ascend(self, model, state, x, lr: float, rng=None, lo: int = 0, hi: int | None = None):
        """One step on the (sub-)stack of layers lo … hi (None: the top) with ``x`` at layer lo:
        (model, optimizer state, the free solutions)."""
        s = self.free_solutions(model, state, x, rng, lo, hi)
        model, state = self.optimizer.update(model, self.gradient(model, x, s, lo, hi), state, lr)
        return model, state, s

    def recorded(self, model, state, s) -> dict:
        """The state after a step: the free solutions' TAP iterations (on the device: not read)."""
        return {**state, "tap_iterations": model.xp.asarray(s.iterations, dtype=float)}


class TapLearner(TapLearning):
    """TAP learning of an RBM or GRBM (tap paper Alg. 2, Eqs. 40–42): the negative phase is the TAP
    fixed points (Alg. 1) started at the mini-batch's examples, the step the exact clamped term minus
    the TAP free energy's derivative at them.

    Registered as ``tap``; options (``max_iter``, ``tol``, ``damping``, ``persistent``, ``inference``:
    tap or adatap) in :class:`TapLearnerConfig`.
    """

    config_class = TapLearnerConfig
    units = {"visible": PRIORS, "hidden": PRIORS}  # tap Eq. 9: any prior with its cumulants
    generative = True  # an entrant of the cross-paper leaderboard
    entrants = {"adatap": ("learner.inference=adatap",)}  # TAP learning with adaTAP (Alg. 3)
    requires = (TapForm,)
    packs = True  # tests/test_packed.py: tap, adatap and nmf, persistent or not, a decayed rate
    requires_hint = "two layers with priors coupled by W: model=rbm or model=grbm"

    def __init__(self, config):
        super().__init__(config)
        c = self.config
        self.solver = SOLVERS.build(SOLVERS.parse({"name": c.inference, **c.solver_options()}))

    def initial_model(self, model, pretrained: bool, train=None, rng=None):
        self.solver.check(model, "learner.inference")
        return model

    def init_state(self, model, train, rng):
        batch = self.config.batch_size
        per_epoch = 1 if batch == "full" else -(-train.inputs.shape[-2] // batch)
        return {"steps": 0, "batches_per_epoch": per_epoch}  # host counters: no step reads the device

    def step_size(self, state) -> float:
        epoch = int(state["steps"]) // int(state["batches_per_epoch"])
        return self.lr * self.config.lr_decay**epoch

    def free_solutions(self, model, state, x, rng, lo, hi):
        """K = M solutions of the whole two-layer stack by the chosen solver, from x (Eqs. 37–38)
        or, persistent, from the last step's."""
        start = None
        if self.config.persistent and SOLUTION_KEYS[0] in state:
            start = Beliefs(None, None, 0, raw=tap.Solution(*(state[k] for k in SOLUTION_KEYS), 0, None))
        return self.solver.solve(model, x, init=start, runs=isinstance(rng, RunStreams)).raw

    def gradient(self, model, x, s, lo, hi):
        """Eqs. 40–42: the exact clamped data statistics (and prior parameters θ) minus the TAP
        solutions'."""
        return tap.gradient(model.W, *model.tap_layers(), x, s)

    def recorded(self, model, state, s) -> dict:
        state = {
            **super().recorded(model, state, s),
            "tap_chain_iterations": model.xp.asarray(s.chain_iterations, dtype=float),
            "steps": int(state["steps"]) + 1,
        }
        if self.config.persistent:
            state.update(zip(SOLUTION_KEYS, (s.a_v, s.c_v, s.a_h, s.c_h)))
        return state

    def step_cost(self, model, rows, state):
        """The solver's with the chain iterations it ran this step, I (tap: n_v·n_h·(4·I + rows),
        the start's xW dropped when the solutions persist, after the first step; I = rows ·
        iterations until converged chains are set aside; adatap: rbmlab.inference.adatap.solve_cost),
        plus the gradient's (Eqs. 40–42): the data's xW and xᵀE[h|x], the solutions' a_vᵀa_h and
        c_vᵀc_h, 4·rows·n_v·n_h; binary layers only."""
        if any(layer.theta is not None for layer in model.tap_layers()):
            return None
        from_states = not self.config.persistent or int(state["steps"]) == 1
        solve = self.solver.cost(
            model.n_visible, model.n_hidden, rows, int(float(state["tap_chain_iterations"])), from_states
        )
        gradient = 4 * rows * model.n_visible * model.n_hidden
        return total(solve, gradient, self.optimizer.update_cost(model))


class TapDBM(TapLearning):
    """TAP learning of a deep Boltzmann machine (tap paper App. E.2, Alg. 4): greedy layer-wise TAP
    pretraining, then joint training on free and clamped TAP solutions (Eqs. 126–129).

    Registered as ``tap_dbm``; options (``pretrain_epochs``, ``pretrain_lr``, ...) in
    :class:`TapDBMConfig`.
    """

    config_class = TapDBMConfig
    units = {"visible": BERNOULLI, "hidden": BERNOULLI}  # tap App. E: {0, 1} units on every layer
    requires = (TapStack,)
    requires_hint = "layers coupled only to their neighbours: model=dbm"

    def initial_model(self, model, pretrained: bool, train=None, rng=None):
        cfg = self.config
        if pretrained or not cfg.pretrain_epochs or train is None:
            return model

        def ascend(model, state, rows, l):
            return self.ascend(model, state, rows, cfg.pretrain_lr, lo=l - 1, hi=l)[:2]

        def means(model, h, l):  # H^(l): conditional means
            layers, couplings = model.tap_stack()
            product = h @ couplings[l - 1]
            return layers[l].moments(product, 0.0 * product)[0]

        return greedy.pretrain(
            model,
            train.inputs.astype(model.dtype),
            depth=len(model.tap_stack()[1]),
            epochs=cfg.pretrain_epochs,
            batch_size=cfg.batch_size,
            stream=PRETRAIN_STREAM,
            ascend=ascend,
            means=means,
        )

    def init_state(self, model, train, rng):
        return {"tap_iterations": model.xp.asarray(0.0)}

    @staticmethod
    def _part(model, lo: int, hi: int | None):
        """(layers lo … hi, couplings W_{lo+1} … W_hi) of the model's stack (hi None: the top)."""
        layers, couplings = model.tap_stack()
        return layers[lo : None if hi is None else hi + 1], couplings[lo:hi]

    def free_solutions(self, model, state, x, rng, lo, hi):
        """K = M free solutions of layers lo … hi from x at layer lo (a_lo = x, c_lo = 0)."""
        layers, couplings = self._part(model, lo, hi)
        return tap.solve_layers(couplings, layers, x, **self.config.solver_options())

    def gradient(self, model, x, s, lo, hi):
        """Eqs. 126–129 on layers lo … hi: the clamped solutions' statistics (layer lo held at x)
        minus the free ones', by parameter name (b_lo learned only when lo = 0)."""
        layers, couplings = self._part(model, lo, hi)
        clamped = tap.clamped_layers(couplings, layers, x, **self.config.solver_options())
        dW, dU = tap.stack_gradient(couplings, clamped, s)
        grad = {f"W{lo + l}": g for l, g in enumerate(dW, 1)}
        grad.update((f"b{lo + l}", g) for l, g in enumerate(dU) if lo == 0 or l)
        return grad
