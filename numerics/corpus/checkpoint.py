"""Checkpoints of a GD run on a corpus: atomic .npz writes, validated reads.

A checkpoint holds the whole state needed to continue bit for bit: the step
k, the iterate z_k = (a_k, b_k), the trajectory recorded so far, η and the
settings (as JSON), and a fingerprint of the corpus (SHA-256 of the shapes and
the raw float64 bytes of x and θ). Every file is written to a temporary file
in the same folder and moved into place with ``os.replace``, so an
interruption leaves either the previous checkpoint or the new one, never half
of one. Floats are stored as float64 arrays (exact, no decimal round trip).

So that a long run does not rewrite its whole history at every checkpoint,
the trajectory is stored in append-only parts ``trajectory-<first record>.npz``
holding the records added since the previous checkpoint; the state file
``checkpoint.npz`` (written last) lists the parts it covers and their lengths.
A part not listed (left by an interruption between the two writes) is ignored
and later overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from stumpcheck.numerics.precision import InputError

__all__ = ["CHECKPOINT_NAME", "FORMAT_VERSION", "TRAJECTORY_KEYS", "Checkpoint", "CheckpointWriter",
           "corpus_fingerprint", "read_checkpoint"]

CHECKPOINT_NAME = "checkpoint.npz"
FORMAT_VERSION = 2
TRAJECTORY_KEYS = ("step", "t", "a", "b", "loss")


def corpus_fingerprint(x, theta) -> str:
    """SHA-256 (hex) of the shapes and float64 bytes of x and θ."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    digest = hashlib.sha256()
    digest.update(json.dumps([list(x.shape), list(theta.shape)]).encode())
    digest.update(x.tobytes())
    digest.update(theta.tobytes())
    return digest.hexdigest()


@dataclass
class Checkpoint:
    """State after ``step`` steps: iterate (a, b), trajectory so far, η, settings, corpus fingerprint.

    ``stopped_because`` is None while the run is unfinished, else why it ended.
    """

    step: int
    a: float
    b: float
    eta: float
    eta_rule: str
    settings: dict
    fingerprint: str
    trajectory: dict
    stopped_because: str | None = None
    parts: list = field(default_factory=list)


def _atomic_savez(path: Path, **arrays) -> None:
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **arrays)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp_name, path)
    except BaseException:
        try:
            os.unlink(temp_name)
        except OSError:
            pass
        raise


def _trajectory_arrays(trajectory: dict, start: int, stop: int) -> dict:
    return {k: np.asarray(trajectory[k][start:stop], dtype=np.int64 if k == "step" else np.float64)
            for k in TRAJECTORY_KEYS}


class CheckpointWriter:
    """Writes checkpoints of one run into ``directory``, appending only the new trajectory records.

    ``parts`` continues the parts of a checkpoint read back for a resume.
    """

    def __init__(self, directory, parts=()):
        self.directory = Path(directory)
        self.parts = [list(p) for p in parts]  # [file name, first record, count]

    @property
    def covered(self) -> int:
        return sum(count for _, _, count in self.parts)

    def write(self, state: Checkpoint) -> Path:
        """Write the new records as a part, then the state file; return the state file's path."""
        self.directory.mkdir(parents=True, exist_ok=True)
        total = len(state.trajectory["step"])
        first = self.covered
        if total > first:
            name = f"trajectory-{first:012d}.npz"
            _atomic_savez(self.directory / name, **_trajectory_arrays(state.trajectory, first, total))
            self.parts.append([name, first, total - first])
        meta = {"format_version": FORMAT_VERSION, "step": int(state.step), "eta_rule": state.eta_rule,
                "settings": state.settings, "fingerprint": state.fingerprint,
                "stopped_because": state.stopped_because, "parts": self.parts}
        target = self.directory / CHECKPOINT_NAME
        _atomic_savez(target, meta=np.str_(json.dumps(meta)), a=np.float64(state.a), b=np.float64(state.b),
                      eta=np.float64(state.eta))
        return target


def _corrupt(path, exc) -> InputError:
    return InputError(f"corrupt checkpoint {path} ({type(exc).__name__}: {exc})".replace("\n", " "))


def _read_part(directory: Path, name, first, count) -> dict:
    if not (isinstance(name, str) and isinstance(first, int) and isinstance(count, int) and count > 0
            and name == f"trajectory-{first:012d}.npz"):
        raise InputError(f"corrupt checkpoint in {directory} (bad trajectory part entry {name!r})")
    path = directory / name
    from stumpcheck.numerics.resources import check_regular_input

    if not path.exists():
        raise InputError(f"corrupt checkpoint in {directory} (its trajectory part {name} is missing)")
    check_regular_input(path, "checkpoint")  # a FIFO in its place would block the read
    try:
        with np.load(path, allow_pickle=False) as data:
            part = {k: np.array(data[k]) for k in TRAJECTORY_KEYS}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as exc:
        raise _corrupt(path, exc) from None
    if any(part[k].shape != (count,) for k in TRAJECTORY_KEYS):
        raise InputError(f"corrupt checkpoint {path} (expected {count} records)")
    return part


def read_checkpoint(directory) -> Checkpoint:
    """Read DIRECTORY/checkpoint.npz and its trajectory parts; InputError (one line) if missing,
    unreadable or inconsistent."""
    directory = Path(directory)
    path = directory / CHECKPOINT_NAME
    if not path.is_file():
        raise InputError(f"no checkpoint to resume from: {path} does not exist")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"][()]))
            a, b, eta = (float(data[k][()]) for k in ("a", "b", "eta"))
        step, parts = meta["step"], meta["parts"]
        settings, fingerprint = meta["settings"], meta["fingerprint"]
        version, eta_rule, stopped = meta["format_version"], meta["eta_rule"], meta["stopped_because"]
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError, TypeError, IndexError) as exc:
        raise _corrupt(path, exc) from None
    if version != FORMAT_VERSION:
        raise InputError(f"checkpoint {path} has format version {version}, expected {FORMAT_VERSION}")
    if not isinstance(parts, list) or not all(isinstance(p, list) and len(p) == 3 for p in parts):
        raise InputError(f"corrupt checkpoint {path} (bad list of trajectory parts)")
    pieces, first = [], 0
    for name, start, count in parts:
        if start != first:
            raise InputError(f"corrupt checkpoint {path} (trajectory parts are not contiguous)")
        pieces.append(_read_part(directory, name, start, count))
        first += count
    trajectory = {k: np.concatenate([p[k] for p in pieces]) if pieces else
                  np.zeros(0, dtype=np.int64 if k == "step" else np.float64) for k in TRAJECTORY_KEYS}
    if (not isinstance(step, int) or step < 0 or not isinstance(settings, dict) or not isinstance(fingerprint, str)
            or not all(np.all(np.isfinite(trajectory[k])) for k in TRAJECTORY_KEYS)
            or not (np.isfinite(a) and np.isfinite(b) and np.isfinite(eta) and eta > 0)):
        raise InputError(f"corrupt checkpoint {path} (inconsistent contents)")
    return Checkpoint(step=step, a=a, b=b, eta=eta, eta_rule=str(eta_rule), settings=settings,
                      fingerprint=fingerprint, trajectory=trajectory, stopped_because=stopped, parts=parts)
