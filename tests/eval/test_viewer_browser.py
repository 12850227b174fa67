"""The episode viewer in a real headless browser (Chromium from the OS packages, driven by
Selenium): the page loads with no console error, the filters change the rows shown, an audio
element plays and reports the duration of the clip the env gives, and a hostile string from a
scenario or an agent is shown as text, never run. Skips, saying why, where Chromium, its driver or
Selenium is missing (``make test-browser`` installs them; docs/evaluation.md)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import gymnasium as gym
import pytest
from viewer_runs import audio_access, legal_run

from hear_gym.core.registry import family
from hear_gym.eval.viewer import page, write_view

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if not (CHROMIUM and DRIVER):
    pytest.skip(
        "no Chromium with its driver (apt-get install chromium chromium-driver; make test-browser)",
        allow_module_level=True,
    )
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (hear-gym[dev])")

ENV_ID = "hear_gym/Onset-v0"
HOSTILE = '</script><img src=x onerror="window.pwned=1"><b>bold</b>'


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--autoplay-policy=no-user-gesture-required",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def view(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("view")
    return write_view([legal_run(ENV_ID, folder / "run", episodes=3)], folder / "view.html", per_cell=3)


def _shown(browser) -> int:
    return browser.execute_script(
        "return [...document.querySelectorAll('details.episode')].filter(e => !e.hidden).length"
    )


def _choose(browser, select_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", select_id)).select_by_visible_text(value)


def test_the_page_loads_without_console_errors(browser, view):
    browser.get(view.as_uri())
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    assert len(browser.find_elements("css selector", "#cells tbody tr")) == 2


def test_filters_change_the_rows(browser, view):
    browser.get(view.as_uri())
    assert _shown(browser) == 6
    _choose(browser, "cell-filter", "first@A+T")
    assert _shown(browser) == 3
    outcomes = browser.execute_script(
        "return [...document.querySelectorAll('details.episode')].map(e => e.dataset.outcome)"
    )
    _choose(browser, "cell-filter", "all")
    _choose(browser, "outcome-filter", outcomes[0])
    assert _shown(browser) == outcomes.count(outcomes[0])
    _choose(browser, "env-filter", ENV_ID)
    assert _shown(browser) == outcomes.count(outcomes[0])


def test_an_audio_element_plays_the_clip_the_agent_heard(browser, view):
    browser.get(view.as_uri())
    first = browser.execute_script(
        "const card = document.querySelector('details.episode'); card.open = true;"
        "return [card.querySelector('summary').textContent, card.querySelectorAll('audio').length]"
    )
    assert first[1] >= 1
    browser.execute_script("const a = document.querySelector('audio'); a.muted = true; a.play();")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        played, duration = browser.execute_script(
            "const a = document.querySelector('audio'); return [a.currentTime > 0 || a.ended, a.duration]"
        )
        if played:
            break
        time.sleep(0.1)
    assert played, "the audio element did not play"
    # the first episode shown is the first cell's first episode; its first clip, straight from the env
    summary = first[0]
    item_id = summary.split(" · ")[2].split(" (")[0]
    seed = int(summary.split("seed ")[1].split(")")[0])
    env = gym.make(ENV_ID, access=audio_access(ENV_ID), **family(ENV_ID).episode_kwargs([item_id]))
    observation, _ = env.reset(seed=seed, options=family(ENV_ID).reset_options(item_id))
    assert duration == pytest.approx(int(observation["audio_length"][0]) / 16_000, abs=1e-3)


def test_a_hostile_string_is_shown_as_text(browser, tmp_path):
    hostile_page = tmp_path / "hostile.html"
    episode = {
        "env": HOSTILE,
        "run": "r",
        "cell": HOSTILE,
        "item_id": HOSTILE,
        "rollout": 0,
        "seed": 0,
        "return": 0.0,
        "outcome": HOSTILE,
        "note": HOSTILE,
        "turns": [
            {
                "texts": {"transcript": HOSTILE},
                "audio": None,
                "duration": 0.0,
                "reply": HOSTILE,
                "reward": 0.0,
                "running_return": 0.0,
            }
        ],
    }
    cell = {
        "env": HOSTILE,
        "run": "r",
        "cell": HOSTILE,
        "episodes": 1,
        "return": {"point": 0.0, "low": 0.0, "high": 0.0},
    }
    hostile_page.write_text(page({"cells": [cell], "episodes": [episode]}))
    browser.get(hostile_page.as_uri())
    assert browser.execute_script("return document.querySelectorAll('img, b').length") == 0
    assert browser.execute_script("return window.pwned === undefined")
    assert HOSTILE in browser.find_element("css selector", ".reply").get_attribute("textContent")
