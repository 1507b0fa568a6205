"""Learners, by name. Each module holds one learner: its config dataclass and its step.
`ssd` is CD-K with the spectral optimizer (conf/learner/ssd.yaml); `tap` and `tap_dbm` are TAP
learning at two layers and at three or more (learners/tap.py: one step for every depth)."""

from rbmlab.registry import Registry

LEARNERS = Registry(
    "learner",
    {
        "cd": "rbmlab.learners.cd:CD",
        "pcd": "rbmlab.learners.pcd:PCD",
        "reset": "rbmlab.learners.reset:Reset",
        "sdcp": "rbmlab.learners.sdcp:SDCP",
        "csdcp": "rbmlab.learners.csdcp:CSDCP",
        "cg": "rbmlab.learners.cg:CG",
        "ssd": "rbmlab.learners.cd:CD",
        "frank_wolfe": "rbmlab.learners.frank_wolfe:FrankWolfe",
        "logistic": "rbmlab.learners.logistic:Logistic",
        "mle_bp": "rbmlab.learners.mle_bp:MLEBP",
        "mle_mf": "rbmlab.learners.mle_mf:MLEMF",
        "conditional_cd": "rbmlab.learners.conditional_cd:ConditionalCD",
        "cd_percloss": "rbmlab.learners.conditional_cd:CDPercLoss",
        "mssvm": "rbmlab.learners.max_margin:MSSVM",
        "lssvm": "rbmlab.learners.max_margin:LSSVM",
        "tap": "rbmlab.learners.tap:TapLearner",
        "tap_dbm": "rbmlab.learners.tap:TapDBM",
        "bethe": "rbmlab.learners.bethe:Bethe",
    },
)
