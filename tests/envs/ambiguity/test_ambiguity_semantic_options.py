"""The semantic items' option sets do not name the gold: a solver that sees only where each
meaning recurs among the options (``agents/ambiguity/option_structure.py``) stays at chance."""

from agents.ambiguity.option_structure import held_out_accuracy
from hear_gym.envs.ambiguity.items import semantic

CHANCE = 0.25  # four options


def test_option_structure_does_not_decide_a_semantic_item():
    accuracy, items = held_out_accuracy()
    assert items >= 200
    assert accuracy <= CHANCE + 0.05, accuracy


def test_the_check_fails_when_the_structure_names_the_gold(rebuilt_suite):
    """The leaky construction: (m1, m2), (m1, w1), (w2, m2), (w1, w2), the gold's meanings always
    in the same place."""

    def naming_the_gold(draft, rng):
        (m1, m2), (w1, w2) = draft.meanings, draft.wrong
        return ((m1, m2), (m1, w1), (w2, m2), (w1, w2))

    rebuilt_suite.setattr(semantic, "option_pairs", naming_the_gold)
    accuracy, _ = held_out_accuracy()
    assert accuracy >= 0.95, accuracy
