"""Scale-out on Dask: the same answer on 1 or 2 workers, a killed worker, a failing task, a killed client.

Each Dask test starts a LocalCluster of two single-threaded worker processes (a few seconds).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from qmltest_cli.main import app
from threadpoolctl import threadpool_info
from typer.testing import CliRunner

from qmltest.errors import InputError
from qmltest.util import cluster as placement
from qmltest.util import parallel

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "data/models/zfm-ra-iris")


def _square(shared: dict, item: int) -> float:
    return float(np.sqrt(item * shared["scale"]))


def _dies_once(shared: dict, item: int) -> int:
    """Kills its worker process the first time it meets item 5 (a marker file remembers)."""
    marker = Path(shared["marker"])
    if item == 5 and not marker.exists():
        marker.write_text("killed")
        os._exit(1)
    return item * item


def _dies_off_the_client(shared: dict, item: int) -> int:
    """Kills every worker process that meets item 5; only the client itself can run it."""
    if item == 5 and os.getpid() != shared["client"]:
        os._exit(1)
    return item * item


def _fails_on_three(shared: dict, item: int) -> int:
    if item == 3:
        raise ValueError("bad item")
    return item


def _offset(shared: dict, item: int) -> int:
    return item


def _prepare_offset(shared: dict, items: list[int]) -> list[int]:
    """Once per task: each item plus the task's size (what only the whole batch knows)."""
    if shared.get("fail"):
        raise RuntimeError("prepare failed")
    return [i + 1000 * len(items) for i in items]


_offset.prepare = _prepare_offset  # type: ignore[attr-defined]


def test_a_task_s_prepare_runs_once_per_batch_in_process_and_on_dask() -> None:
    """`fn.prepare(shared, items)` sees a whole batch (a chunk in-process, a task on Dask) before its
    items run one by one; a prepare that fails leaves the items as they were."""

    def later(workers: int):
        yield [10, 11, 12]
        yield [20]

    local = parallel.run_tasks(_offset, {}, [1, 2], later=later)
    assert local == [2001, 2002, 3010, 3011, 3012, 1020]
    # on Dask the first items spread over the 2 workers (one task each), a later chunk is one task
    assert parallel.run_tasks(_offset, {}, [1, 2], parallel.plan(2), later=later) == [1001, 1002] + local[2:]
    assert parallel.run_tasks(_offset, {}, [1, 2, 3], parallel.plan(2, batch=1), later=later)[:3] == [1001, 1002, 1003]
    assert parallel.run_tasks(_offset, {"fail": True}, [1, 2], later=later) == [1, 2, 10, 11, 12, 20]


def test_in_process_and_dask_give_the_same_results_in_order() -> None:
    items = list(range(40))
    local = parallel.run_tasks(_square, {"scale": 3}, items)
    seen: list[int] = []
    blas: list[int] = []

    def on_result(index: int, result: object) -> None:
        seen.append(index)
        blas.extend(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")

    dask = parallel.run_tasks(_square, {"scale": 3}, items, parallel.plan(2), on_result)
    assert local == dask == [float(np.sqrt(3 * i)) for i in items]
    assert sorted(seen) == items  # every result streamed back once
    # the client's BLAS runs on one thread while local workers hold the cores (see parallel.client)
    assert blas and set(blas) == {1}


def test_later_batches_stream_and_continue_the_indices() -> None:
    """Items made by later(workers) after the first round go out batch by batch as they are yielded;
    their results follow the first round's, in order, in-process and on Dask alike."""
    calls: list[int] = []

    def later(workers: int):
        calls.append(workers)
        for start in (40, 47, 60):
            yield list(range(start, start + 5))

    expected = [float(np.sqrt(3 * i)) for i in list(range(10)) + [40 + k for k in range(5)]]
    expected += [float(np.sqrt(3 * (s + k))) for s in (47, 60) for k in range(5)]
    local = parallel.run_tasks(_square, {"scale": 3}, list(range(10)), later=later)
    seen: list[int] = []
    dask = parallel.run_tasks(
        _square, {"scale": 3}, list(range(10)), parallel.plan(2), lambda i, r: seen.append(i), later=later
    )
    assert local == dask == expected
    assert sorted(seen) == list(range(25)) and calls == [1, 2]


def test_a_killed_worker_is_retried_and_the_run_finishes(tmp_path) -> None:
    shared = {"marker": str(tmp_path / "marker")}
    out = parallel.run_tasks(_dies_once, shared, list(range(12)), parallel.plan(2, batch=2))
    assert (tmp_path / "marker").exists()  # a worker really died
    assert out == [i * i for i in range(12)]


def test_a_batch_that_keeps_killing_its_workers_is_run_in_the_client() -> None:
    """Once Dask gives the batch up (KilledWorker; one allowed failure here, to keep the test short),
    the client runs it itself and the run still returns every result, in order."""
    import dask.config

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        out = parallel.run_tasks(
            _dies_off_the_client, {"client": os.getpid()}, list(range(12)), parallel.plan(2, batch=2)
        )
    assert out == [i * i for i in range(12)]


def test_a_task_that_fails_twice_is_reported_not_raised() -> None:
    for where in (parallel.plan(1), parallel.plan(2)):
        out = parallel.run_tasks(_fails_on_three, None, [1, 2, 3, 4], where)
        assert out[:2] == [1, 2] and out[3] == 4
        assert isinstance(out[2], parallel.TaskError) and "bad item" in out[2].message


def test_bad_plans_are_input_errors() -> None:
    with pytest.raises(InputError, match="--workers"):
        parallel.plan(0)
    with pytest.raises(InputError, match="--cluster"):
        parallel.plan(2, " ")


def _cli(args: list[str]) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    "extra",
    [
        ["--suite", "qml", "--operators", "APC,ALD,DFC"],
        [
            "--operators",
            "PSF,RGD",
            "--reference",
            "iris:train",
            "--reference-per-class",
            "20",
            "--repeats",
            "10",
            "--k-max",
            "3",
            "--batch",
            "4",
        ],
    ],
    ids=["qml", "quanforge"],
)
def test_mutate_reports_are_byte_identical_at_1_and_2_workers(tmp_path, extra) -> None:
    base = ["mutate", MODEL, *extra, "--test", "iris:test", "--shots", "200", "--seed", "4", "-q"]
    _cli(base + ["--json", str(tmp_path / "w1.json"), "--out", str(tmp_path / "r1")])
    _cli(base + ["--json", str(tmp_path / "w2.json"), "--out", str(tmp_path / "r2"), "--workers", "2"])
    assert (tmp_path / "w1.json").read_bytes() == (tmp_path / "w2.json").read_bytes()
    assert (tmp_path / "r1/report.json").read_bytes() == (tmp_path / "r2/report.json").read_bytes()


def test_fuzz_and_attack_are_byte_identical_at_1_and_2_workers(tmp_path) -> None:
    prof = tmp_path / "p.json"
    _cli(["profile", MODEL, "--data", "iris:train", "--out", str(prof), "-q"])
    base = [
        "fuzz",
        MODEL,
        "--profile",
        str(prof),
        "--data",
        "iris:test",
        "--per-class",
        "5",
        "--guide",
        "all",
        "--budget",
        "60",
        "--k",
        "10",
        "--seeds-list",
        "1,2",
        "-q",
    ]
    _cli(base + ["--json", str(tmp_path / "f1.json")])
    _cli(base + ["--json", str(tmp_path / "f2.json"), "--workers", "2"])
    assert (tmp_path / "f1.json").read_bytes() == (tmp_path / "f2.json").read_bytes()
    assert set(json.loads((tmp_path / "f1.json").read_text())["runs"]) == {"1", "2"}
    base = ["suite", "attack", MODEL, "--method", "random", "--data", "iris:all", "--per-class", "20", "--seed", "3"]
    _cli(base + ["--out", str(tmp_path / "a1.npz")])
    _cli(base + ["--out", str(tmp_path / "a2.npz"), "--workers", "2"])
    assert (tmp_path / "a1.npz").read_bytes() == (tmp_path / "a2.npz").read_bytes()


@pytest.mark.slow
def test_resume_after_kill_9_of_the_client(tmp_path) -> None:
    """kill -9 the client (and its local cluster) mid-run; the same command finishes with the same report."""
    args = [
        sys.executable,
        "-m",
        "qmltest_cli.main",
        "mutate",
        MODEL,
        "--suite",
        "classic",
        "--strategy",
        "exhaustive",
        "--operators",
        "remove-gate,replace-gate",
        "--test",
        "iris:test",
        "--shots",
        "100",
        "--seed",
        "2",
        "-q",
        "--workers",
        "2",
    ]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.Popen(
        args + ["--out", str(tmp_path / "run")],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    log = tmp_path / "run" / "results.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if log.exists() and log.read_text().count("\n") >= 40:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = log.read_text().count("\n")
    subprocess.run(args + ["--out", str(tmp_path / "run")], env=env, check=True, capture_output=True, timeout=300)
    subprocess.run(args + ["--out", str(tmp_path / "clean")], env=env, check=True, capture_output=True, timeout=300)
    resumed = json.loads((tmp_path / "run/report.json").read_text())
    clean = json.loads((tmp_path / "clean/report.json").read_text())
    resumed["meta"].pop("command")
    clean["meta"].pop("command")
    assert resumed == clean
    total = len(clean["mutants"])
    lines = log.read_text().count("\n")
    assert lines - done_before <= total - 40 + 2 * 2  # finished work was not redone (a torn batch at most)


def test_a_worker_killed_in_the_middle_of_a_mutate_run_gives_the_same_report() -> None:
    """One of two workers exits while mutants are in flight; Dask reruns its tasks elsewhere."""
    from qmltest.data import datasets
    from qmltest.data.labelled import Data
    from qmltest.model import artifact
    from qmltest.mutation import pipeline

    model = artifact.load(MODEL)
    x, y = datasets.select("iris:test", "test", model.classes, None, 0)
    suite = Data.of("iris:test", model, x, y)
    opts = pipeline.Options(suite="qml", operators=("APC", "ALD"), shots=200, seed=4)
    expected, _ = pipeline.run(model, [suite], opts)
    where = parallel.plan(2, batch=2)
    ticks: list[int] = []
    with parallel.session(where):
        c = parallel._SESSIONS[where]
        victim = sorted(c.scheduler_info()["workers"])[0]
        pid = c.run(os.getpid, workers=[victim])[victim]
        generated = len(expected["mutants"])

        def tick(k: int = 1, more: int = 0) -> None:
            if k:  # more= only grows the bar's total
                ticks.append(k)
            if len(ticks) == 3:  # three mutants done, the rest still queued or running
                os.kill(pid, signal.SIGKILL)

        result, _ = pipeline.run(model, [suite], opts, progress=tick, where=where)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the worker really died
    assert len(ticks) == generated  # one tick per mutant, whichever worker ran it
    assert result == expected


def test_settle_with_collect_frees_garbage_cycles_instead_of_freezing_them() -> None:
    """A cycle alive at `settle(collect=True)` is freed; frozen, it would stay for good."""
    import gc
    import weakref

    from qmltest.util import gctune

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a
    alive = weakref.ref(a)
    del a, b
    before = gc.get_threshold()
    try:
        gctune.settle(collect=True)
        assert alive() is None
        assert gc.get_threshold() == gctune.THRESHOLDS
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_workers_with_other_versions_are_a_set_up_error(monkeypatch) -> None:
    """The workers report their own versions; a client that sees others stops with one line."""
    monkeypatch.setattr(placement, "_versions", lambda: {"qmltest": "0.0.0", "numpy": np.__version__})
    with pytest.raises(InputError, match=r"has qmltest .* \(here 0\.0\.0\); every worker needs"):
        parallel.run_tasks(_square, {"scale": 3}, [1, 2], parallel.plan(2))


def test_a_cluster_whose_workers_cannot_import_qmltest_or_that_has_none(monkeypatch) -> None:
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=":0") as cluster:
        address = cluster.scheduler_address
        monkeypatch.setattr(placement, "WAIT_FOR_WORKERS", 1)
        with pytest.raises(InputError, match="no worker joined within 1 s"):
            parallel.run_tasks(_square, {"scale": 3}, [1], parallel.plan(cluster=address))
        # a worker process in which `import qmltest` fails
        code = (
            "import sys; sys.modules['qmltest'] = None; "
            f"sys.argv = ['dask-worker', '{address}', '--nthreads', '1', '--no-nanny', '--no-dashboard']; "
            "from distributed.cli.dask_worker import main; main()"
        )
        worker = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            monkeypatch.setattr(placement, "WAIT_FOR_WORKERS", 60)
            with pytest.raises(InputError, match="a worker cannot run qmltest's tasks .*ModuleNotFoundError"):
                parallel.run_tasks(_square, {"scale": 3}, [1], parallel.plan(cluster=address))
        finally:
            worker.kill()
            worker.wait()


def _chain(shared: dict, item: tuple[int, int]) -> int:
    """A step of a feedback chain: its result decides the next items (as a search round does)."""
    if item == (2, 3):
        raise ValueError("bad step")
    return item[0] * 100 + item[1] * shared["scale"]


def test_feedback_runs_give_the_same_results_in_process_and_on_dask() -> None:
    """Chains of items whose next items come from each result; every chain runs to its end, a
    failing item comes back as a TaskError, and the collected results do not depend on the plan."""

    def collect(where: parallel.Plan) -> dict:
        seen: dict = {}

        def on_result(item: tuple[int, int], result: object) -> list:
            seen[item] = result if not isinstance(result, parallel.TaskError) else result.message
            chain, step = item
            return [[(chain, step + 1)], [(chain, step + 2)]] if step < 3 and step % 2 == 0 else []

        parallel.run_feedback(_chain, {"scale": 7}, lambda k: [[(c, 0) for c in range(4)]], where, on_result)
        return seen

    local = collect(parallel.plan(1))
    assert collect(parallel.plan(2)) == local
    assert local[(2, 3)] == "ValueError: bad step"
    assert sorted(local) == sorted((c, s) for c in range(4) for s in (0, 1, 2, 3, 4))
    assert local[(1, 4)] == 100 + 28


def test_search_on_workers_does_not_depend_on_the_order_draws_come_back(monkeypatch) -> None:
    """Every PSF draw is forced to the same circuit, so one mutant is drawn at every percentage the
    binary search visits, in two cells. The rounds are handled in a shuffled order (as workers may
    finish them), yet each search takes the in-process path and the mutant keeps its first draw
    in the in-process order (cell a, step 0): the report's percentage of a mutant drawn twice."""
    import random

    from qmltest.data import datasets
    from qmltest.data.labelled import Data
    from qmltest.model import artifact
    from qmltest.mutation import pipeline
    from qmltest.mutation.evidence.evaluator import Evaluator
    from qmltest.mutation.operators import quanforge as qf_ops
    from qmltest.mutation.operators.scope import Scope
    from qmltest.mutation.strategies.generate import Generator, Settings

    mutate = qf_ops.PSF.mutate
    monkeypatch.setattr(
        qf_ops.PSF, "mutate", lambda self, ir, scope, p, rng: mutate(self, ir, scope, 0.3, np.random.default_rng(0))
    )

    def shuffled(fn, shared, start, where, on_result) -> None:
        rng, pool = random.Random(3), [item for batch in start(2) for item in batch]
        while pool:
            item = pool.pop(rng.randrange(len(pool)))
            pool.extend(new for batch in on_result(item, fn(shared, item)) for new in batch)

    monkeypatch.setattr(parallel, "run_feedback", shuffled)
    model = artifact.load(MODEL)
    x, y = datasets.select("iris:train", "train", model.classes, 20, 0)
    ref = Data.of("ref", model, x, y)
    opts = pipeline.Options(suite="quanforge", operators=("PSF",), repeats=10, seed=0, settings=Settings(k_max=2))
    opts = opts.resolved()
    evaluator = Evaluator(model, opts.repeats, opts.shots, opts.seed, None)
    items = [(pipeline.Cell(c, Scope()), "PSF") for c in ("a", "b")]
    gen = Generator(model, ref, evaluator, opts.settings, opts.seed, {})
    local = [gen.run(pipeline._operator(opts, name), cell.scope, cell.name) for cell, name in items]
    logged: list[str] = []
    remote = pipeline._search_on_workers(
        model, ref, evaluator, opts, {}, items, parallel.plan(2), lambda m: logged.append(m.id), lambda k: None
    )

    def rows(result: tuple) -> list:
        effective, generated, log = result
        return [
            [(m.id, m.percentage, m.site, m.cell, m.status, m.mean_accuracy) for m in ms]
            for ms in (effective, generated)
        ] + [[s.to_dict() for s in log]]

    assert [rows(r) for r in remote] == [rows(r) for r in local]
    percentages = {s["mid"] for r in local for s in (e.to_dict() for e in r[2])}
    assert len(percentages) > 1  # the search visited several percentages ...
    assert len({m.id for r in local for m in r[1]}) == 1 == len(set(logged))  # ... and drew one mutant, logged once
    assert local[0][1][0].percentage == 0.25  # its first draw: cell a, step 0


def test_the_resource_tracker_of_a_cluster_client_is_started_quiet() -> None:
    """A killed client's tracker printed 'There appear to be 12 leaked semaphore objects' over the
    next command's output; the tracker starts with the client's -W options, which now silence it."""
    from multiprocessing import util

    parallel._quiet_resource_tracker()
    assert f"-W{parallel.RESOURCE_TRACKER_QUIET}" in util._args_from_interpreter_flags()
