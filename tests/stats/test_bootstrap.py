import numpy as np
import pytest

from hear_gym.stats.bootstrap import RatioSums, contrast_ci, pooled_ci, ratio_ci


def binary(values):
    values = np.asarray(values, dtype=float)
    return RatioSums(values, np.ones_like(values))


def test_ratio_ci_covers_the_true_rate_and_is_reproducible():
    rng = np.random.default_rng(1)
    sums = binary(rng.random(480) < 0.3)
    est = ratio_ci(sums)
    assert est.low < 0.3 < est.high and est.low < est.point < est.high
    assert 0.06 < est.high - est.low < 0.10  # ~ 2 * 1.96 * sqrt(.3 * .7 / 480)
    assert ratio_ci(sums) == est


def test_ratio_of_sums_pools_units():
    sums = RatioSums(np.array([1.0, 0.0, 3.0]), np.array([1.0, 0.0, 4.0]))
    assert ratio_ci(sums).point == pytest.approx(4 / 5)


def test_paired_contrast_uses_the_pairing():
    rng = np.random.default_rng(2)
    base = rng.random(200)
    shifted = base + 0.05
    est = contrast_ci([(1.0, binary(shifted)), (-1.0, binary(base))])
    assert est.point == pytest.approx(0.05) and est.high - est.low < 1e-9  # paired: no noise
    unpaired = contrast_ci([(1.0, binary(rng.permutation(shifted))), (-1.0, binary(base))])
    assert unpaired.high - unpaired.low > 0.05


def test_pooled_averages_models_equally():
    a, b = binary(np.ones(50)), binary(np.zeros(50))
    assert pooled_ci([a, b]).point == pytest.approx(0.5)


def test_unpaired_inputs_are_refused():
    with pytest.raises(ValueError, match="same scenarios"):
        contrast_ci([(1.0, binary(np.ones(3))), (-1.0, binary(np.ones(4)))])
