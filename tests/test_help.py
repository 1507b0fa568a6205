"""``--help`` on every command exits 0 and explains each option group, option and key in the words
of the configuration itself (rbmlab.help): each group's purpose, each option's first yaml comment,
each component key's ``option(...)`` doc, each top-level key's yaml comment."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from rbmlab.cli import main
from rbmlab.config import TrainConfig
from rbmlab.help import GROUP_DOCS, components_section, first_comment, key_comments, shown_value
from rbmlab.learners import LEARNERS
from rbmlab.validation import option_docs

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "conf"
GROUPS = sorted(
    str(d.relative_to(CONF))
    for d in CONF.rglob("*")
    if d.is_dir() and any(d.glob("*.yaml")) and not str(d.relative_to(CONF)).startswith("hydra")
)


def help_of(argv: list[str], capsys) -> str:
    """The help ``rbmlab <argv>`` prints; it must end with exit status 0."""
    try:
        main(argv)
    except SystemExit as e:  # argparse's help exits 0
        assert e.code in (0, None), capsys.readouterr()
    out, err = capsys.readouterr()
    assert err == "", err
    return out


@pytest.fixture(scope="module")
def run_help() -> list[str]:
    """``rbmlab run --help`` (seconds: Hydra lists every group), made once; exit status 0."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main(["run", "--help"])
        except SystemExit as e:
            assert e.code in (0, None)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("command", ["evaluate", "experiment", "doctor", "data", "report"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_command_has_help(command, flag, capsys):
    out = help_of([command, flag], capsys)  # run: run_help, and -h below
    assert f"rbmlab {command}" in out and len(out.splitlines()) >= 5


def test_the_top_level_help_names_every_command(capsys):
    out = help_of(["--help"], capsys)
    for command in ("run", "evaluate", "data", "report", "experiment", "experiment list", "doctor"):
        assert f"\n  {command} " in out


def test_every_group_and_every_option_file_is_described():
    assert set(GROUP_DOCS) == set(GROUPS)
    for group in GROUPS:
        for path in (CONF / group).glob("*.yaml"):
            assert first_comment(path), f"{path} has no first comment line for --help"


def test_run_help_explains_groups_options_and_keys(run_help):
    lines, text = run_help, "\n".join(run_help)
    assert lines[0].startswith("rbmlab run: train and evaluate one configuration")
    for group in GROUPS:
        assert any(
            ln.split() and ln.split()[0] == f"{group}=NAME" and GROUP_DOCS[group] in ln for ln in lines
        ), group
        for path in (CONF / group).glob("*.yaml"):
            assert any(
                ln.split() and ln.split()[0] == path.stem and ln.endswith(first_comment(path)) for ln in lines
            ), path
    assert "mnist (default)" in text and "cd (default)" in text
    for key, (value, comment) in key_comments("config").items():
        if not key.startswith(("train.", "hydra.")):
            assert f"  {key}={value}" in text and comment in text, key
    for key, (default, doc) in option_docs(TrainConfig).items():
        assert any(
            ln.split()[:1] == [f"train.{key}={shown_value(default)}"] and ln.endswith(doc) for ln in lines
        ), key
    assert "$$" not in text and "${" not in text  # the template's escapes and interpolations resolved


def check_sdcp_adam(lines: list[str]) -> None:
    docs = option_docs(LEARNERS.get("sdcp").config_class)
    assert any(ln.split()[:1] == ["learner.d=3"] and ln.endswith(docs["d"][1]) for ln in lines)
    assert any(ln.startswith("  learner: sdcp ") for ln in lines)
    assert any(ln.startswith("  learner.optimizer: adam ") for ln in lines)
    assert any(ln.startswith("  learner.optimizer.beta1=0.9 ") for ln in lines)


OVERRIDES = ["learner=sdcp", "learner/optimizer=adam", "learner.d=3"]


def test_the_components_section_shows_the_chosen_options_with_their_values():
    from omegaconf import OmegaConf  # noqa: PLC0415

    from rbmlab.hydra_app import compose  # noqa: PLC0415

    check_sdcp_adam(components_section(OmegaConf.to_container(compose("config", OVERRIDES))))


@pytest.mark.slow
def test_run_help_after_overrides_shows_the_chosen_components_options(capsys):
    check_sdcp_adam(help_of(["run", *OVERRIDES, "-h"], capsys).splitlines())  # through Hydra's template


def test_evaluate_help_explains_its_keys_and_groups(capsys):
    text = help_of(["evaluate", "evaluator=exact", "--help"], capsys)
    for key, (value, comment) in key_comments("evaluate").items():
        assert f"  {key}={value}" in text and comment in text, key
    for group in ("dataset", "task", "evaluator", "backend"):
        assert f"{group}=NAME" in text and GROUP_DOCS[group] in text
    assert "  evaluator: exact" in text and "checkpoint=???" in text and "backend.dtype=saved" in text


def test_experiment_help_documents_list_and_every_argument(capsys):
    text = help_of(["experiment", "--help"], capsys)
    assert "rbmlab experiment list [PAPER]" in text and "list --targets" in text
    for argument in (
        "scale=smoke|reduced|paper",
        "results_root=DIR",
        "outputs_root=DIR",
        "report_only=true|false",
        "variants=a,b",
        "hydra/launcher=NAME",
        "key=value",
    ):
        assert argument in text


def test_a_bad_override_with_help_is_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", "learner=nope", "--help"])
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == ""
    assert err.strip().splitlines() == [err.strip()] and err.startswith(
        "rbmlab: error: learner=nope: no such option"
    )


@pytest.mark.parametrize("overrides", [[], ["learner=sdcp", "dataset=bars_stripes"]])
def test_run_help_is_hydras_own_help_without_its_group_listing(overrides, capsys):
    """rbmlab fills the help template itself (Hydra's would first copy its config repository once
    per config group, for lists the template does not show): the same text as Hydra's."""
    from rbmlab.hydra_app import run_hydra

    main(["run", *overrides, "--help"])
    ours = capsys.readouterr().out
    with contextlib.suppress(SystemExit):  # Hydra exits after its help
        run_hydra([*overrides, "--help"])
    assert ours == capsys.readouterr().out and "== Configuration groups" in ours
