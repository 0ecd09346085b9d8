"""Corpora (numerics/corpus/corpora.py): seeded sampling, the .npz format and its validation."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from stumpcheck.numerics.corpus.corpora import Corpus, load_corpus, make_corpus, save_corpus
from stumpcheck.numerics.precision import InputError


def test_same_seed_gives_the_same_corpus_and_another_seed_does_not():
    first = make_corpus(7, 11, seed=42)
    second = make_corpus(7, 11, seed=42)
    other = make_corpus(7, 11, seed=43)
    assert np.array_equal(first.x, second.x) and np.array_equal(first.theta, second.theta)
    assert not np.array_equal(first.x, other.x)
    assert first.seed == 42 and first.prior == (0.0, 1.0) and first.sampler_name == "uniform_sampler"


def test_prior_and_labels():
    c = make_corpus(2000, 3, seed=1, prior=(0.25, 0.5))
    assert c.theta.min() >= 0.25 and c.theta.max() <= 0.5
    assert np.array_equal(c.y, c.x >= c.theta[:, None])
    assert c.x.dtype == np.float64 and c.x.shape == (2000, 3) and c.m == 2000 and c.n == 3


def test_arrays_are_read_only():
    c = make_corpus(2, 2, seed=0)
    with pytest.raises(ValueError):
        c.x[0, 0] = 0.5


def test_custom_sampler_is_used_and_validated():
    def beta_sampler(rng, shape):
        return rng.beta(2.0, 5.0, size=shape)

    c = make_corpus(4, 6, seed=3, sampler=beta_sampler)
    assert c.sampler_name == "beta_sampler"
    assert np.array_equal(c.x, make_corpus(4, 6, seed=3, sampler=beta_sampler).x)
    with pytest.raises(InputError, match="x must lie in"):
        make_corpus(2, 2, seed=0, sampler=lambda rng, shape: rng.random(shape) + 1.0)
    with pytest.raises(InputError, match="shape"):
        make_corpus(2, 2, seed=0, sampler=lambda rng, shape: rng.random(3))
    with pytest.raises(InputError, match="non-finite"):
        make_corpus(2, 2, seed=0, sampler=lambda rng, shape: np.full(shape, np.nan))


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(m=0, n=3, seed=0), "m must be"),
    (dict(m=2, n=-1, seed=0), "n must be"),
    (dict(m=2, n=2, seed=-1), "seed"),
    (dict(m=2, n=2, seed=None), "seed"),
    (dict(m=2, n=2, seed=0, prior=(0.5, 0.5)), "prior"),
    (dict(m=2, n=2, seed=0, prior=(-0.1, 0.5)), "prior"),
])
def test_bad_parameters(kwargs, fragment):
    m, n = kwargs.pop("m"), kwargs.pop("n")
    with pytest.raises(InputError, match=fragment):
        make_corpus(m, n, **kwargs)


def test_round_trip(tmp_path):
    c = make_corpus(5, 9, seed=7, prior=(0.1, 0.9))
    path = save_corpus(c, tmp_path / "c.npz")
    back = load_corpus(path)
    assert isinstance(back, Corpus)
    assert np.array_equal(back.x, c.x) and np.array_equal(back.theta, c.theta)
    assert (back.seed, back.prior, back.sampler_name) == (7, (0.1, 0.9), "uniform_sampler")


def test_file_without_metadata_loads(tmp_path):
    np.savez(tmp_path / "bare.npz", x=np.full((2, 3), 0.5), theta=np.array([0.2, 0.7]))
    c = load_corpus(tmp_path / "bare.npz")
    assert c.seed is None and c.prior is None and c.sampler_name == "unknown"


def _write(path, **arrays):
    np.savez(path, **arrays)
    return path


BAD_FILES = {
    "missing_theta": (dict(x=np.zeros((2, 3))), "missing array(s) theta"),
    "x_1d": (dict(x=np.zeros(3), theta=np.zeros(3)), "2-D"),
    "theta_shape": (dict(x=np.zeros((2, 3)), theta=np.zeros(3)), "theta must have shape (2,)"),
    "x_float32": (dict(x=np.zeros((2, 3), dtype=np.float32), theta=np.zeros(2)), "x must be float64"),
    "x_nan": (dict(x=np.array([[0.1, np.nan]]), theta=np.array([0.5])), "non-finite"),
    "x_range": (dict(x=np.array([[0.1, 1.5]]), theta=np.array([0.5])), "x must lie in [0, 1]"),
    "theta_range": (dict(x=np.array([[0.1, 0.5]]), theta=np.array([-0.5])), "theta must lie in [0, 1]"),
    "theta_inf": (dict(x=np.array([[0.1, 0.5]]), theta=np.array([np.inf])), "theta has 1 non-finite"),
    "empty": (dict(x=np.zeros((0, 3)), theta=np.zeros(0)), "non-empty"),
    "bad_seed": (dict(x=np.zeros((1, 3)), theta=np.zeros(1), seed=np.array([1, 2])), "seed"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_files_give_one_line_input_errors(tmp_path, name):
    arrays, fragment = BAD_FILES[name]
    path = _write(tmp_path / f"{name}.npz", **arrays)
    with pytest.raises(InputError) as info:
        load_corpus(path)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_corrupt_and_missing_files(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"this is not a zip archive")
    truncated = tmp_path / "trunc.npz"
    save_corpus(make_corpus(20, 20, seed=0), truncated)
    truncated.write_bytes(truncated.read_bytes()[:300])
    npy = tmp_path / "single.npy"
    np.save(npy, np.zeros((2, 2)))
    pickled = tmp_path / "pickled.npz"
    with zipfile.ZipFile(pickled, "w") as archive:
        archive.writestr("x.npy", b"garbage")
    for path in (junk, truncated, npy, pickled, tmp_path / "absent.npz", tmp_path):
        with pytest.raises(InputError) as info:
            load_corpus(path)
        assert "\n" not in str(info.value)
