import json

import pytest

from hear_gym.envs.hear2act.scenarios.bank import (
    BankFormatError,
    read_bank,
    scenarios_for,
    split_of,
    write_bank,
)


def test_export_import_round_trip(tmp_path, bank):
    path = tmp_path / "bank.jsonl"
    assert write_bank(path, bank) == 480
    assert tuple(read_bank(path)) == bank
    first = json.loads(path.read_text().splitlines()[0])
    assert set(first) >= {
        "scenario_id",
        "domain",
        "family",
        "seed_index",
        "persona",
        "request",
        "concerns",
        "candidates",
        "gold_option",
        "opening_option",
        "generator_version",
    }
    assert [c["level"] for c in first["concerns"]] == ["L1", "L2", "L3"]
    assert [c["option_id"] for c in first["candidates"]] == list(range(1, 12))


def test_bad_lines_are_named(tmp_path, bank):
    path = tmp_path / "bank.jsonl"
    write_bank(path, bank[:3])
    lines = path.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["candidates"][4]["rating"] = 9.5
    path.write_text("\n".join([lines[0], json.dumps(broken), lines[2]]) + "\n")
    with pytest.raises(BankFormatError, match=r"bank\.jsonl:2: field candidates\.4\.rating"):
        read_bank(path)
    path.write_text(lines[0] + "\n{not json\n")
    with pytest.raises(BankFormatError, match=r":2: not valid JSON"):
        read_bank(path)
    path.write_text(lines[0] + "\n" + lines[0] + "\n")
    with pytest.raises(BankFormatError, match="duplicate scenario_id"):
        read_bank(path)
    no_gold = json.loads(lines[0])
    no_gold["gold_option"] = no_gold["opening_option"]
    path.write_text(json.dumps(no_gold) + "\n")
    with pytest.raises(BankFormatError, match="gold_option"):
        read_bank(path)


def test_splits_hold_out_whole_scenarios_in_every_domain(bank):
    splits = {name: scenarios_for(name) for name in ("train", "dev", "test")}
    assert [len(splits[n]) for n in ("train", "dev", "test")] == [288, 96, 96]
    ids = [set(s.scenario_id for s in part) for part in splits.values()]
    assert not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2])
    for part in splits.values():
        assert len({s.domain for s in part}) == 48
    assert split_of("budget_airline_tickets", 0) == split_of("budget_airline_tickets", 0)


def test_scenario_selection_errors():
    with pytest.raises(ValueError, match="split must be one of"):
        scenarios_for("validation")
    with pytest.raises(KeyError, match="unknown scenario id"):
        scenarios_for(item_ids=["nope-00"])
    with pytest.raises(ValueError, match="either split or item_ids"):
        scenarios_for("test", ["budget_airline_tickets-00"])
