"""Adversarial inputs against a model's own output probabilities (QCov Appendix A, QuanForge 4.3.1).

Gradients are exact: the adjoint method on the batched engine gives dL/d(input state) (amplitude)
or dL/d(feature angle) (angle encoding), then the chain rule runs back through the normalization
and the manifest's linear preprocessing to the raw features. L is the cross-entropy of the true class.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qmltest.data.preprocess import preprocess, vjp
from qmltest.errors import InputError, QmlTestError
from qmltest.model import readout
from qmltest.model.artifact import Model
from qmltest.simulate import engine, program, statevector
from qmltest.simulate.runner import model_probabilities
from qmltest.util import parallel
from qmltest.util.seeds import seed_of
from qmltest.zoo.train import loss_and_lambda

METHODS = ("fgsm", "jsma", "dlfuzz", "quantest", "random")


def meyer_wallach(psi: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Meyer-Wallach entanglement Q = 2 (1 - (1/n) sum_k Tr rho_k^2) per state, and dQ/d(conj psi).

    With M_k the state reshaped to (qubit k, rest), rho_k = M_k M_k^+ and d Tr(rho_k^2)/d(conj M_k) = 2 rho_k M_k.
    """
    batch = psi.shape[0]
    t = psi.reshape((batch,) + (2,) * n)
    purity = np.zeros(batch)
    grad = np.zeros_like(t)
    for k in range(n):
        m = np.moveaxis(t, n - k, 1).reshape(batch, 2, -1)
        rho = m @ np.conj(np.transpose(m, (0, 2, 1)))
        purity += np.real(np.einsum("nab,nba->n", rho, rho))
        d = (2 * rho @ m).reshape((batch, 2) + (2,) * (n - 1))
        grad += np.moveaxis(d, 1, n - k)
    q = 2 * (1 - purity / n)
    return q, (-2.0 / n) * grad.reshape(batch, -1)


def input_gradient(model: Model, x: np.ndarray, y: np.ndarray, entanglement: float = 0.0) -> np.ndarray:
    """d(cross-entropy of class y + entanglement x Meyer-Wallach)/d(raw x), one row per input."""
    n = model.ir.num_qubits
    if model.measurement_bases > 1:
        raise InputError(
            f"{model.source}: white-box gradients need one measurement basis, its observables need "
            f"{model.measurement_bases}: use a black-box attack (nes)"
        )
    ops = program.of_model(model).ops
    encoded = model.encode(x)
    measured = list(model.ir.measured)
    cmat = readout.class_matrix(model.readout_matrix, model.num_classes)
    if model.amplitude:
        values: dict = {}
        psi0 = encoded
    else:
        values = {p: encoded[:, i] for i, p in enumerate(model.ir.inputs)}
        psi0 = statevector.zero_states(len(x), n)
    psi = statevector.run(ops, psi0, values, n, zero=not model.amplitude)
    _, lam, _ = loss_and_lambda(psi, y, measured, n, cmat)
    if entanglement:
        lam = lam + entanglement * meyer_wallach(psi, n)[1] / len(x)  # same batch-mean scale as the loss
    initial: list = []
    per_input, _ = statevector.adjoint_gradient(ops, psi, lam, values, n, list(model.ir.inputs), initial)
    if model.amplitude:
        z = preprocess(model.manifest["preprocessing"], x)
        g = 2.0 * np.real(initial[0])[:, : z.shape[1]]
        norm = np.linalg.norm(z, axis=1, keepdims=True)
        unit = z / norm
        g_z = (g - unit * np.sum(unit * g, axis=1, keepdims=True)) / norm
    else:
        g_z = per_input
    return vjp(model.manifest["preprocessing"], x, g_z) * len(x)  # per-input, not batch-mean, scale


def nes_gradient(
    model: Model,
    x: np.ndarray,
    y: np.ndarray,
    shots: int,
    samples: int,
    sigma: float,
    rng: np.random.Generator,
    backend: str = "auto",
) -> np.ndarray:
    """NES estimate (Wierstra et al.) of d(loss)/dx from shot-estimated class probabilities only
    (QuanForge footnote 2): antithetic Gaussian probes, the model as a black box."""
    cmat = readout.class_matrix(model.readout_matrix, model.num_classes)

    def loss(xs: np.ndarray) -> np.ndarray:
        counts = engine.sample_counts(model_probabilities(model, xs, backend), shots, rng) @ cmat
        p = (counts + 0.5) / (counts.sum(axis=1, keepdims=True) + 0.5 * counts.shape[1])
        return -np.log(p[np.arange(len(y)), y])

    grad = np.zeros_like(x, dtype=float)
    for _ in range(samples):
        u = rng.normal(size=x.shape)
        grad += (loss(x + sigma * u) - loss(x - sigma * u))[:, None] * u
    return grad / (2 * sigma * samples)


def jsma(
    model: Model,
    x: np.ndarray,
    y: np.ndarray,
    theta: float,
    gamma: float,
    low: float,
    high: float,
    backend: str = "auto",
) -> np.ndarray:
    """JSMA-style saliency attack: push the most salient unused feature by theta x range in the
    loss-increasing direction, until misclassified or a gamma fraction of the features is used."""
    span = high - low
    adv = np.array(x, dtype=float)
    used = np.zeros_like(adv, dtype=bool)
    active = np.ones(len(x), dtype=bool)
    for _ in range(max(1, int(gamma * x.shape[1]))):
        if not active.any():
            break
        idx = np.flatnonzero(active)
        g = input_gradient(model, adv[idx], y[idx])
        g[used[idx]] = 0.0
        j = np.argmax(np.abs(g), axis=1)
        adv[idx, j] = np.clip(adv[idx, j] + theta * span * np.sign(g[np.arange(len(idx)), j]), low, high)
        used[idx, j] = True
        active[idx] = model.predict(model_probabilities(model, adv[idx], backend)) == y[idx]
    return adv


def dlfuzz(
    model: Model,
    x: np.ndarray,
    y: np.ndarray,
    steps: int,
    step_size: float,
    epsilon: float,
    low: float,
    high: float,
    backend: str = "auto",
) -> np.ndarray:
    """DLFuzz-style iterative signed-gradient ascent on the loss, each input kept within an L_inf
    ball of epsilon x range around its seed; stops early once every input is misclassified."""
    span = high - low
    adv = np.array(x, dtype=float)
    for _ in range(steps):
        adv = adv + step_size * span * np.sign(input_gradient(model, adv, y))
        adv = np.clip(np.clip(adv, x - epsilon * span, x + epsilon * span), low, high)
        if np.all(model.predict(model_probabilities(model, adv, backend)) != y):
            break
    return adv


def quantest(
    model: Model,
    x: np.ndarray,
    y: np.ndarray,
    lam: float,
    lr: float,
    steps: int,
    epsilon: float,
    low: float,
    high: float,
    backend: str = "auto",
) -> np.ndarray:
    """QuanTest-style (Shi et al. 2024): ascend cross-entropy + lam x Meyer-Wallach entanglement of the
    output state with signed steps of lr x range, inside an epsilon L_inf ball, until misclassified."""
    span = high - low
    adv = np.array(x, dtype=float)
    active = np.ones(len(x), dtype=bool)
    for _ in range(steps):
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            break
        g = input_gradient(model, adv[idx], y[idx], lam)
        adv[idx] = np.clip(
            np.clip(adv[idx] + lr * span * np.sign(g), x[idx] - epsilon * span, x[idx] + epsilon * span), low, high
        )
        active[idx] = model.predict(model_probabilities(model, adv[idx], backend)) == y[idx]
    return adv


def attack(
    model: Model,
    x: np.ndarray,
    y: np.ndarray,
    method: str,
    epsilon: float,
    low: float,
    high: float,
    rng: np.random.Generator,
    shots: int | None = None,
    dlfuzz_steps: int = 50,
    backend: str = "auto",
) -> np.ndarray:
    """FGSM (exact gradient, or NES under finite shots), JSMA (theta 1.0, gamma 0.1), DLFuzz
    (`dlfuzz_steps` steps of epsilon/10; QCov Sec. 4.3 runs 500) or uniform random noise of the same
    size; clipped to the value range."""
    span = high - low
    if method == "fgsm":
        grad = (
            input_gradient(model, x, y)
            if shots is None
            else nes_gradient(model, x, y, shots, 50, 0.01 * span, rng, backend=backend)
        )
        return np.clip(x + epsilon * span * np.sign(grad), low, high)
    if method == "jsma":
        return jsma(model, x, y, 1.0, 0.1, low, high, backend=backend)
    if method == "dlfuzz":
        return dlfuzz(model, x, y, dlfuzz_steps, epsilon / 10, epsilon, low, high, backend=backend)
    if method == "quantest":
        return quantest(model, x, y, 1.0, 0.05 * epsilon, 50, epsilon, low, high, backend=backend)
    if method == "random":
        return np.clip(x + rng.uniform(-epsilon * span, epsilon * span, x.shape), low, high)
    raise InputError(f"unknown attack '{method}' (available: {', '.join(METHODS)})")


CHUNK = 16
"""Inputs per attack task: fixed, so the random choices (seeded per chunk) never depend on the worker count."""


@dataclass(frozen=True)
class AttackShared:
    model: Model
    method: str
    epsilon: float
    low: float
    high: float
    seed: int
    shots: int | None
    backend: str = "auto"


def _attack_task(shared: AttackShared, item: tuple[int, np.ndarray, np.ndarray]) -> np.ndarray:
    start, x, y = item
    rng = np.random.default_rng(seed_of(shared.seed, "attack", shared.method, start))
    return attack(
        shared.model,
        x,
        y,
        shared.method,
        shared.epsilon,
        shared.low,
        shared.high,
        rng,
        shared.shots,
        backend=shared.backend,
    )


def attack_inputs(
    model: Model,
    x: np.ndarray,
    y: np.ndarray,
    method: str,
    epsilon: float,
    low: float,
    high: float,
    seed: int,
    shots: int | None = None,
    where: parallel.Plan | None = None,
    backend: str = "auto",
) -> np.ndarray:
    """`attack` over fixed chunks of CHUNK inputs (tasks for `where`), each chunk seeded by its start."""
    if method not in METHODS:
        raise InputError(f"unknown attack '{method}' (available: {', '.join(METHODS)})")
    items = [(i, x[i : i + CHUNK], y[i : i + CHUNK]) for i in range(0, len(x), CHUNK)]
    shared = AttackShared(model, method, epsilon, low, high, seed, shots, backend)
    parts = parallel.run_tasks(_attack_task, shared, items, where)
    for part in parts:
        if isinstance(part, parallel.TaskError):
            raise QmlTestError(f"attack {method} failed: {part.message}")
    return np.concatenate(parts) if parts else x.copy()


def success_rate(model: Model, x: np.ndarray, x_adv: np.ndarray, y: np.ndarray, backend: str = "auto") -> float:
    """Fraction of originally correct inputs whose adversarial version is misclassified."""
    correct = model.predict(model_probabilities(model, x, backend)) == y
    if not correct.any():
        return 0.0
    flipped = model.predict(model_probabilities(model, x_adv[correct], backend)) != y[correct]
    return float(np.mean(flipped))
