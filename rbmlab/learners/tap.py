"""TAP learning (tap paper Alg. 2): the negative phase is a set of TAP fixed points, not samples.

Every mini-batch of M examples starts K = M TAP solutions at the examples themselves (a^v = x,
c^v = 0; Eqs. 37–38, Table 1's K = M), iterates Alg. 1 with damping for at most ``max_iter``
iterations (or until the mean-square change is below ``tol``), and ascends the TAP
log-likelihood: the exact clamped data term minus the derivative of the TAP free energy at the
solutions, averaged over all K (Eqs. 40–42; all K rather than the unique ones is our reading).
``persistent=true`` instead carries the solutions from one mini-batch to the next (the NIPS 2015
predecessor's option; the paper itself restarts from data). ``inference=adatap`` finds the fixed
points by VAMP instead (App. D, Fig. 10). Table 1's momentum η = 0.5 on W only and ℓ2 decay ε are
the optimizer's (``learner.optimizer.momentum``, ``momentum_on: interactions``, ``weight_decay``).

Packed runs (rbmlab.run.packed): every array with a leading run axis, each run's K solutions
iterated as that run's alone (the solver's ``runs``), its step at its own rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend.run_streams import RunStreams
from rbmlab.errors import RbmlabError
from rbmlab.inference import tap
from rbmlab.inference.solvers import SOLVERS
from rbmlab.inference.solvers.base import Beliefs
from rbmlab.learners.base import Learner, LearnerConfig, total
from rbmlab.limits import UPDATE_STEPS
from rbmlab.models.base import TapForm
from rbmlab.units.requirements import PRIORS
from rbmlab.validation import option

SOLUTION_KEYS = ("tap_a_v", "tap_c_v", "tap_a_h", "tap_c_h")


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


class TapLearner(Learner):
    config_class = TapLearnerConfig
    units = {"visible": PRIORS, "hidden": PRIORS}  # tap Eq. 9: any prior with its cumulants
    generative = True  # an entrant of the cross-paper leaderboard
    entrants = {"adatap": ("learner.inference=adatap",)}  # TAP learning with adaTAP (Alg. 3)
    requires = (TapForm,)
    samples = False  # its negative phase is TAP's fixed points
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

    def diagnostics(self, state):
        return {"tap_train_iterations": float(state.get("tap_iterations", 0.0))}

    def step_size(self, state) -> float:
        epoch = int(state["steps"]) // int(state["batches_per_epoch"])
        return self.lr * self.config.lr_decay**epoch

    def step(self, model, state, batch, rng):
        cfg, x = self.config, batch.inputs
        start = None
        if cfg.persistent and SOLUTION_KEYS[0] in state:
            start = Beliefs(None, None, 0, raw=tap.Solution(*(state[k] for k in SOLUTION_KEYS), 0, None))
        s = self.solver.solve(model, x, init=start, runs=isinstance(rng, RunStreams)).raw
        grad = tap.gradient(model.W, *model.tap_layers(), x, s)
        model, state = self.optimizer.update(model, grad, state, self.step_size(state))
        state = {
            **state,
            "tap_iterations": model.xp.asarray(s.iterations, dtype=float),  # on the device: not read
            "tap_chain_iterations": model.xp.asarray(s.chain_iterations, dtype=float),
            "steps": int(state["steps"]) + 1,
        }
        if cfg.persistent:
            state.update(zip(SOLUTION_KEYS, (s.a_v, s.c_v, s.a_h, s.c_h)))
        return model, state

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
