"""Judges for Ambiguity's free-text answers (the multi-turn dialogues' last reply), and their
agreement.

* ``RuleJudge``: offline; a reply is correct when it names the reference option and no other
  (``hear_gym.envs.ambiguity.scoring.match_free_text``, the env's own rule).
* ``LLMJudge``: an LLM through the repo's chat clients (``agents.llm.clients``: the
  OpenAI-compatible ``OpenAIChatClient``, or any ``ChatClient``). The paper (Section 4.2) has GPT-4o
  and DeepSeek-R1 compare a model's output with the reference answer, the task divided into small
  steps, and decide correctness; ``JUDGE_PROMPT`` follows that structure: the question, the
  reference, the response, three steps, and a last line ``Correct`` or ``Incorrect``. A reply that
  ends otherwise counts as incorrect and is flagged ``unparsed``.

``judge_records`` re-scores the records whose last answer was free text; ``agreement`` compares
two judges' verdicts (share of equal verdicts and Cohen's kappa), reported when both run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agents.llm.clients import ChatClient
from hear_gym.envs.ambiguity.scoring import match_free_text

JUDGE_PROMPT = """You are evaluating a spoken dialogue model's answer.
Question (asked again at the end of the dialogue): {question}
Options the user mentioned: {options}
Reference answer: {reference}
Model response: {response}

Step 1: Identify which option, if any, the response commits to.
Step 2: Compare it with the reference answer; wording may differ, the meaning must match.
Step 3: If the response commits to the reference and to no other option, it is correct.
Explain briefly, then write the verdict alone on the last line: Correct or Incorrect."""
_VERDICT = re.compile(r"^\W*(correct|incorrect)\W*$", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    correct: bool
    parsed: bool = True


class Judge(Protocol):
    def judge(self, question: str, options: Sequence[str], reference: int, response: str) -> Verdict: ...


class RuleJudge:
    def judge(self, question: str, options: Sequence[str], reference: int, response: str) -> Verdict:
        return Verdict(match_free_text(response, tuple(options)) == reference)


class LLMJudge:
    def __init__(self, client: ChatClient) -> None:
        self.client = client

    @staticmethod
    def messages(
        question: str, options: Sequence[str], reference: int, response: str
    ) -> list[dict[str, str]]:
        content = JUDGE_PROMPT.format(
            question=question, options="; ".join(options), reference=options[reference], response=response
        )
        return [{"role": "user", "content": content}]

    def judge(self, question: str, options: Sequence[str], reference: int, response: str) -> Verdict:
        reply = self.client.complete([self.messages(question, options, reference, response)])[0]
        lines = [line for line in reply.strip().splitlines() if line.strip()]
        match = _VERDICT.match(lines[-1]) if lines else None
        if match is None:
            return Verdict(False, parsed=False)
        return Verdict(match.group(1).lower() == "correct")


def free_text_records(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records whose last answer was free text the rule read (``judged``), the ones a judge decides."""
    return [r for r in records if r["kinds"][-1] == "judged"]


def judge_records(records: Sequence[dict[str, Any]], judge: Judge) -> list[Verdict]:
    """``judge``'s verdict on the last reply of each free-text record (``free_text_records``)."""
    return [
        judge.judge(r["last_said"], r["options"][-1], r["answers"][-1], r["replies"][-1])
        for r in free_text_records(records)
    ]


def agreement(a: Sequence[Verdict], b: Sequence[Verdict]) -> dict[str, float]:
    """Share of equal verdicts and Cohen's kappa between two judges on the same replies."""
    if len(a) != len(b) or not a:
        raise ValueError("agreement needs both judges' verdicts on the same, non-empty replies")
    x = [v.correct for v in a]
    y = [v.correct for v in b]
    n = len(x)
    observed = sum(i == j for i, j in zip(x, y, strict=True)) / n
    px, py = sum(x) / n, sum(y) / n
    expected = px * py + (1 - px) * (1 - py)
    kappa = 1.0 if expected == 1 else (observed - expected) / (1 - expected)
    return {"n": float(n), "agreement": observed, "kappa": kappa}
