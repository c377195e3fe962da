#!/usr/bin/python3
"""How fast the dashboard serves a large experiment: 10,000 trials and
1,000,000 results in one synthetic experiment.db (the real schema, written
with SQL in one transaction), served by the real `tunerun dashboard`.

Prints, for the experiment page:
  - time to first byte of the page, and of each JSON endpoint it asks for
    (cold: the first request computes; warm: the answer cached by fingerprint),
    with the size sent;
  - "page usable" in headless Chromium: from navigation until the trial table,
    the learning curves and the parallel coordinates are drawn;
and, as the anchor, reading every result row the way a page that shipped all
of them would have to (SELECT * FROM all_results), with each number's ratio
to it.

Usage: /usr/bin/python3 benchmarks/dashboard_load.py --tunerun build/tunerun
       [--trials 10000 --iterations 100] [--keep DIR]
"""
import argparse
import http.client
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_experiment(path, trials, iterations):
    os.makedirs(path)
    con = sqlite3.connect(os.path.join(path, "experiment.db"))
    con.execute("PRAGMA journal_mode=WAL")
    with open(os.path.join(ROOT, "storage", "schema.sql")) as f:
        con.executescript(f.read())
    rng = random.Random(1)
    sweep = {"sweep": {"param_space": {"lr": {"loguniform": [1e-4, 1e-1]}, "ceiling": {"uniform": [0.6, 0.95]},
                                       "layers": {"randint": [1, 8]}, "opt": {"choice": ["adam", "sgd"]}},
                       "scheduler": {"type": "fifo"}}}
    con.execute("BEGIN")
    con.execute("INSERT INTO experiment VALUES (1, 'big', 'accuracy', 'max', json(?), 1000, 'FINISHED', 9000)",
                (str(sweep).replace("'", '"'),))
    rows = [(f"big_{i:05d}", i, 10 ** rng.uniform(-4, -1), rng.uniform(0.6, 0.95), rng.randint(1, 7),
             rng.choice(["adam", "sgd"])) for i in range(trials)]
    con.executemany(
        "INSERT INTO trials (trial_id, trial_index, config, status, status_reason, trial_dir, created_at,"
        " started_at, finished_at, last_iteration) VALUES (?1, ?2,"
        " json_object('lr', ?3, 'ceiling', ?4, 'layers', ?5, 'opt', ?6), 'TERMINATED', 'done', '', 1000 + ?2,"
        " 1000 + ?2, 2000 + ?2, " + str(iterations) + ")", rows)
    con.execute("INSERT INTO trial_events (trial_id, at, from_status, to_status, reason)"
                " SELECT trial_id, created_at, NULL, 'PENDING', 'created' FROM trials")
    # Every result in one statement: a curve that rises towards the trial's ceiling at a speed set by lr.
    con.execute(f"""
        WITH RECURSIVE it(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM it WHERE k < {iterations}),
        t AS (SELECT trial_id, trial_index, json_extract(config, '$.ceiling') AS c,
                     json_extract(config, '$.lr') * 100 AS s FROM trials)
        INSERT INTO results (trial_id, training_iteration, timestamp, time_this_iter_s, time_total_s, metrics)
        SELECT trial_id, k, 1000 + trial_index + k * 0.1, 0.1, k * 0.1,
               json_object('accuracy', c * (1 - 1.0 / (1 + k * s)), 'loss', 1 - c * (1 - 1.0 / (1 + k * s)))
        FROM t, it ORDER BY trial_index, k""")
    con.execute("COMMIT")
    # The schema again: it fills trial_last_result from the results inserted above.
    with open(os.path.join(ROOT, "storage", "schema.sql")) as f:
        con.executescript(f.read())
    n = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return n


def get(port, path):
    """(seconds to the first byte, seconds to the whole body, bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    start = time.perf_counter()
    conn.request("GET", path)
    res = conn.getresponse()
    first = time.perf_counter() - start
    body = res.read()
    total = time.perf_counter() - start
    conn.close()
    if res.status != 200:
        sys.exit(f"GET {path}: {res.status} {body[:200]!r}")
    return first, total, len(body)


def page_usable(url):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,2600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        driver.get(url.replace("#/exp/big", ""))  # warm the browser itself (process start, Chart.js parse)
        drawn = ("const n = (id) => { const c = Chart.getChart(document.getElementById(id));"
                 " return c ? c.data.datasets.filter((d) => d.trial).length : 0; };"
                 " return document.querySelectorAll('#trials tbody tr').length > 0 && n('curves') > 0"
                 " && document.getElementById('parallel').dataset.lines"
                 " ? [n('curves'), document.getElementById('parallel').dataset.lines] : null;")
        start = time.perf_counter()
        driver.get(url)
        shown = WebDriverWait(driver, 120, poll_frequency=0.02).until(lambda d: d.execute_script(drawn))
        return time.perf_counter() - start, shown
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tunerun", required=True)
    parser.add_argument("--trials", type=int, default=10000)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--keep", help="build the experiment here and keep it")
    args = parser.parse_args()
    runs = args.keep or tempfile.mkdtemp(prefix="tunerun_dashboard_bench_")
    exp = os.path.join(runs, "big")
    start = time.perf_counter()
    if not os.path.exists(exp):
        n = make_experiment(exp, args.trials, args.iterations)
        print(f"built {exp}: {args.trials} trials, {n} results in {time.perf_counter() - start:.1f} s")

    start = time.perf_counter()
    con = sqlite3.connect(f"file:{exp}/experiment.db?mode=ro", uri=True)
    rows = con.execute("SELECT * FROM all_results").fetchall()
    anchor = time.perf_counter() - start
    con.close()
    print(f"anchor: SELECT * FROM all_results, {len(rows)} rows: {anchor * 1000:.0f} ms")
    del rows

    server = subprocess.Popen([args.tunerun, "dashboard", runs, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        line = ""
        while "serving" not in line:
            line = server.stdout.readline()
            if not line:
                sys.exit("tunerun dashboard exited")
        port = int(re.search(r":(\d+)/", line).group(1))
        print(f"{'GET':<44} {'first byte':>11} {'whole':>9} {'bytes':>10} {'/anchor':>8}")
        paths = ["/", "/static/chart.js", "/api/exp/big/version", "/api/exp/big/summary", "/api/exp/big/trials",
                 "/api/exp/big/curves?metric=accuracy", "/api/exp/big/scheduler", "/api/exp/big/importance",
                 "/api/exp/big/trial/big_00042"]
        for label in ("cold", "warm"):
            for path in paths:
                first, total, size = get(port, path)
                print(f"{label + ' ' + path:<44} {first * 1000:>8.1f} ms {total * 1000:>6.1f} ms {size:>10}"
                      f" {first / anchor:>8.3f}")
        usable, shown = page_usable(f"http://127.0.0.1:{port}/#/exp/big")
        print(f"page usable in Chromium (table, {shown[0]} curves, {shown[1]} parallel-coordinate lines drawn):"
              f" {usable * 1000:.0f} ms, {usable / anchor:.3f} of the anchor")
    finally:
        server.terminate()
        server.wait()
        if not args.keep:
            shutil.rmtree(runs, ignore_errors=True)


if __name__ == "__main__":
    main()
