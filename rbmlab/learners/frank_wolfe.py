"""Frank-Wolfe for infinite RBMs (Ping, Liu & Ihler 2016, Algorithm 1): one hidden unit per pass.

The infinite RBM (frank_wolfe Eq. 5) replaces the sum over hidden units by α E_q[softplus(wᵀv)]
with q a distribution over weight vectors; the hidden bias is the weight of a constant visible
unit. Frank-Wolfe on q with step β_t = 1/t keeps q_t = (1/t) Σ_s δ(w_s), and with the temperature
α_t = t the model is exactly the RBM with hidden units w_1 … w_t (Prop. 3.1). So each call of
:meth:`FrankWolfe.step` (one pass over the whole training set; ``batch_size: full``) is

    1. advance S persistent chains by ``sample_steps`` sweeps: samples of p(v | q_{t−1}, ϑ_{t−1})
    2. w_t = the linear oracle's solution (Eq. 9, L-BFGS-B: rbmlab.learners.frank_wolfe_oracle)
    3. q_t = (1 − 1/t) q_{t−1} + (1/t) δ(w_t), α_t = t: append w_t as a hidden unit (or, as a
       control, s·w_t with s ≤ 1 from a line search: ``step: line_search``,
       rbmlab.learners.frank_wolfe_step)
    4. the visible bias b refitted (Eq. 10) with M persistent chains: to convergence by default
       (``bias_fit: converge``), or ``bias_steps`` plain ascent steps (``bias_fit: fixed``);
       rbmlab.learners.frank_wolfe_bias

The oracle's S chains and the bias loop's M chains are two pools (Alg. 1 draws them at line 3 and in
the loop of lines 7–10); ``chain_pool: one`` makes them one pool of S chains, so the oracle reads
the chains the last bias fit left at the refitted model (a control).

The temperature: α_t = t (``alpha: t``, Alg. 1 line 6) or learned by gradient ascent on ∇_α L
beside the bias (``alpha: learned``, step ``alpha_lr``; rbmlab.learners.frank_wolfe_temperature).
A learned α makes the fractional RBM of Sec. 3.3 (coefficients c_i = α/t ≠ 1), so it needs
``model=fractional_rbm``; its model samples, for the oracle and for the bias and α gradients, are
then Sec. 3.3's Metropolis–Hastings steps (that family's sampler, rbmlab.inference.fractional_mh),
which are block Gibbs exactly while every c_i = 1.

A fresh run starts from q_0 with no units (the random w' of Alg. 1 has weight 1 − 1/1 = 0 at
t = 1, so it only shapes the first samples; with no units they come from the bias-only model);
``model.init=<checkpoint>`` starts from a trained RBM whose units become q's first atoms
(α = |h|, continuing at t = |h| + 1; Sec. 3.2). The model grows during training: metrics.csv
records ``n_hidden`` per row, and checkpoints hold the model at whatever size it has reached.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.errors import RbmlabError
from rbmlab.learners.base import Learner, LearnerConfig, total
from rbmlab.learners.frank_wolfe_bias import fisher_step_cost, fit_to_convergence
from rbmlab.learners.frank_wolfe_oracle import LinearOracle, solve
from rbmlab.learners.frank_wolfe_step import POINTS, line_search
from rbmlab.learners.frank_wolfe_temperature import TemperatureAscent, next_coefficients
from rbmlab.limits import CHAINS, EXAMPLES, REPEATS, UPDATE_STEPS
from rbmlab.models.base import Bipartite, FractionalUnits, supports
from rbmlab.units.requirements import BERNOULLI
from rbmlab.validation import invalid, option


@dataclass
class FrankWolfeConfig(LearnerConfig):
    name: str = option("frank_wolfe", "learner", label="learner")
    lr: float = option(
        0.02,
        "η: step of the plain visible-bias ascent (Alg. 1, Eq. 10) of bias_fit=fixed",
        lo=0,
        open_lo=True,
        label="learning rate",
    )
    batch_size: int | str = option(
        "full",
        "must be full: one unit per pass over the training set",
        lo=1,
        hi=EXAMPLES,
        choices=("full",),
        label="mini-batch size",
    )
    lam: float = option(
        0.5,
        "λ: the ℓ2 penalty (λ/2)‖w‖² of the oracle (Eq. 6, Alg. 1); 0.5: the "
        "paper's grid's best on Caltech validation (results/frank_wolfe)",
        lo=0,
        label="penalty λ",
    )
    lambda_scaling: str = option(
        "constant",
        "constant: λ as in Alg. 1 | over_t: λ/t, Eq. 8's scaling (Eq. 8 has α_t on the data terms only)",
        choices=("constant", "over_t"),
        label="λ scaling",
    )
    penalize_bias: bool = option(
        True, "penalise the hidden bias (the constant unit's weight) too", label="penalise hidden bias"
    )
    n_samples: int = option(
        1000,
        "S: persistent chains whose states stand for the model in the oracle",
        lo=1,
        hi=CHAINS,
        label="oracle chains (S)",
    )
    sample_steps: int = option(
        20,
        "block-Gibbs sweeps of those chains before each oracle call",
        lo=1,
        hi=UPDATE_STEPS,
        label="Gibbs sweeps per oracle call",
    )
    restarts: int = option(
        3,
        "L-BFGS-B runs from random non-zero starts; the best is kept",
        lo=1,
        hi=REPEATS,
        label="L-BFGS-B restarts",
    )
    init_std: float = option(
        0.01, "starts w ~ N(0, init_std²)", lo=0, open_lo=True, label="oracle initial weight std"
    )
    maxiter: int = option(
        200, "L-BFGS-B iterations per run", lo=1, hi=UPDATE_STEPS, label="L-BFGS-B iterations"
    )
    gtol: float = option(
        1e-5, "L-BFGS-B projected-gradient tolerance", lo=0, open_lo=True, label="L-BFGS-B gradient tolerance"
    )
    step: str = option(
        "whole",
        "whole: the oracle's unit with coefficient 1 (Alg. 1 line 5) | "
        "line_search: the unit scaled by the s ≤ 1 that maximises the Monte-Carlo "
        "estimate of the penalised objective's change (a control; "
        "rbmlab.learners.frank_wolfe_step)",
        choices=("whole", "line_search"),
        neutral="whole",
        label="Frank-Wolfe step",
    )
    step_points: int = option(
        POINTS,
        "line_search: scales 1, 2^(-1/2), 2^(-1), ... tried",
        lo=1,
        hi=60,
        neutral=POINTS,
        label="line-search points",
    )
    bias_fit: str = option(
        "converge",
        "the loop of Alg. 1 lines 7–10 after each unit: converge: Fisher "
        "steps until the data − model residual is at its Monte-Carlo floor, then "
        "averaged | fixed: bias_steps plain steps of size lr",
        choices=("converge", "fixed"),
        label="bias fit",
    )
    bias_steps: int = option(
        500,
        "K: plain ascent steps after each new unit (bias_fit=fixed)",
        lo=0,
        hi=UPDATE_STEPS,
        label="bias steps (K)",
    )
    bias_lr: float = option(
        0.5,
        "converge: damping of the Fisher step (≤ 1; along weakly correlated "
        "pixels 1 is about half a Newton step)",
        lo=0,
        hi=1,
        open_lo=True,
        label="bias step damping",
    )
    bias_tol: float = option(
        1.0,
        "converge: stop descending when the residual's mean z² (1 at the "
        "noise floor) is ≤ 1 + bias_tol over bias_window steps (or stops falling "
        "at the smallest step: fw_bias_plateau counts those)",
        lo=0,
        open_lo=True,
        label="bias tolerance",
    )
    bias_window: int = option(
        10, "converge: steps the stopping rule averages z² over", lo=1, hi=UPDATE_STEPS, label="bias window"
    )
    bias_average: int = option(
        100,
        "converge: iterates averaged after the rule holds, at least (0: none)",
        lo=0,
        hi=UPDATE_STEPS,
        label="bias averaging steps",
    )
    bias_rhat: float = option(
        1.1,
        "converge: the averaging goes on until the chains' R̂ over it is ≤ this "
        "(they have mixed: the model means are not one mode's)",
        lo=1,
        open_lo=True,
        label="bias R̂ threshold",
    )
    bias_max_steps: int = option(
        2000,
        "converge: cap on descent + averaging; units that hit it are counted (fw_bias_capped)",
        lo=1,
        hi=UPDATE_STEPS,
        label="bias steps cap",
    )
    bias_chains: int = option(
        100, "M: persistent chains of the bias steps", lo=2, hi=CHAINS, label="bias chains (M)"
    )
    bias_sweeps: int = option(
        1,
        "block-Gibbs sweeps of those chains per bias step",
        lo=1,
        hi=UPDATE_STEPS,
        label="Gibbs sweeps per bias step",
    )
    chain_pool: str = option(
        "two",
        "two: the oracle's S chains (Alg. 1 line 3) and the bias loop's "
        "M chains (the loop of lines 7–10) are separate pools | one: one pool of S chains serves "
        "both (bias_chains must equal n_samples), so the oracle reads the chains "
        "the last bias fit left (a control)",
        choices=("two", "one"),
        neutral="two",
        label="chain pools",
    )
    step_bias: str = option(
        "held",
        "line_search: held: each scale scored with the visible bias held | "
        "refit: each scale's unit appended and the bias loop run, the scale scored "
        "with its refitted bias and the chosen scale's fit kept (a control; "
        "rbmlab.learners.frank_wolfe_step)",
        choices=("held", "refit"),
        neutral="held",
        label="line-search bias",
    )
    alpha: str = option(
        "t",
        "the temperature: t: α_t = t (Alg. 1 line 6; the RBM of the t units, "
        "Prop. 3.1) | learned: gradient ascent on ∇_α L (Appendix) with the bias, "
        "a fractional RBM (Sec. 3.3; model=fractional_rbm)",
        choices=("t", "learned"),
        neutral="t",
        label="temperature α",
    )
    alpha_lr: float | None = option(
        None,
        "alpha=learned: the step η_α of α ← α + η_α ∇_α L, one per "
        "bias step (0: α stays at its start, α_t = t from c = 1); refused "
        "with alpha=t",
        lo=0,
        neutral=None,
        label="α step size",
    )

    def check(self) -> None:
        if self.bias_max_steps < self.bias_window:
            raise invalid(
                "bias_max_steps",
                f"{self.bias_max_steps} is fewer than bias_window="
                f"{self.bias_window}: the stopping rule would never be judged",
            )
        if self.alpha == "t" and self.alpha_lr is not None:
            raise invalid(
                "alpha_lr",
                "applies to alpha=learned only (alpha=t sets α_t = t, Alg. 1 "
                "line 6); remove it or set learner.alpha=learned",
            )
        if self.alpha == "learned" and self.alpha_lr is None:
            raise invalid(
                "alpha_lr", "alpha=learned needs the step of its gradient ascent, e.g. learner.alpha_lr=1.0"
            )
        if self.step != "line_search" and self.step_points != POINTS:
            raise invalid(
                "step_points",
                "applies to step=line_search only (Alg. 1's whole step "
                "tries no scales); remove it or set learner.step=line_search",
            )
        if self.step_bias == "refit" and self.step != "line_search":
            raise invalid(
                "step_bias",
                "applies to step=line_search only (Alg. 1's whole step scores "
                "no scale); remove it or set learner.step=line_search",
            )
        if self.step_bias == "refit" and self.bias_fit == "fixed" and self.bias_steps == 0:
            raise invalid(
                "step_bias",
                "refit scores each scale with its refitted bias, but "
                "bias_fit=fixed with bias_steps=0 refits nothing (the held search)",
            )
        if self.alpha == "learned" and self.step == "line_search":
            raise invalid(
                "step",
                "line_search scores a unit of coefficient s in Eq. 12's RBM form; "
                "it is not written for alpha=learned (use step=whole)",
            )
        if self.chain_pool == "one" and self.bias_chains != self.n_samples:
            raise invalid(
                "bias_chains",
                f"chain_pool=one: one pool of n_samples={self.n_samples} "
                f"chains serves the oracle and the bias loop, so bias_chains must equal it "
                f"(got {self.bias_chains})",
            )
        if self.batch_size != "full":
            raise invalid(
                "batch_size",
                "frank_wolfe adds one hidden unit per pass over the whole "
                f"training set (Alg. 1); must be full, got {self.batch_size!r}",
            )

    def model_unread(self, model) -> dict[str, str]:
        """A model it starts from scratch (no model.init) is replaced by the one without hidden
        units (Alg. 1 grows them, one an epoch): the initial units' options are never read."""
        if getattr(model, "init", None):
            return {}
        why = "frank_wolfe grows its hidden units from none, one an epoch (Alg. 1): no initial one is made"
        keys = ("n_hidden", "weight_std", "hidden_bias", "coefficient")
        return {k: why for k in keys if k in model.__dataclass_fields__}

    def unread(self) -> dict[str, str]:
        """Each bias fit's options are the other's unread ones: converge's Fisher steps read none of
        fixed's plain step (lr, the optimizer, bias_steps), fixed's steps none of converge's rule."""
        if self.bias_fit == "converge":
            return dict.fromkeys(
                FIXED_ONLY,
                "applies to bias_fit=fixed only (its plain bias steps); bias_fit=converge does not read it",
            )
        return dict.fromkeys(
            CONVERGE_ONLY,
            "applies to bias_fit=converge only (its stopping rule); bias_fit=fixed does not read it",
        )


# the options only one bias fit reads (Alg. 1 lines 7-10 as bias_fit=fixed, or our converge rule)
FIXED_ONLY = ("lr", "optimizer", "bias_steps")
CONVERGE_ONLY = ("bias_lr", "bias_tol", "bias_window", "bias_average", "bias_rhat", "bias_max_steps")


def oracle_pool(chain_pool: str) -> str:
    """The state key of the chains the oracle reads under ``learner.chain_pool``: its own pool
    (two), or the bias loop's (one)."""
    return "chains" if chain_pool == "two" else "bias_chains"


def append_unit(model, w, alpha: str = "t"):
    """The model of q_t = (1 − 1/t) q_{t−1} + (1/t) δ(w): one more hidden unit, whose weights are
    ``w[:-1]`` and whose bias is ``w[-1]`` (the constant visible unit's weight). An RBM is the
    model at α_t = t; a fractional RBM's coefficients follow the rule ``alpha`` (t or learned,
    rbmlab.learners.frank_wolfe_temperature.next_coefficients)."""
    xp = model.xp
    w = xp.asarray(w, dtype=model.dtype)
    grown = {"W": xp.concatenate([model.W, w[:-1, None]], axis=1), "b_h": xp.concatenate([model.b_h, w[-1:]])}
    if supports(type(model), FractionalUnits):
        grown["c"] = next_coefficients(model.c, alpha)
    return model.replace(**grown)


def units(model, keep: slice):
    """The model with the hidden units ``keep`` only (their coefficients too, if it has them)."""
    kept = {"W": model.W[..., keep], "b_h": model.b_h[..., keep]}
    if supports(type(model), FractionalUnits):
        kept["c"] = model.c[..., keep]
    return model.replace(**kept)


def without_units(model):
    """The model with no hidden units: q_0 of a fresh run (only the visible bias remains)."""
    return units(model, slice(0, 0))


class FrankWolfe(Learner):
    """Frank-Wolfe learning of an infinite RBM (Ping, Liu & Ihler 2016, frank_wolfe Algorithm 1): each
    step (one pass over the training set) adds one hidden unit, the linear oracle's solution (Eq. 9),
    and refits the visible bias (Eq. 10).

    Registered as ``frank_wolfe``; options (``step``, ``bias_fit``, ``alpha``, ``chain_pool``, ...) in
    :class:`FrankWolfeConfig`.
    """

    config_class = FrankWolfeConfig
    generative = True  # an entrant of the cross-paper leaderboard
    requires = ()
    requires_one_of = (Bipartite, FractionalUnits)  # model=rbm, or model=fractional_rbm
    requires_hint = "an RBM's units, or model=fractional_rbm's"
    units = {"visible": BERNOULLI, "hidden": BERNOULLI}  # the softplus of Eq. 5
    grows = ("n_hidden",)
    trains_trials = False  # each model grows by its own oracle solves

    def check(self, model_class: type) -> None:
        super().check(model_class)
        if self.config.alpha == "learned" and not supports(model_class, FractionalUnits):
            raise RbmlabError(
                f"learner=frank_wolfe: learner.alpha=learned makes a fractional RBM "
                f"(Sec. 3.3: c_i = α/t ≠ 1), which model {model_class.family} cannot "
                "hold; use model=fractional_rbm"
            )

    def sizes_reached(self, sizes, epochs, pretrained):
        """One unit an epoch (Alg. 1), on the checkpoint's units or on none."""
        return {**sizes, "n_hidden": (sizes["n_hidden"] if pretrained else 0) + epochs}

    def initial_model(self, model, pretrained: bool, train=None, rng=None):
        if (model.visible, model.hidden) != ("bernoulli", "bernoulli"):
            raise RbmlabError(
                "model: frank_wolfe is written for Bernoulli {0, 1} units (the "
                f"softplus of Eq. 5); got visible={model.visible}, hidden={model.hidden}"
            )
        return model if pretrained else without_units(model)

    def _chains(self, model, n: int, rng):
        """``n`` states drawn from the visible biases alone (the model without its units)."""
        logits = model.xp.broadcast_to(model.b_v, (n, model.n_visible)).copy()
        return model.visible_units.sample_(logits, rng)

    def init_state(self, model, train, rng):
        xp = model.xp
        fractional = (
            {"alpha": xp.asarray(float(model.c.sum())), "mh_accept": xp.asarray(float("nan"))}
            if supports(type(model), FractionalUnits)
            else {}
        )
        pools = {}  # the oracle's own pool first: two pools draw as before chain_pool existed
        if self.config.chain_pool == "two":
            pools["chains"] = self._chains(model, self.config.n_samples, rng)
        pools["bias_chains"] = self._chains(model, self.config.bias_chains, rng)
        return {
            **fractional,
            **pools,
            "oracle_gain": xp.asarray(0.0),
            "oracle_evaluations": xp.asarray(0),
            "step_scale": xp.asarray(1.0),
            "bias_steps": xp.asarray(0),
            "bias_z2": xp.asarray(float("nan")),
            "bias_rhat": xp.asarray(float("nan")),
            "bias_capped": xp.asarray(0),
            "bias_plateau": xp.asarray(0),
        }

    def step(self, model, state, batch, rng):
        cfg, xp = self.config, model.xp
        x = batch.inputs
        t = model.n_hidden + 1  # q_{t−1} has one atom per unit (α_{t−1} = t − 1)
        pool = oracle_pool(cfg.chain_pool)
        chains = self.sample(model, state[pool], rng, cfg.sample_steps)  # p(v | q_{t−1}, ϑ_{t−1})
        lam = cfg.lam / t if cfg.lambda_scaling == "over_t" else cfg.lam
        oracle = LinearOracle(x, chains, lam=lam, penalize_bias=cfg.penalize_bias)
        best = solve(
            oracle,
            getattr(rng, "host_keys", rng),
            restarts=cfg.restarts,
            init_std=cfg.init_std,
            maxiter=cfg.maxiter,
            gtol=cfg.gtol,
        )
        state = {
            **state,
            pool: chains,
            "oracle_gain": xp.asarray(-best.value),
            "oracle_evaluations": xp.asarray(best.evaluations),
        }
        if cfg.step_bias == "refit":  # check(): only with step=line_search
            return self._refitted_line_search(model, state, x, chains, best.w, lam, rng)
        scale = 1.0
        if cfg.step == "line_search":
            scale = line_search(
                x, chains, best.w, lam=lam, penalize_bias=cfg.penalize_bias, points=cfg.step_points
            ).scale
        model = append_unit(model, scale * best.w, cfg.alpha)
        state = {**state, "step_scale": xp.asarray(scale)}
        ascent = TemperatureAscent(model, x, cfg.alpha_lr) if cfg.alpha == "learned" else None
        return self.fit_visible_bias(model, state, x.mean(axis=0), rng, ascent)

    def _refitted_line_search(self, model, state, x, chains, w, lam, rng):
        """``step_bias: refit``: for each scale s of the line search, the unit s·w appended and the
        visible bias refitted by the loop of Alg. 1 lines 7–10 (each from the same bias chains);
        s scored with its refitted bias (frank_wolfe_step.line_search's ``shift``) and the chosen
        scale's fitted model kept. ``search_bias_steps`` tallies every candidate's bias steps."""
        xp, data_mean, fits = model.xp, x.mean(axis=0), {}

        def shift(s: float):
            grown = append_unit(model, s * w, self.config.alpha)
            fits[s] = self.fit_visible_bias(grown, {**state, "step_scale": xp.asarray(s)}, data_mean, rng)
            return fits[s][0].b_v - model.b_v

        scale = line_search(
            x,
            chains,
            w,
            lam=lam,
            penalize_bias=self.config.penalize_bias,
            points=self.config.step_points,
            shift=shift,
        ).scale
        fitted, chosen = fits[scale]
        searched = sum(int(f[1]["bias_steps"]) for f in fits.values())
        return fitted, {**chosen, "search_bias_steps": xp.asarray(searched)}

    def fit_visible_bias(self, model, state, data_mean, rng, ascent=None):
        """Alg. 1 lines 7–10: b ← b + η (mean of the data − mean of M model samples), repeated
        to convergence (``bias_fit: converge``) or K times (``fixed``); with ``ascent`` (a
        TemperatureAscent: alpha=learned) one step of α on the same samples before each b step."""
        cfg, xp = self.config, model.xp
        chains = state["bias_chains"]
        current, accepted = [model], []

        def advance(b, chains):
            """The chains a bias step reads, then α's step on them (learned α)."""
            chains = self.sample(current[0].replace(b_v=b), chains, rng, cfg.bias_sweeps)
            accepted.append(getattr(self.sampler_for(type(model)), "acceptance", float("nan")))
            if ascent is not None:
                current[0] = ascent.step(current[0].replace(b_v=b), chains)
            return chains

        if cfg.bias_fit == "fixed":
            for _ in range(cfg.bias_steps):
                chains = advance(current[0].b_v, chains)
                current[0], state = self.update(current[0], {"b_v": data_mean - chains.mean(axis=0)}, state)
            return self._fitted(
                current[0],
                {**state, "bias_chains": chains, "bias_steps": xp.asarray(cfg.bias_steps)},
                accepted,
            )
        b, chains, fit = fit_to_convergence(
            model.b_v,
            chains,
            data_mean,
            advance,
            lr=cfg.bias_lr,
            tol=cfg.bias_tol,
            window=cfg.bias_window,
            average=cfg.bias_average,
            rhat=cfg.bias_rhat,
            max_steps=cfg.bias_max_steps,
        )
        return self._fitted(
            current[0].replace(b_v=b),
            {
                **state,
                "bias_chains": chains,
                "bias_steps": xp.asarray(fit.steps),
                "bias_z2": xp.asarray(fit.z2),
                "bias_rhat": xp.asarray(fit.rhat),
                "bias_capped": state["bias_capped"] + (not fit.converged),
                "bias_plateau": state["bias_plateau"] + fit.plateau,
            },
            accepted,
        )

    @staticmethod
    def _fitted(model, state, accepted):
        """The fitted model and state; a fractional RBM's α and its sampler's mean acceptance over
        the bias loop recorded in the state."""
        if "alpha" in state:
            xp = model.xp
            rate = sum(accepted) / len(accepted) if accepted else float("nan")
            state = {
                **state,
                "alpha": xp.asarray(float(model.c.sum(dtype=xp.float64))),
                "mh_accept": xp.asarray(rate),
            }
        return model, state

    def step_cost(self, model, rows, state):
        """From the tallies the step left in ``state`` (t = n_hidden after it, S oracle chains, M
        bias chains, N = ``rows``): the S chains' sample_steps block-Gibbs sweeps with t − 1 units,
        2·S·n_v·(t − 1)·sample_steps; per oracle evaluation (f and ∇f, Eq. 9) vu and σᵀv over
        the chains and the data and the penalty's ‖w‖², 2·(S + N)·n_v + n_v + 1; the line
        search's vu over both and ‖w‖², (S + N + 1)·n_v + 1 (with ``step_bias=refit``, each point's
        δ·v over both, (S + N)·n_v, and every candidate's bias steps below); per
        bias step the M chains' bias_sweeps sweeps with t units, 2·M·n_v·t·bias_sweeps, and with
        ``bias_fit=converge`` its Fisher step (frank_wolfe_bias.fisher_step_cost). The sweeps are
        the sampler's declared cost (a fractional RBM's Metropolis–Hastings steps: one product
        more per run). With ``alpha=learned``, ∇_α's data term, N·t·(n_v + 1), and per bias step
        its model term, M·t·(n_v + 1). Not counted:
        L-BFGS-B's own vector updates (in its Fortran)."""
        cfg = self.config
        n_v = model.n_visible
        n_chains, n_bias = state[oracle_pool(cfg.chain_pool)].shape[-2], state["bias_chains"].shape[-2]
        before = units(model, slice(0, -1))  # q_{t−1}
        per_bias_step = [
            self.sampler_cost(model, n_bias, cfg.bias_sweeps),
            fisher_step_cost(n_bias, n_v) if cfg.bias_fit == "converge" else 0.0,
        ]
        if None in per_bias_step:
            return None
        oracle = (2 * (n_chains + rows) * n_v + n_v + 1) * int(state["oracle_evaluations"])
        search = (n_chains + rows + 1) * n_v + 1 if cfg.step == "line_search" else 0
        refit = cfg.step_bias == "refit"  # check(): only with step=line_search
        if refit:
            search += cfg.step_points * (n_chains + rows) * n_v
        bias_steps = int(state["search_bias_steps"] if refit else state["bias_steps"])
        if cfg.alpha == "learned":  # ∇_α's data term once, its model term per bias step
            per_bias_step.append(TemperatureAscent.cost(n_bias, model))
        alpha = TemperatureAscent.cost(rows, model) if cfg.alpha == "learned" else 0.0
        return total(
            self.sampler_cost(before, n_chains, cfg.sample_steps),
            oracle,
            search,
            alpha,
            bias_steps * sum(per_bias_step),
            (self.update_cost(model, bias_steps) if cfg.bias_fit == "fixed" else 0.0),
        )

    def diagnostics(self, state) -> dict[str, float]:
        """The last oracle's linearised gain −f(w_t) (≥ 0: an ascent direction) and its cost; the
        last bias fit's steps, residual z² (≈ 1: at the noise floor) and R̂, how many units' fits
        hit ``bias_max_steps`` so far and how many ended their descent on a plateau above the floor;
        the scale the last unit entered with (1 unless ``step=line_search``); for a fractional RBM
        its temperature α = Σ c_i and the mean acceptance of its Metropolis–Hastings steps over
        the last bias loop (1 while every c_i = 1)."""
        fractional = (
            {"fw_alpha": float(state["alpha"]), "fw_mh_accept": float(state["mh_accept"])}
            if "alpha" in state
            else {}
        )
        return {
            **fractional,
            "fw_oracle_gain": float(state["oracle_gain"]),
            "fw_oracle_evaluations": float(state["oracle_evaluations"]),
            "fw_step_scale": float(state.get("step_scale", 1.0)),
            "fw_bias_steps": float(state["bias_steps"]),
            "fw_bias_z2": float(state["bias_z2"]),
            "fw_bias_rhat": float(state["bias_rhat"]),
            "fw_bias_capped": float(state["bias_capped"]),
            "fw_bias_plateau": float(state["bias_plateau"]),
        }
