"""CI-native runs (issue 47): shards merged equal the unsharded report; a warm cache simulates
nothing and gives the same report; concurrent writers into one cache lose nothing; --iterate and
--changed-since leave out what they should; a fuzz folder made with another profile is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from qmltest_cli.main import app
from typer.testing import CliRunner

from qmltest import api
from qmltest.errors import InputError
from qmltest.runs import reuse

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
QCL = str(ROOT / "data" / "models" / "qcl-mnist01")
ARGS = {"suite": "qml", "per_class": 15, "seed": 4}


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> dict:
    return api.mutate(QCL, ["mnist:test"], out=tmp_path_factory.mktemp("whole") / "run", **ARGS).data


@pytest.mark.parametrize("n", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_shards_merged_equal_the_unsharded_report(tmp_path, whole, n) -> None:
    parts = []
    for k in range(1, n + 1):
        r = api.mutate(QCL, ["mnist:test"], shard=f"{k}/{n}", out=tmp_path / f"s{k}", **ARGS)
        parts.append(r)
        assert r["generation"]["left_out"]["other_shards"] > 0 and r["meta"]["options"] == whole["meta"]["options"]
    ids = [{m["id"] for m in p["mutants"]} for p in parts]
    assert sum(map(len, ids)) == len(whole["mutants"]) and set().union(*ids) == {m["id"] for m in whole["mutants"]}
    merged = api.merge([tmp_path / f"s{k}" for k in range(n, 0, -1)], tmp_path / "merged")
    assert merged.timing["scored"] > 0 and merged.to_json() == api.MutationResult(whole).to_json()


def test_merge_refuses_shards_of_different_runs_and_missing_shards(tmp_path) -> None:
    api.mutate(QCL, ["mnist:test"], shard="1/2", out=tmp_path / "a", **ARGS)
    api.mutate(QCL, ["mnist:test"], shard="2/2", out=tmp_path / "b", **dict(ARGS, seed=5))
    with pytest.raises(InputError, match="shards of different runs"):
        api.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    with pytest.raises(InputError, match="need shards 1/2 to 2/2 once each, got 1/2"):
        api.merge([tmp_path / "a"], tmp_path / "m2")
    res = runner.invoke(app, ["merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "m3")])
    assert res.exit_code == 2 and "shards of different runs" in res.output and "Traceback" not in res.output
    for bad in ("0/2", "3/2", "x"):
        with pytest.raises(InputError, match="--shard"):
            reuse.parse_shard(bad)


def test_a_warm_cache_simulates_nothing_and_gives_the_same_report(tmp_path, whole) -> None:
    cache = tmp_path / "cache"
    cold = api.mutate(QCL, ["mnist:test"], cache=cache, **ARGS)
    warm = api.mutate(QCL, ["mnist:test"], cache=cache, **ARGS)
    assert cold.timing["cached"] == 0 and warm.timing["cached"] == warm.timing["scored"] > 0
    assert warm.to_json() == cold.to_json() == api.MutationResult(whole).to_json()
    assert reuse.info(cache)["entries"] == warm.timing["scored"]
    other = api.mutate(QCL, ["mnist:test"], cache=cache, **dict(ARGS, seed=9))  # other settings: other keys
    assert other.timing["cached"] == 0
    res = runner.invoke(app, ["cache", "info", "--cache", str(cache), "--json", "-"])
    assert res.exit_code == 0 and json.loads(res.stdout)["entries"] == warm.timing["scored"] + other.timing["scored"]
    res = runner.invoke(app, ["cache", "prune", "--cache", str(cache)])
    assert res.exit_code == 0 and reuse.info(cache)["entries"] == 0


@pytest.mark.slow  # 16 s: four concurrent writer processes
def test_concurrent_writers_into_one_cache_lose_nothing(tmp_path) -> None:
    cache = tmp_path / "cache"
    code = (
        "import sys, json; from qmltest import api; "
        f"r = api.mutate({QCL!r}, ['mnist:test'], cache={str(cache)!r}, suite='qml', per_class=6, "
        "seed=int(sys.argv[1])); "
        "print(json.dumps(r.timing['scored']))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(s)], stdout=subprocess.PIPE, text=True) for s in (1, 1, 2)
    ]
    scored = [json.loads(p.communicate(timeout=600)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert reuse.info(cache)["entries"] == scored[0] + scored[2]  # the two seed-1 writers wrote the same keys
    assert not list(cache.glob("??/.tmp-*"))  # no torn temporary left behind
    again = api.mutate(QCL, ["mnist:test"], cache=cache, suite="qml", per_class=6, seed=2)
    assert again.timing["cached"] == again.timing["scored"]


def test_iterate_skips_the_killed_and_changed_since_keeps_changed_sites(tmp_path, whole) -> None:
    previous = tmp_path / "prev.json"
    previous.write_text(json.dumps(whole))
    killed = {m["id"] for m in whole["mutants"] if m["status"] == "killed"}
    again = api.mutate(QCL, ["mnist:test"], iterate=previous, **ARGS)
    assert again["generation"]["left_out"]["killed_before"] == len(killed) > 0
    assert not killed & {m["id"] for m in again["mutants"]}
    same = api.mutate(QCL, ["mnist:test"], changed_since=QCL, **ARGS)  # no gate changed: nothing to test
    assert same["mutants"] == [] and same["generation"]["left_out"]["unchanged_sites"] > 0


def test_fuzz_into_a_folder_made_with_another_profile_is_refused_unless_forced(tmp_path) -> None:
    p1, p2 = api.profile(QCL, per_class=5), api.profile(QCL, per_class=10)
    args = {"seeds": "mnist:test", "per_class": 2, "guide": "ksc", "budget": 10, "out": tmp_path / "f"}
    first = api.fuzz(QCL, p1, **args)
    with pytest.raises(InputError, match="made with other settings.*--force"):
        api.fuzz(QCL, p2, **args)
    assert api.fuzz(QCL, p1, **args).data == first.data  # the same settings resume
    forced = api.fuzz(QCL, p2, force=True, **args)
    assert forced.data["guides"]["ksc"]["iterations"] == 10


def test_the_cli_shards_merges_and_caches(tmp_path, whole, monkeypatch) -> None:
    base = ["mutate", QCL, "--suite", "qml", "--test", "mnist:test", "--per-class", "15", "--seed", "4", "-q"]
    monkeypatch.setenv("QMLTEST_CACHE", str(tmp_path / "cache"))
    for k in (1, 2):
        res = runner.invoke(app, [*base, "--shard", f"{k}/2", "--out", str(tmp_path / f"s{k}")])
        assert res.exit_code == 0, res.output
    assert reuse.info(tmp_path / "cache")["entries"] == len(
        [m for m in whole["mutants"] if not m["status"].startswith("incompetent")]
    )
    out = tmp_path / "merged.json"
    res = runner.invoke(
        app, ["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "m"), "--json", str(out)]
    )
    assert res.exit_code == 0, res.output
    merged = json.loads(out.read_text())
    merged["meta"].pop("command"), dict(whole["meta"]).pop("command")
    assert merged == dict(whole, meta={k: v for k, v in whole["meta"].items() if k != "command"})
    res = runner.invoke(app, [*base[:-1], "--json", str(tmp_path / "warm.json")])
    assert res.exit_code == 0 and "cached" in res.output and "(no simulation)" in res.output
    bad = runner.invoke(app, [*base, "--shard", "3/2"])
    assert bad.exit_code == 2 and "--shard k/n needs 1 <= k <= n" in bad.output and "Traceback" not in bad.output
