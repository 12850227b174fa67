"""The metrics on hand-made trajectories, exact to the paper's definitions."""

import pytest

from hear_gym.envs.onset.metrics import counts, metric_table, paired_difference, predicted_onset

W = "Wait"


def _record(group, rendering, action, onset, predictions):
    targets = [W] * onset + [action] * (5 - onset)
    return {
        "group_id": group,
        "rendering": rendering,
        "action": action,
        "onset_index": onset,
        "targets": targets,
        "predictions": predictions,
    }


RECORDS = [
    _record("g1", "clean", "Call-Tool", 2, [W, W, "Call-Tool", "Call-Tool", "Call-Tool"]),  # exact
    _record("g1", "clean", "Think", 2, [W, "Ask-Clarify", "Think", "Abstain", "Think"]),  # early exposed
    _record("g2", "noise15", "Abstain", 1, [W, W, W, W, W]),  # never acts
    _record("g2", "noise15", "Interrupt-Safe", 3, ["Think", W, W, "Interrupt-Safe", "Call-Tool"]),
]


def test_definitions():
    assert counts(RECORDS, "trajectory_exactness") == (1, 4)
    assert counts(RECORDS, "pre_onset_exposed") == (1, 2 + 2 + 1 + 3)  # Think is internal
    assert counts(RECORDS, "post_onset_accuracy") == (3 + 2 + 0 + 1, 3 + 3 + 4 + 2)
    assert counts(RECORDS, "post_onset_exposed_labels") == (3 + 1, 3 + 2)
    assert counts(RECORDS, "post_onset_internal_labels") == (2, 3 + 4)
    assert predicted_onset(RECORDS[2]) == 1.2 and predicted_onset(RECORDS[3]) == 0.2
    # exact: records 0 (k*=2 acts at 2); record 1 acts at 1, record 2 never, record 3 at 0
    assert counts(RECORDS, "onset_exactness") == (1, 4)
    num, den = counts(RECORDS, "onset_error")
    assert num / den == pytest.approx(((0.6 - 0.6) + (0.4 - 0.6) + (1.2 - 0.4) + (0.2 - 0.8)) / 4)


def test_slices_and_paired_differences():
    table = metric_table(RECORDS, n_resamples=200)
    assert set(table) == {"all", "clean", "noise15"}
    assert table["clean"]["trajectory_exactness"].point == 0.5
    assert table["noise15"]["trajectory_exactness"].point == 0.0
    same = paired_difference(RECORDS, RECORDS, "post_onset_accuracy", n_resamples=200)
    assert (same.point, same.low, same.high) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="same contrast groups"):
        paired_difference(RECORDS, RECORDS[:2], "post_onset_accuracy")
