"""The corpus kernels compiled ahead in a child process when numba's cache is empty
(:mod:`stumpcheck.numerics.precompile`): the child fills the cache that the caller's calls then load."""

from __future__ import annotations

import os
import subprocess
import sys

from stumpcheck.numerics import precompile

_LOAD = """
import numpy as np
from stumpcheck.numerics.precompile import compile_corpus_kernels
compile_corpus_kernels()
from stumpcheck.numerics.corpus import kernel, kernel_pruned
stats = [f.stats for f in (kernel.dense_tasks, kernel_pruned.pruned_tasks, kernel_pruned._tasks)]
print(sum(len(s.cache_misses) for s in stats), sum(sum(s.cache_hits.values()) for s in stats))
"""


def _env(cache_dir, **extra):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), **extra)
    return env


def test_the_child_fills_an_empty_cache_and_the_calls_then_load_it(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert not precompile.corpus_cache_present()
    done = subprocess.run([sys.executable, "-m", "stumpcheck.numerics.precompile"], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-800:]
    assert done.stdout.split() == ["population", "corpus"]
    assert precompile.corpus_cache_present()
    # a new process makes the same calls: every kernel is loaded from the cache, none compiled
    loaded = subprocess.run([sys.executable, "-c", _LOAD], env=_env(tmp_path), capture_output=True, text=True,
                            timeout=600)
    assert loaded.returncode == 0, loaded.stderr[-800:]
    misses, hits = map(int, loaded.stdout.split())
    assert misses == 0 and hits >= 3


def test_start_does_nothing_when_the_cache_is_present_or_it_is_turned_off(tmp_path, monkeypatch):
    monkeypatch.setattr(precompile, "_child", None)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(precompile, "corpus_cache_present", lambda: True)
    assert precompile.start() is False
    monkeypatch.setattr(precompile, "corpus_cache_present", lambda: False)
    monkeypatch.setenv("STUMPCHECK_PRECOMPILE", "0")
    assert precompile.start() is False
    precompile.wait()  # no child: returns at once


_STAGES = """
import sys, time
for name in sys.argv[1:]:
    time.sleep(0.3)
    print(name, flush=True)
time.sleep(30)  # a child that has reported its last stage is done: wait ends it
"""


def test_wait_returns_at_each_stage_and_ends_the_child_after_the_last(monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", _STAGES, "population", "corpus"], stdout=subprocess.PIPE)
    monkeypatch.setattr(precompile, "_child", child)
    monkeypatch.setattr(precompile, "_reported", set())
    precompile.wait("population")
    assert precompile._reported == {"population"} and precompile._child is child and child.poll() is None
    precompile.wait("population")  # already reported: at once
    precompile.wait("corpus")
    assert precompile._reported == {"population", "corpus"} and precompile._child is None
    assert child.returncode is not None


def test_wait_gives_up_on_a_child_that_ends_without_its_stage(monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", "pass"], stdout=subprocess.PIPE)
    monkeypatch.setattr(precompile, "_child", child)
    monkeypatch.setattr(precompile, "_reported", set())
    precompile.wait("corpus")
    assert precompile._child is None and child.returncode == 0 and precompile._reported == set()
