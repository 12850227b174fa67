"""What DeliveryPlan hands out that depends only on the case and the side on show, computed once
per process and reused by every env and episode: the info record, and, per ``discrete``
catalogue entry, its decoded output, scores and episode-record entry, and the pair scores of two
entries. Citations here name records by kind; the prompt, which shows the episode's drawn ids
and order (``display``), is built per step by ``side_prompt``.

Each value is computed by the function the env called at every step before (``side_prompt``,
``decode_typed`` over ``encode_typed``, ``score_case``, ``score_pair``), so observations, rewards
and infos are unchanged byte for byte; callers get their own copies of every dict and list
(``SharedRecord``, ``dict``), never the kept ones.

Memory: a case's tables hold its two infos at first use (~2 kB), then what is played:
at most 30 catalogue entries per side and 15 x 15 pairs of plan-table keys. Every entry and pair
of all 100 cases played (a long run on the ``all`` split) holds ~26 MB (tracemalloc: 9 MB of
entries, 7 MB of their compiled records, 8 MB of pairs); a run sees only its split's cases.
A catalogue entry cites a source-kind record by its place among the listed ones, so its play is
kept per side and per which of the two recordings the episode lists first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from hear_gym.core.records import SharedRecord
from hear_gym.envs.deliveryplan.actions import (
    CATALOGUE,
    decode_catalogue,
    decode_typed,
    encode_typed,
)
from hear_gym.envs.deliveryplan.cases import UTTERANCE_KIND, Case, CaseView, cases_by_id
from hear_gym.envs.deliveryplan.display import Display
from hear_gym.envs.deliveryplan.plan import key_name
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE
from hear_gym.envs.deliveryplan.verifier import PlannerOutput, score_case, score_pair

MAX_TEXT_CHARS = 600


def side_prompt(case: Case, side: int, display: Display, *, labels: bool) -> str:
    """The case side as text: the utterance, role and scene, then the evidence records in the
    episode's order under the side's ids; ``labels=False`` hides the recordings' emotion,
    intensity and voice and keeps their statements (the take of the utterance is the one heard;
    its cue id is what the planner cites). Cut at ``MAX_TEXT_CHARS``."""
    view = case.original if side == 0 else case.edited
    words = " ".join(f"{i}:{w}" for i, w in enumerate(case.words))
    lines = [
        f"utterance: {case.utterance} (words {words})",
        f"role: {case.role}",
        f"scene: {case.scene}",
        "evidence:",
    ]
    for name in display.order:
        record, cue = view.record(name), display.ids[side][name]
        if record.kind == UTTERANCE_KIND:
            lines.append(f"[{cue}] {record.kind}: {record.text}")
        elif labels:
            lines.append(
                f"[{cue}] {record.kind}: emotion {record.emotion}, intensity {record.intensity} "
                f'("{record.text}", voice {record.voice})'
            )
        else:
            lines.append(f'[{cue}] {record.kind}: a recording of "{record.text}"')
    return "\n".join(lines)[:MAX_TEXT_CHARS]


def side_info(case: Case, side: int, view: CaseView) -> dict[str, Any]:
    """The info of a case side: its ground truth, never observed (the env adds the episode's
    ids of the gold records: ``gold_evidence``, ``decisive_cue``, ``cue_ids``)."""
    return {
        "item_id": case.case_id,
        "step_index": side,
        "source_key": key_name(*view.source_key),
        "expected_plan": view.expected_plan.as_dict(),
        "gold_records": sorted(view.gold_evidence),
    }


def output_record(output: PlannerOutput) -> dict[str, Any]:
    """A planner output as the episode record stores it."""
    return {
        "evidence": sorted(output.citations),
        "plan": None if output.plan is None else output.plan.as_dict(),
    }


@dataclass(frozen=True)
class CataloguePlay:
    """A catalogue entry played on a case side."""

    output: PlannerOutput
    scores: dict[str, float]  # the kept scores: hand out ``dict(scores)``
    record: SharedRecord  # ``output_record(output)``


@dataclass
class SideTables:
    view: CaseView
    info: SharedRecord
    plays: dict[tuple[int, tuple[str, ...]], CataloguePlay] = field(default_factory=dict)


class CaseTables:
    def __init__(self, case: Case) -> None:
        self.case = case
        self.sides = tuple(
            SideTables(view, SharedRecord(side_info(case, side, view)))
            for side, view in enumerate((case.original, case.edited))
        )
        self.source_key = key_name(*case.original.source_key)
        self.edited_key = key_name(*case.edited.source_key)
        self.declared_delta = SharedRecord(case.as_dict()["declared_delta"])
        self._pairs: dict[tuple[tuple[str, str], tuple[str, str]], dict[str, float]] = {}

    def play(self, side: int, index: int, order: tuple[str, ...]) -> CataloguePlay:
        """Catalogue entry ``index`` on ``side`` with the records listed in ``order``, played as
        the typed action it stands for (what the ``discrete`` format has always done)."""
        tables = self.sides[side]
        play = tables.plays.get((index, order))
        if play is None:
            view = tables.view
            typed = encode_typed(decode_catalogue(index, order), order)
            output = decode_typed(typed, order, len(self.case.words))
            scores = score_case(output, view.gold_evidence, view.decisive_cue, view.expected_plan)
            play = CataloguePlay(output, scores, SharedRecord(output_record(output)))
            tables.plays[index, order] = play
        return play

    def pair(self, original: int, edited: int) -> dict[str, float]:
        """The pair scores of catalogue entries ``original`` (played on side 0) and ``edited``
        (side 1), a new dict. Kept per pair of plan-table keys: an entry's decoded plan is its
        key's row whatever it cites, and the case fixes the words and the declared delta."""
        keys = (CATALOGUE[original][1], CATALOGUE[edited][1])
        pair = self._pairs.get(keys)
        if pair is None:
            pair = self._pairs[keys] = score_pair(
                PLAN_TABLE[keys[0]], PLAN_TABLE[keys[1]], self.case.declared_delta
            )
        return dict(pair)


@cache
def case_tables(case_id: str) -> CaseTables:
    return CaseTables(cases_by_id()[case_id])
