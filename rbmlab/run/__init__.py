"""Running a job and keeping its records: the training loop (``runner``), the evaluation step
(``evaluation``), early stopping (``early_stopping``), the starting model of ``model.init``
(``pretrained``), the run directory's files (``records``, ``checkpoint``, ``outputs``), their
safety (``locking``, ``fileio``, ``faults``) and where a run came from (``provenance``). Above the
numerical layers (backend, models, inference, learners, evaluators, data) and config; below the
entry points (hydra_app, evaluate, experiment, cli)."""
