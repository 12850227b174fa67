"""Ambiguity-v0 baselines on the test split: accuracy per phenomenon x language with 95%
instance-bootstrap CIs, laid out like Table 2 of C3 (arXiv:2507.22968), and the minimal-pair
statistics (both readings of a pair resampled together).

Cells (every test episode, 2,689 from the paper's 1,079 instances):

* ``random@T-nopunct``: uniform over the question's options;
* ``first_option@T-nopunct``: always option A (position bias);
* ``text_only@T`` and ``text_only@T-nopunct``: the text solver fitted on the train split, with and
  without the transcriber's punctuation.

Audio cells (``--audio``) play the phonological test pairs only (rendering every turn of the suite
takes long on a shared CPU): any agent registered under ``hear_gym.agents.ambiguity`` named with
``--audio-agent NAME@ACCESS``.

Chat models (``--llm LABEL=MODEL``, a local model folder played by ``TransformersChatClient``
through the family's chat agent under ``T-nopunct``) play every ``--llm-every``-th test episode
(a spread over every phenomenon; a tiny CPU model plays about 50 episodes a minute here).

Writes run folders under benchmarks/out/ambiguity/ and benchmarks/out/ambiguity.md (the tables
for its page, benchmarks/ambiguity/baselines.md); prints the tables.

    python -m benchmarks.ambiguity.baselines [--audio-agent prosodic@A+T] [--llm tiny=PATH --llm-every 13]
"""

from __future__ import annotations

import argparse
import shutil
import time
from importlib.metadata import entry_points
from pathlib import Path

from rich.table import Table

from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.core.tables import percent_ci, print_tables, to_markdown
from hear_gym.envs.ambiguity.family import ENV_ID, FAMILY
from hear_gym.envs.ambiguity.items.generator import episodes_by_id
from hear_gym.envs.ambiguity.metrics import CONTRAST_ROWS, ROWS
from hear_gym.eval.pipeline import evaluate

OUT = Path(__file__).resolve().parents[1] / "out" / "ambiguity"
TEXT_CELLS = ("random@T-nopunct", "first_option@T-nopunct", "text_only@T", "text_only@T-nopunct")
PAPER_ROWS = tuple(r for r in ROWS if r not in CONTRAST_ROWS)


def agent_factory(name: str):
    found = [ep for ep in entry_points(group=FAMILY.agent_group) if ep.name == name]
    if not found:
        raise SystemExit(f"no agent {name!r} under {FAMILY.agent_group}")
    return found[0].load()


def run_cell(spec: str, item_ids: tuple[str, ...], factory=None) -> dict:
    """One cell (``agent@ACCESS``) on ``item_ids``; ``factory`` builds the agent (default: the
    registered agent of that name)."""
    cell = Cell.from_spec(spec, "T-nopunct")
    config = RunConfig(ENV_ID, (cell,), item_ids)
    start = time.perf_counter()
    agents = {cell.agent: factory or agent_factory(cell.agent)}
    metadata = evaluate(OUT / spec.replace("@", "_at_"), config, agents, progress=False, batch_size=16)
    print(f"{spec}: {len(item_ids)} episodes in {time.perf_counter() - start:.0f} s")
    return metadata["cells"][cell.name]


def language_table(cells: dict[str, dict], language: str, rows: tuple[str, ...]) -> Table:
    table = Table("row", *cells, title=f"{language}: accuracy % [95% CI]")
    for row in rows:
        values = [cell["metrics"].get(language, {}).get(row) for cell in cells.values()]
        if any(values):
            table.add_row(row, *(percent_ci(v) for v in values))
    return table


def pair_table(cells: dict[str, dict]) -> Table:
    table = Table(
        "minimal pairs", *cells, title="audio-decided minimal pairs (resampled by pair): % [95% CI]"
    )
    for name in ("reading_a", "reading_b", "a_minus_b", "both_right"):
        table.add_row(name, *(percent_ci(c["metrics"].get("pairs", {}).get(name)) for c in cells.values()))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--audio-agent", action="append", default=[], help="NAME@ACCESS on the phonological pairs"
    )
    parser.add_argument(
        "--llm", action="append", default=[], help="LABEL=MODEL_FOLDER, a chat model under T-nopunct"
    )
    parser.add_argument("--llm-every", type=int, default=13, help="chat models play every N-th test episode")
    args = parser.parse_args()
    shutil.rmtree(OUT, ignore_errors=True)
    test = FAMILY.item_ids("test")
    phonological = tuple(e for e in test if episodes_by_id()[e].phenomenon.value == "phonological")
    cells = {spec: run_cell(spec, test) for spec in TEXT_CELLS}
    pair_cells = {spec: run_cell(spec, phonological) for spec in args.audio_agent}
    llm_cells = {}
    for label, _, model in (spec.partition("=") for spec in args.llm):
        from agents.ambiguity.llm import AmbiguityChatAgent

        factory = AmbiguityChatAgent.from_client_spec(f"hf:{model}")
        llm_cells[f"{label}@T-nopunct"] = run_cell(f"{label}@T-nopunct", test[:: args.llm_every], factory)
    tables = [language_table(cells, lang, PAPER_ROWS + CONTRAST_ROWS) for lang in ("en", "zh", "all")]
    tables.append(pair_table({**{s: cells[s] for s in TEXT_CELLS[2:]}, **pair_cells}))
    if pair_cells:
        tables.append(language_table(pair_cells, "all", ("phonological", *CONTRAST_ROWS)))
    if llm_cells:
        tables.append(language_table(llm_cells, "all", PAPER_ROWS))
    print_tables(tables)
    (OUT.parent / "ambiguity.md").write_text(to_markdown(tables))


if __name__ == "__main__":
    main()
