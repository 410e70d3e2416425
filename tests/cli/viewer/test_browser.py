"""``agent view`` in a real browser: Debian's chromium, driven by Selenium through
chromium-driver, against the real command serving on 127.0.0.1 (port 0). It clicks
runs -> run -> (a filter, applied by the viewer's script) -> case -> runs -> compare ->
case, and checks the browser logged no error (a blocked script or stylesheet would be one).

Screenshots of each page are kept in ``.artifacts/viewer/`` at the repository root
(gitignored). Skipped, saying why, only where chromium or chromium-driver is missing
(.ci/run installs both)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.chromium import CHROMIUM, DRIVER, headless_flags
from tests.cli.viewer.runs import HOSTILE, sample_folder
from tests.cli.viewer.server import serving

ARTIFACTS = Path(__file__).resolve().parents[3] / ".artifacts" / "viewer"
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="chromium and chromium-driver are not installed here (.ci/run installs both)",
)


@pytest.fixture
def browser(tmp_path) -> Iterator[object]:
    """Headless chromium with a fresh profile, no network but loopback."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM or ""
    for flag in (
        *headless_flags(tmp_path / "profile"),
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver, name: str) -> None:
    """A screenshot kept as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def test_runs_run_case_compare_in_chromium(browser, tmp_path, capsys):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.wait import WebDriverWait

    driver = browser
    wait = WebDriverWait(driver, 20)
    root = sample_folder(tmp_path / "runs")
    with serving(str(root)) as (_, line):
        url = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert url, line
        driver.get(url[1])
        assert driver.title == "Runs · agent view"
        runs = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#runs a.run-link")]
        assert runs == ["nested/new.jsonl", "base.jsonl", "matrix.jsonl", "repeats.jsonl"]
        shot(driver, "1-runs")

        driver.find_element(By.LINK_TEXT, "nested/new.jsonl").click()
        wait.until(lambda d: d.find_elements(By.ID, "cases"))
        statuses = [
            tr.get_attribute("data-status")
            for tr in driver.find_elements(By.CSS_SELECTOR, "#cases tbody tr")
        ]
        assert statuses == ["failed", "error", "passed", "passed"]
        assert HOSTILE in driver.find_element(By.ID, "cases").text  # shown as text, not run
        shot(driver, "2-run")

        Select(driver.find_element(By.ID, "status-filter")).select_by_value("failing")
        wait.until(lambda d: "status=failing" in d.current_url)  # the script submitted it
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#cases tbody tr")) == 2)
        assert driver.find_element(By.ID, "shown").text == "1–2 of 2 results (failures first)"
        shot(driver, "3-run-failing")

        driver.find_element(By.LINK_TEXT, "paris").click()
        wait.until(lambda d: d.find_elements(By.ID, "case-id"))
        assert driver.find_element(By.ID, "case-id").text == "paris"
        assert driver.find_element(By.ID, "failure").text == "expected output to contain 'sunny'"
        assert "get_forecast (weather)" in driver.find_element(By.ID, "tool-calls").text
        rows = driver.find_elements(By.CSS_SELECTOR, "#assertions tbody tr")
        actuals = [row.find_elements(By.TAG_NAME, "td")[-1].text for row in rows]
        assert actuals == ["I cannot say", "(not recorded)"]  # never an empty cell
        shot(driver, "4-case")

        driver.find_element(By.ID, "home").click()
        wait.until(lambda d: d.find_elements(By.ID, "compare-form"))
        Select(driver.find_element(By.ID, "compare-base")).select_by_value("base.jsonl")
        Select(driver.find_element(By.ID, "compare-new")).select_by_value("nested/new.jsonl")
        driver.find_element(By.ID, "compare-button").click()
        wait.until(lambda d: d.find_elements(By.ID, "counts"))
        assert driver.find_element(By.ID, "counts").text == (
            "Regressions: 1 · Passing: 2 · New cases: 1"
        )
        regressions = driver.find_element(By.ID, "kind-regression").text
        assert "paris passed failed" in regressions
        shot(driver, "5-compare")

        driver.find_element(By.CSS_SELECTOR, "#kind-regression a.new-case").click()
        wait.until(lambda d: d.find_elements(By.ID, "case-id"))
        assert driver.find_element(By.ID, "case-id").text == "paris"
        shot(driver, "6-compared-case")

        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert errors == []
    with capsys.disabled():
        print(f"\nscreenshots of agent view in chromium: {ARTIFACTS}")
