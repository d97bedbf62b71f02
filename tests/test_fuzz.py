"""Fuzzing: mutators respect DeepHunter's validity constraint, the loop stops on budget, failures are
re-checked, a seeded campaign is byte-for-byte repeatable and resumes from its folder."""

from __future__ import annotations

import json

import numpy as np
import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest.coverage.criteria import Bounds
from qmltest.coverage.profile import bounds, build
from qmltest.errors import InputError
from qmltest.fuzz import png
from qmltest.fuzz.loop import fuzz
from qmltest.fuzz.mutators import ImageMutator, Seed, TabularMutator
from qmltest.fuzz.run import campaign
from qmltest.simulate.runner import model_probabilities


def test_image_mutants_are_valid_against_their_reference() -> None:
    rng = np.random.default_rng(0)
    mutator = ImageMutator((8, 8), 0.0, 16.0)
    img = rng.uniform(0, 16, 64)
    seed = Seed(img, img, 0, 0)
    affined = 0
    for _ in range(300):
        child = mutator.mutate(seed, rng)
        if child is None:
            continue
        if child.affined and not seed.affined:
            affined += 1
            assert np.array_equal(child.reference, child.x)  # the affine image is the new reference
        else:
            assert mutator.valid(child.reference, child.x)
            diff = np.abs(child.x - child.reference)
            assert np.count_nonzero(diff) < 0.02 * 64 or diff.max() <= 0.2 * 16 + 1e-9
        assert child.x.min() >= 0.0 and child.x.max() <= 16.0
        seed = child
    assert affined <= 1  # at most one affine step per lineage


def test_validity_rule_by_hand() -> None:
    m = ImageMutator((10, 10), 0.0, 255.0)
    ref = np.zeros(100)
    one_pixel = ref.copy()
    one_pixel[3] = 255.0  # L0 = 1 < 2: any change allowed
    assert m.valid(ref, one_pixel)
    many = ref + 60.0  # L0 = 100, L_inf 60 > 0.2 * 255 = 51
    assert not m.valid(ref, many)
    assert m.valid(ref, ref + 50.0)


def test_tabular_mutants_stay_in_the_epsilon_box() -> None:
    rng = np.random.default_rng(1)
    m = TabularMutator(np.array([1.0, 10.0]), epsilon=0.1)
    seed = Seed(np.array([0.5, 5.0]), np.array([0.5, 5.0]), 0, 0)
    for _ in range(200):
        seed = m.mutate(seed, rng)
        assert m.valid(seed.reference, seed.x)


def _setup(iris_model):
    from qmltest.data import datasets
    from qmltest.evaluate import label_indices
    from qmltest.model import artifact

    model = artifact.load(iris_model)
    x, y = datasets.select("iris", "test", model.classes)
    yi = label_indices(model, y)
    keep = model.predict(model_probabilities(model, x)) == yi
    xt, _ = datasets.select("iris", "train", model.classes)
    prof = build(model_probabilities(model, xt, register="all"), model.sha256)
    return model, x[keep], yi[keep], Bounds(*bounds(prof))


def test_loop_stops_on_budget_and_rechecks_failures(iris_model) -> None:
    model, x, y, b = _setup(iris_model)
    seeds = [Seed(x[i], x[i], i, int(y[i])) for i in range(len(x))]
    mutator = TabularMutator(np.ptp(x, axis=0), epsilon=0.5)
    for guide in ("ksc", "random"):
        out = fuzz(model, seeds, b, mutator, guide, 150, np.random.default_rng(2), k=10)
        assert out.iterations <= 150
        assert out.stop in ("budget", "queue empty")
        preds = (
            model.predict(model_probabilities(model, np.array([s.x for s, _ in out.failures]), "aer"))
            if out.failures
            else []
        )
        assert all(p != s.label for p, (s, _) in zip(preds, out.failures))
        assert len(out.coverage_trace) == out.iterations
    random = fuzz(model, seeds, b, mutator, "random", 150, np.random.default_rng(2), k=10)
    assert random.iterations == 150 and random.stop == "budget"


def test_campaign_repeatable_and_resumable(iris_model, tmp_path) -> None:
    model, x, y, b = _setup(iris_model)
    a = campaign(model, x, y, None, b, ["ksc", "random"], 100, 5, tmp_path / "a", k=10)
    c = campaign(model, x, y, None, b, ["ksc", "random"], 100, 5, tmp_path / "c", k=10)
    for name in ("ksc.json", "random.json", "ksc-failures.npz"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()
    before = (tmp_path / "a" / "ksc.json").stat().st_mtime_ns
    again = campaign(model, x, y, None, b, ["ksc", "random"], 100, 5, tmp_path / "a", k=10)
    assert (tmp_path / "a" / "ksc.json").stat().st_mtime_ns == before  # taken from the folder, not rerun
    assert again["guides"] == a["guides"] == c["guides"]
    assert set(a["timing"]) == {"ksc", "random"}


def test_png_writer_roundtrip_header() -> None:
    data = png.encode(np.arange(12, dtype=float).reshape(3, 4) * 20)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and b"IHDR" in data and data.endswith(b"IEND\xaeB`\x82")


def test_fuzz_cli_all_guides(iris_model, tmp_path) -> None:
    runner = CliRunner()
    prof = tmp_path / "p.json"
    assert (
        runner.invoke(
            app, ["profile", str(iris_model), "--data", "iris", "--per-class", "20", "--out", str(prof)]
        ).exit_code
        == 0
    )
    result = runner.invoke(
        app,
        [
            "fuzz",
            str(iris_model),
            "--profile",
            str(prof),
            "--seeds",
            "iris:test",
            "--per-class",
            "10",
            "--budget",
            "60",
            "--k",
            "10",
            "--out",
            str(tmp_path / "run"),
            "--json",
            "-",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)  # stderr says where the run folder went
    assert set(report["guides"]) == {"ksc", "scc", "tsc", "random"}
    assert all(r["iterations"] <= 60 for r in report["guides"].values())
    assert runner.invoke(app, ["fuzz", str(iris_model), "--profile", str(prof), "--guide", "nope"]).exit_code == 2


@pytest.mark.slow
def test_mnist_failures_saved_as_png(tmp_path) -> None:
    runner = CliRunner()
    prof = tmp_path / "p.json"
    model = "data/models/qcl-mnist01"
    assert (
        runner.invoke(app, ["profile", model, "--data", "mnist", "--per-class", "20", "--out", str(prof)]).exit_code
        == 0
    )
    result = runner.invoke(
        app,
        [
            "fuzz",
            model,
            "--profile",
            str(prof),
            "--guide",
            "random",
            "--budget",
            "400",
            "--out",
            str(tmp_path / "run"),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    data = np.load(tmp_path / "run" / "random-failures.npz")
    assert len(list((tmp_path / "run" / "random-failures").glob("*.png"))) == len(data["y"])


def test_a_run_folder_never_hands_back_another_profiles_results(iris_model, tmp_path) -> None:
    """The same --out with other bounds (another profile) or other seeds is refused in one line
    (issue 47); with force it is recomputed and equals a fresh run's, not the folder's old one;
    --out naming a file is one clear error."""
    model, x, y, b = _setup(iris_model)
    wide = Bounds(b.lower - 0.2, b.upper + 0.2)
    first = campaign(model, x, y, None, b, ["ksc"], 80, 5, tmp_path / "a", k=10)
    with pytest.raises(InputError, match="made with other settings"):
        campaign(model, x, y, None, wide, ["ksc"], 80, 5, tmp_path / "a", k=10)
    assert campaign(model, x, y, None, b, ["ksc"], 80, 5, tmp_path / "a", k=10)["guides"] == first["guides"]
    reused = campaign(model, x, y, None, wide, ["ksc"], 80, 5, tmp_path / "a", k=10, force=True)
    fresh = campaign(model, x, y, None, wide, ["ksc"], 80, 5, tmp_path / "b", k=10)
    assert reused["guides"] == fresh["guides"] != first["guides"]
    with pytest.raises(InputError, match="made with other settings"):
        campaign(model, x[:-1], y[:-1], None, wide, ["ksc"], 80, 5, tmp_path / "a", k=10)
    fewer = campaign(model, x[:-1], y[:-1], None, wide, ["ksc"], 80, 5, tmp_path / "a", k=10, force=True)
    assert (
        fewer["guides"] == campaign(model, x[:-1], y[:-1], None, wide, ["ksc"], 80, 5, tmp_path / "c", k=10)["guides"]
    )
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file, not a folder"):
        campaign(model, x, y, None, b, ["ksc"], 80, 5, tmp_path / "file", k=10)


def test_a_guide_file_without_its_summary_fields_is_a_damaged_folder(iris_model, tmp_path) -> None:
    """A resumed run that finds ksc.json with its config hash but no 'tsr' says the folder is
    damaged in one line (was a KeyError, exit 3)."""
    import json

    model, x, y, b = _setup(iris_model)
    campaign(model, x, y, None, b, ["ksc"], 40, 5, tmp_path / "a", k=10)
    path = tmp_path / "a" / "ksc.json"
    data = json.loads(path.read_text())
    del data["tsr"]
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"ksc.json: this run folder is damaged \(no 'tsr'\)"):
        campaign(model, x, y, None, b, ["ksc"], 40, 5, tmp_path / "a", k=10)


def test_prob_schedule_selection_and_campaign(iris_model, tmp_path) -> None:
    """DeepHunter-style selection: a seed fuzzed f times is accepted with probability
    max(1 - f / GAMMA, P_MIN), so fresh seeds are picked more often than worn ones (checked
    against that formula within 5 standard errors); a 'prob' campaign runs to its budget (its
    pool never empties), is repeatable, and differs from the FIFO one."""
    from qmltest.fuzz import loop

    rng = np.random.default_rng(0)
    worn = [0, int(loop.GAMMA) * 2]  # a fresh seed and one far past (1 - P_MIN) x GAMMA
    hits = np.zeros(2)
    for _ in range(20000):
        f = list(worn)
        hits[loop.pick(f, 1, rng)[0]] += 1
    share = hits[1] / hits.sum()
    expected = loop.P_MIN / (1 + loop.P_MIN)
    assert abs(share - expected) < 5 * np.sqrt(expected * (1 - expected) / hits.sum())
    model, x, y, b = _setup(iris_model)
    a = campaign(model, x, y, None, b, ["ksc"], 120, 5, tmp_path / "a", k=10, schedule="prob")
    again = campaign(model, x, y, None, b, ["ksc"], 120, 5, tmp_path / "b", k=10, schedule="prob")
    fifo = campaign(model, x, y, None, b, ["ksc"], 120, 5, None, k=10)
    assert a["guides"]["ksc"]["iterations"] == 120 and a["guides"]["ksc"]["stop"] == "budget"
    assert (tmp_path / "a" / "ksc.json").read_bytes() == (tmp_path / "b" / "ksc.json").read_bytes()
    assert a["guides"] == again["guides"] and a["guides"] != fifo["guides"]
    with pytest.raises(InputError, match="unknown schedule"):
        campaign(model, x, y, None, b, ["ksc"], 10, 5, None, schedule="lifo")
