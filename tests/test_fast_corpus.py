"""The fast corpus enclosures (stumpcheck.numerics.certified.fast.corpus) against Arb.

Reference: θ̂ⱼ, eⱼ = θ̂ⱼ − θⱼ, ∂θ̂ⱼ/∂a = Cov_α(x, y), ∂θ̂ⱼ/∂b = −Var_α(x), the second derivatives (the
joint third cumulants κ(x, y, y), −κ(x, x, y), κ(x, x, x) under α), L̂, ∇L̂ and ∇²L̂ written here in
python-flint ``arb`` balls at 256 bits directly from the definition (softmax of sᵢ = a·yᵢ − b·xᵢ,
yᵢ = 1{xᵢ ≥ θ}, on the exact doubles), with the scores shifted by their maximum and the moments
taken about the heaviest point x_c (θ̂ = x_c + Σαᵢ(xᵢ − x_c), Var = Σαᵢ((xᵢ − x_c) − (θ̂ − x_c))²,
Cov = Σαᵢ(xᵢ − θ̂)(yᵢ − ȳ) with yᵢ − ȳ written as Σ_N α resp. −Σ_P α): the same real numbers, in a
form whose ball radius stays ≤ 2⁻²⁰⁰ even when the weights are e^{−10⁴}-concentrated, so that the
ball's midpoint stands for the value (the radius is asserted). A miss is a midpoint outside the
enclosure.

Cases, m, n ∈ [1, 16]: a from −50 to 10³, b from 10⁻² to 10⁴, boxes of width 0 (points), narrow
(relative 10⁻¹⁵ … 10⁻³) and wide (a width up to 100, b over up to two decades), θ uniform, at 0, at 1
and at a sample point (a tie x = θ), points at 0, 1, 10⁻³⁰⁰ and duplicated. Each box is checked at
its midpoint, its four corners and two random points (box enclosure ∋ value), and at its midpoint and
a random point the point enclosure ∋ value. Default suite 1200 boxes; slow 12 000. 0 misses.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from flint import arb, ctx

from stumpcheck.numerics.certified.fast import corpus_enclosure, task_enclosures
from stumpcheck.numerics.corpus.empirical import loss_and_gradient
from stumpcheck.numerics.precision import InputError

PREC = 256
SEED = 2024


def _reference(x, theta, a, b):
    """Per task (θ̂, e, ∂θ̂/∂a, ∂θ̂/∂b) and (L̂, ∂L̂/∂a, ∂L̂/∂b) as arb balls (module docstring)."""
    A, B = arb(a), arb(b)
    tasks = []
    for row, th in zip(x, theta):
        th = float(th)
        ys = [1 if xi >= th else 0 for xi in row]
        scores = [A * y - B * arb(float(xi)) for xi, y in zip(row, ys)]
        c = max(range(len(row)), key=lambda i: a * ys[i] - b * float(row[i]))  # the heaviest point (a shift)
        s_c = scores[c]
        xc = arb(float(row[c]))
        e = [(s - s_c).exp() for s in scores]
        z = sum(e, arb(0))
        alpha = [ei / z for ei in e]
        dx = [arb(float(xi)) - xc for xi in row]                      # exact differences of doubles
        shift = sum((al * d for al, d in zip(alpha, dx)), arb(0))     # θ̂ − x_c
        est = xc + shift
        err = (xc - arb(th)) + shift
        centred = [d - shift for d in dx]                              # xᵢ − θ̂
        w = sum((al for al, y in zip(alpha, ys) if y), arb(0))
        v = sum((al for al, y in zip(alpha, ys) if not y), arb(0))
        cov = (v * sum((al * q for al, q, y in zip(alpha, centred, ys) if y), arb(0))
               - w * sum((al * q for al, q, y in zip(alpha, centred, ys) if not y), arb(0)))
        var = sum((al * q * q for al, q in zip(alpha, centred)), arb(0))
        # second derivatives: joint third cumulants, φᵃ = y, φᵇ = −x (y − ȳ = v on P, −w on N)
        p_sums = [sum((al * q ** k for al, q, y in zip(alpha, centred, ys) if y), arb(0)) for k in (1, 2)]
        n_sums = [sum((al * q ** k for al, q, y in zip(alpha, centred, ys) if not y), arb(0)) for k in (1, 2)]
        h_aa = v * v * p_sums[0] + w * w * n_sums[0]
        h_ab = -(v * p_sums[1] - w * n_sums[1])
        h_bb = sum((al * q ** 3 for al, q in zip(alpha, centred)), arb(0))
        tasks.append((est, err, cov, -var, h_aa, h_ab, h_bb))
    m = len(tasks)
    loss = sum((t[1] * t[1] for t in tasks), arb(0)) / (2 * m)
    ga = sum((t[1] * t[2] for t in tasks), arb(0)) / m
    gb = sum((t[1] * t[3] for t in tasks), arb(0)) / m
    haa = sum((t[2] * t[2] + t[1] * t[4] for t in tasks), arb(0)) / m
    hab = sum((t[2] * t[3] + t[1] * t[5] for t in tasks), arb(0)) / m
    hbb = sum((t[3] * t[3] + t[1] * t[6] for t in tasks), arb(0)) / m
    return tasks, (loss, ga, gb, haa, hab, hbb)


def _inside(lo: float, hi: float, ball) -> bool:
    assert ball.rad() <= arb(2) ** -200, f"reference not resolved: {ball}"
    mid = ball.mid()
    return bool(arb(lo) <= mid) and bool(mid <= arb(hi))


def _misses(encl_corpus, encl_tasks, ref) -> list[str]:
    tasks, totals = ref
    out = []
    for k, name in list(enumerate(("L", "dL/da", "dL/db", "d2L/da2", "d2L/dadb", "d2L/db2")))[:len(encl_corpus)]:
        if not _inside(encl_corpus[k, 0], encl_corpus[k, 1], totals[k]):
            out.append(f"{name}: [{encl_corpus[k, 0]!r}, {encl_corpus[k, 1]!r}] vs {totals[k]}")
    for j, t in enumerate(tasks):
        names = ("theta_hat", "e", "dtheta/da", "dtheta/db", "d2theta/da2", "d2theta/dadb", "d2theta/db2")
        for k, name in list(enumerate(names))[:encl_tasks.shape[1]]:
            if not _inside(encl_tasks[j, k, 0], encl_tasks[j, k, 1], t[k]):
                out.append(f"task {j} {name}: [{encl_tasks[j, k, 0]!r}, {encl_tasks[j, k, 1]!r}] vs {t[k]}")
    return out


def _corpus(rng: np.random.Generator):
    m, n = int(rng.integers(1, 17)), int(rng.integers(1, 17))
    x = rng.uniform(0, 1, (m, n))
    special = rng.random((m, n))
    x[special < 0.05] = 0.0
    x[(special >= 0.05) & (special < 0.1)] = 1.0
    x[(special >= 0.1) & (special < 0.12)] = 1e-300
    if n > 1 and rng.random() < 0.3:   # duplicated points
        x[:, 1] = x[:, 0]
    theta = rng.uniform(0, 1, m)
    kind = rng.integers(0, 5, m)
    theta[kind == 0] = 0.0
    theta[kind == 1] = 1.0
    ties = np.flatnonzero(kind == 2)
    theta[ties] = x[ties, rng.integers(0, n, ties.size)]   # a tie x = θ
    if rng.random() < 0.1:   # clustered points: a tight task (large b·spread only far away)
        x = np.clip(0.5 + 1e-3 * rng.standard_normal((m, n)), 0, 1)
    return x, theta


def _box(rng: np.random.Generator):
    a = float(rng.uniform(-50, 50) if rng.random() < 0.5 else 10.0 ** rng.uniform(0, 3))
    b = float(10.0 ** rng.uniform(-2, 4))
    kind = rng.integers(0, 3)
    if kind == 0:
        return (a, a), (b, b)
    if kind == 1:
        ra, rb = 10.0 ** rng.uniform(-15, -3, 2)
        wa = ra * max(abs(a), 1.0)
        return (a - wa, a + wa), (b * (1 - rb), b * (1 + rb))
    return (a, a + float(rng.uniform(0, 100))), (b, min(b * 10.0 ** rng.uniform(0, 2), 1e4))


def _points(rng, box):
    (alo, ahi), (blo, bhi) = box
    ca = min(max(0.5 * alo + 0.5 * ahi, alo), ahi)
    cb = min(max(0.5 * blo + 0.5 * bhi, blo), bhi)
    pts = [(ca, cb), (alo, blo), (alo, bhi), (ahi, blo), (ahi, bhi)]
    for _ in range(2):
        pts.append((float(rng.uniform(alo, ahi)), float(rng.uniform(blo, bhi))))
    return pts


def _run(count: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    stats = {"boxes": 0, "box_checks": 0, "point_checks": 0, "misses": []}
    with ctx.workprec(PREC):
        for i in range(count):
            x, theta = _corpus(rng)
            box = _box(rng)
            # every other box with the mean-value forms; two boxes in three with the Hessian
            hess = i % 3 != 0
            enc = corpus_enclosure(x, theta, *box, refine=bool(i % 2), hessian=hess)
            tenc = task_enclosures(x, theta, *box, hessian=hess)
            pts = _points(rng, box)
            for k, (a, b) in enumerate(pts):
                ref = _reference(x, theta, a, b)
                stats["misses"] += [f"box {box} at {(a, b)}: {s}" for s in _misses(enc, tenc, ref)]
                stats["box_checks"] += 1
                if k in (0, 5):
                    penc = corpus_enclosure(x, theta, a, b, hessian=True)
                    ptenc = task_enclosures(x, theta, a, b, hessian=True)
                    stats["misses"] += [f"point {(a, b)}: {s}" for s in _misses(penc, ptenc, ref)]
                    stats["point_checks"] += 1
            stats["boxes"] += 1
    return stats


def test_containment_against_arb():
    stats = _run(1200, SEED)
    assert stats["misses"] == [], stats["misses"][:5]
    assert stats["box_checks"] == 7 * 1200 and stats["point_checks"] == 2 * 1200


@pytest.mark.slow
def test_containment_against_arb_large():
    stats = _run(12000, SEED + 1)
    print(f"\n{stats['boxes']} boxes, {stats['box_checks']} box checks, {stats['point_checks']} point checks, "
          f"{len(stats['misses'])} misses")
    assert stats["misses"] == [], stats["misses"][:5]


def test_collapsed_enclosures_miss():
    """Negative control: the midpoint of each enclosure, as a zero-width interval, is caught."""
    rng = np.random.default_rng(SEED + 2)
    misses = checks = 0
    with ctx.workprec(PREC):
        while checks < 100:
            x, theta = _corpus(rng)
            box = ((1.0, 1.5), (3.0, 4.0))
            enc = corpus_enclosure(x, theta, *box, hessian=True)
            tenc = task_enclosures(x, theta, *box, hessian=True)
            mid = np.repeat(((enc[:, 0] + enc[:, 1]) / 2)[:, None], 2, axis=1)
            tmid = np.repeat(((tenc[..., 0] + tenc[..., 1]) / 2)[..., None], 2, axis=2)
            for a, b in _points(rng, box)[1:5]:
                ref = _reference(x, theta, a, b)
                misses += bool(_misses(mid, tmid, ref))
                checks += 1
    assert misses >= 50, misses


def test_point_widths_away_from_hazards():
    """At points with a ∈ [−5, 20], b ∈ [1, 100], θ ∈ [0.05, 0.95]: relative widths ≤ 1e-10 (and the float64 value inside)."""
    rng = np.random.default_rng(SEED + 3)
    worst = 0.0
    for _ in range(200):
        m, n = (int(k) for k in rng.integers(8, 65, 2))
        x = rng.uniform(0, 1, (m, n))
        theta = rng.uniform(0.05, 0.95, m)
        a, b = float(rng.uniform(-5, 20)), float(10.0 ** rng.uniform(0, 2))
        enc = corpus_enclosure(x, theta, a, b)
        loss, grad = loss_and_gradient(x, theta, a, b)
        for k, value in enumerate((loss, grad[0], grad[1])):
            lo, hi = enc[k]
            worst = max(worst, (hi - lo) / abs(value))
            assert lo - 1e-13 * abs(value) <= value <= hi + 1e-13 * abs(value)
    assert worst <= 1e-10, worst


def test_hessian_point_widths_away_from_hazards():
    """∇²L̂ at the same kind of points: widths ≤ 1e-9·max|∇²L̂| (measured 4·10⁻¹¹), and the float64 Hessian of
    :mod:`stumpcheck.numerics.corpus.curvature` inside to 10⁻¹²·max|∇²L̂| (its own rounding: entries cancel)."""
    from stumpcheck.numerics.corpus.curvature import loss_gradient_hessian

    rng = np.random.default_rng(SEED + 6)
    worst = 0.0
    for _ in range(100):
        m, n = (int(k) for k in rng.integers(8, 65, 2))
        x = rng.uniform(0, 1, (m, n))
        theta = rng.uniform(0.05, 0.95, m)
        a, b = float(rng.uniform(-5, 20)), float(10.0 ** rng.uniform(0, 2))
        enc = corpus_enclosure(x, theta, a, b, hessian=True)
        _, _, hess = loss_gradient_hessian(x, theta, a, b)
        scale = float(np.abs(hess).max())
        for k, value in enumerate((hess[0, 0], hess[0, 1], hess[1, 1])):
            lo, hi = enc[3 + k]
            worst = max(worst, (hi - lo) / scale)
            assert lo - 1e-12 * scale <= value <= hi + 1e-12 * scale
    assert worst <= 1e-9, worst


def test_widths_at_1024_box_of_width_1e_6():
    """m = n = 1024, a box of width 10⁻⁶ about (a, b) = (3, 10): the widths are reported; each enclosure
    contains the float64 values at the corners (to the float64 kernel's accuracy)."""
    rng = np.random.default_rng(SEED + 4)
    x = rng.uniform(0, 1, (1024, 1024))
    theta = rng.uniform(0, 1, 1024)
    box = ((3.0 - 5e-7, 3.0 + 5e-7), (10.0 - 5e-7, 10.0 + 5e-7))
    full = corpus_enclosure(x, theta, *box, hessian=True)
    enc = full[:3]
    point = corpus_enclosure(x, theta, 3.0, 10.0)
    widths = enc[:, 1] - enc[:, 0]
    print(f"\nm = n = 1024, box width 1e-6: widths L {widths[0]:.3e}, dL/da {widths[1]:.3e}, dL/db {widths[2]:.3e}; "
          f"at the centre {point[0, 1] - point[0, 0]:.3e}, {point[1, 1] - point[1, 0]:.3e}, "
          f"{point[2, 1] - point[2, 0]:.3e}; Hessian over the box "
          + ", ".join(f"[{lo:.6e}, {hi:.6e}]" for lo, hi in full[3:]))
    for a in box[0]:
        for b in box[1]:
            loss, grad = loss_and_gradient(x, theta, a, b)
            for k, value in enumerate((loss, grad[0], grad[1])):
                assert enc[k, 0] - 1e-12 * abs(value) <= value <= enc[k, 1] + 1e-12 * abs(value)
    assert np.all(widths > 0) and np.all(np.isfinite(widths))


def test_threads_do_not_change_the_result():
    rng = np.random.default_rng(SEED + 5)
    x = rng.uniform(0, 1, (600, 512))   # 600·512 ≥ 2¹⁸: the parallel path with two threads
    theta = rng.uniform(0, 1, 600)
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread only")
    for box in (((2.0, 2.0), (7.0, 7.0)), ((1.0, 1.1), (6.0, 6.5))):
        one = corpus_enclosure(x, theta, *box, hessian=True, threads=1)
        two = corpus_enclosure(x, theta, *box, hessian=True, threads=2)
        assert np.array_equal(one, two)


@pytest.mark.parametrize("args, message", [
    ((np.zeros((2, 3)), np.zeros(2), 1.0, 0.0), "b must be > 0"),
    ((np.zeros((2, 3)), np.zeros(2), 1.0, (-1.0, 2.0)), "b must be > 0"),
    ((np.full((2, 3), 1.5), np.zeros(2), 1.0, 1.0), "x must be finite"),
    ((np.zeros((2, 3)), np.full(2, np.nan), 1.0, 1.0), "theta must be finite"),
    ((np.zeros((2, 3)), np.zeros(3), 1.0, 1.0), "theta must have shape"),
    ((np.zeros((2, 3)), np.zeros(2), (2.0, 1.0), 1.0), "a must be"),
    ((np.zeros((2, 3)), np.zeros(2), math.inf, 1.0), "a must be"),
])
def test_bad_input(args, message):
    with pytest.raises(InputError, match=message):
        corpus_enclosure(*args)
