"""TAP learning of a deep Boltzmann machine (tap paper App. E.2, Alg. 4): greedy layer-wise
pretraining, then joint training, all on TAP solutions (rbmlab.inference.tap: its stack functions).

Joint training: each mini-batch X^B of M examples gets K = M free TAP solutions started at its
examples (a_0 = x, c_0 = 0) and M clamped ones (layer 0 held at x), each at most ``max_iter``
damped iterations (fewer once the mean-square change is below ``tol``), and one step on every
W_l and b_l along Eqs. 126–129. Alg. 4 shows plain SGD (no momentum, no decay): the default
optimizer is sgd with momentum 0.

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

from rbmlab.inference import tap
from rbmlab.learners import greedy
from rbmlab.learners.base import Learner, pretraining_unread
from rbmlab.learners.tap import TapIterationConfig
from rbmlab.limits import EPOCHS
from rbmlab.models.base import TapStack
from rbmlab.units.requirements import BERNOULLI
from rbmlab.validation import option

PRETRAIN_STREAM = 7305  # the key of pretraining's shuffles: (PRETRAIN_STREAM, layer, epoch)


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


class TapDBM(Learner):
    config_class = TapDBMConfig
    units = {"visible": BERNOULLI, "hidden": BERNOULLI}  # tap App. E: {0, 1} units on every layer
    requires = (TapStack,)
    samples = False  # its negative phase is TAP's fixed points
    requires_hint = "layers coupled only to their neighbours: model=dbm"

    def initial_model(self, model, pretrained: bool, train=None, rng=None):
        cfg = self.config
        if pretrained or not cfg.pretrain_epochs or train is None:
            return model

        def ascend(model, state, rows, l):
            return self._ascend(model, state, rows, l - 1, l, cfg.pretrain_lr)[:2]

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

    def diagnostics(self, state):
        return {"tap_train_iterations": float(state["tap_iterations"])}

    def step(self, model, state, batch, rng):
        model, state, iterations = self._ascend(model, state, batch.inputs, 0, None, self.config.lr)
        return model, {**state, "tap_iterations": model.xp.asarray(float(iterations))}

    def _ascend(self, model, state, x, lo: int, hi: int | None, lr: float):
        """One step on the sub-stack of layers lo … hi (None: the top) with ``x`` at layer lo: K = M
        free and M clamped TAP solutions from x, Eqs. 126–129 (b_lo learned only when lo = 0);
        (model, optimizer state, free TAP iterations)."""
        cfg = self.config
        layers, couplings = model.tap_stack()
        layers, couplings = layers[lo : None if hi is None else hi + 1], couplings[lo:hi]
        options = cfg.solver_options()
        free = tap.solve_layers(couplings, layers, x, **options)
        dW, dU = tap.stack_gradient(couplings, tap.clamped_layers(couplings, layers, x, **options), free)
        grad = {f"W{lo + l}": g for l, g in enumerate(dW, 1)}
        grad.update((f"b{lo + l}", g) for l, g in enumerate(dU) if lo == 0 or l)
        model, state = self.optimizer.update(model, grad, state, lr)
        return model, state, free.iterations
