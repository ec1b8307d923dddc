"""Re-make the screenshots of docs/images/ (README, docs/view.md) from a generated file.

Usage: ``COVR_DATA_DIR=DIR .venv/bin/python scripts/view_screenshots.py EXAMPLES.jsonl QID``
(e.g. after ``covr quickstart``: ``DIR/quickstart.jsonl`` and a five-image qid). Starts
``covr view`` on a free port, drives Debian's headless chromium with Selenium, writes
``view-list.png``, ``view-example.png``, ``view-plots.png``, then ``covr render`` outputs
``render-scene.png`` and ``render-example.png``; stops the viewer it started.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "docs" / "images"


def main() -> None:
    examples, qid = Path(sys.argv[1]), sys.argv[2]
    example = next(json.loads(line) for line in examples.open() if json.loads(line)["qid"] == qid)
    OUT.mkdir(parents=True, exist_ok=True)
    covr = [sys.executable, "-m", "covr.cli.main"]
    log = OUT.parent / ".view-screenshots.log"
    with log.open("w") as handle:
        proc = subprocess.Popen(
            [*covr, "view", str(examples), "--no-browser"],
            env={**os.environ, "COVR_VIEW_PORT": "0"},
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    try:
        url = ""
        while not url:
            found = re.search(r"(http://127\.0\.0\.1:\d+/)", log.read_text())
            url = found.group(1) if found else ""
            if proc.poll() is not None:
                raise SystemExit(log.read_text())
            time.sleep(0.1)
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--window-size=1400,1000"):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(url + "?template=" + example["template"])
            driver.save_screenshot(str(OUT / "view-list.png"))
            driver.set_window_size(1400, 2400)
            driver.get(url + "example?qid=" + qid)
            driver.save_screenshot(str(OUT / "view-example.png"))
            driver.set_window_size(1400, 1600)
            driver.get(url + "plots")
            time.sleep(1)
            driver.save_screenshot(str(OUT / "view-plots.png"))
        finally:
            driver.quit()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        log.unlink(missing_ok=True)
    key = example["subgraphs"]["g"]
    source = example["source_image"]
    subprocess.run(
        [*covr, "render", source, "--subgraph", key, "--out", str(OUT / "render-scene.png")],
        check=True,
    )
    subprocess.run(
        [
            *covr,
            "render",
            "--example",
            qid,
            "--in",
            str(examples),
            "--out",
            str(OUT / "render-example.png"),
            "--scale",
            "1",
        ],
        check=True,
    )


if __name__ == "__main__":
    main()
