"""scripts/mutants.yaml, the one-line bugs of the mutation run (scripts/mutation_run.py; issue 57):
every planted bug still applies to the source (its text occurs exactly once in its module), every
test file it names exists, and every module of the numerical packages is listed, with mutants or
with the reason it has none. A refactor that moves a mutant's text fails here, not silently in the
next mutation run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

from rbmlab.errors import RbmlabError

ROOT = Path(__file__).resolve().parent.parent
CORE_PACKAGES = ("inference", "inference/solvers", "learners", "models", "optimizers", "units")


def _script():
    """scripts/mutation_run.py as a module (registered: its dataclass looks itself up by name)."""
    if "mutation_run" not in sys.modules:
        spec = importlib.util.spec_from_file_location("mutation_run", ROOT / "scripts" / "mutation_run.py")
        sys.modules["mutation_run"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["mutation_run"])
    return sys.modules["mutation_run"]


def test_every_planted_bug_applies_to_the_source_and_names_existing_tests():
    mutants = _script().load_mutants()
    assert len(mutants) >= 150
    assert all(m.tests for m in mutants)


def test_every_module_of_the_numerical_packages_is_listed():
    listed = yaml.safe_load((ROOT / "scripts" / "mutants.yaml").read_text())
    modules = {
        str(path.relative_to(ROOT))
        for package in CORE_PACKAGES
        for path in (ROOT / "rbmlab" / package).glob("*.py")
        if path.name != "__init__.py"
    }
    assert sorted(modules - set(listed)) == []
    for module, entry in listed.items():
        assert entry.get("skipped") or len(entry["mutants"]) >= 1, module


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"tests": ["tests/t.py"], "mutants": [{"find": "b", "replace": "c", "why": "-"}]}, "occurs 0 times"),
        ({"tests": ["tests/t.py"], "mutants": [{"find": "a", "replace": "c", "why": "-"}]}, "occurs 2 times"),
        ({"tests": ["tests/t.py"], "mutants": [{"find": "x", "replace": "x", "why": "-"}]}, "with itself"),
        (
            {"tests": ["tests/u.py"], "mutants": [{"find": "x", "replace": "y", "why": "-"}]},
            "u.py does not exist",
        ),
    ],
)
def test_a_stale_entry_is_refused_naming_its_module(entry, message, tmp_path):
    (tmp_path / "m.py").write_text("a = 1\na = x\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text("")
    (tmp_path / "list.yaml").write_text(yaml.safe_dump({"m.py": entry}))
    with pytest.raises(RbmlabError, match=message) as caught:
        _script().load_mutants(tmp_path / "list.yaml", tmp_path)
    assert str(caught.value).startswith("m.py: ")


def test_a_planted_bug_the_tests_see_is_killed_and_one_they_miss_survives(tmp_path):
    """The run's verdicts on a toy copy: a mutant that changes what the test checks is killed, one
    that changes nothing it checks survives, and the module is put back after each."""
    script = _script()
    (tmp_path / "tests").mkdir()
    (tmp_path / "toy.py").write_text("def f(x):\n    return 2 * x  # doubled\n")
    (tmp_path / "tests" / "test_toy.py").write_text(
        "from toy import f\n\n\ndef test_f():\n    assert f(3) == 6\n"
    )
    tests = ("tests/test_toy.py",)
    for find, replace, want in (("2 * x", "3 * x", "fail"), ("# doubled", "# tripled", "pass")):
        original = script.plant(tmp_path, script.Mutant("toy.py", find, replace, "-", tests))
        result, _, last = script.run_tests(tmp_path, tests, 60)
        (tmp_path / "toy.py").write_text(original)
        assert result == want, last
    assert "2 * x  # doubled" in (tmp_path / "toy.py").read_text()
