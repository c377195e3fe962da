#!/usr/bin/python3
"""How fast the dashboard serves a large experiment: 10,000 trials and
1,000,000 results in one synthetic experiment.db (the real schema, written
with SQL in one transaction), served by the real `tunerun dashboard`; or,
with --experiment, a copy of an experiment already written (the 100,000
trials of `build/benchmarks/scale --keep --dir DIR`: DIR/runs/scale).

Prints, for the experiment page:
  - time to first byte of the page, and of each JSON endpoint it asks for
    (cold: the first request computes; warm: the answer cached by fingerprint),
    with the size sent;
  - "page usable" in headless Chromium: from navigation until the trial table,
    the learning curves and the parallel coordinates are drawn;
and, as the anchor, reading every result row the way a page that shipped all
of them would have to (SELECT * FROM all_results), with each number's ratio
to it.

With --experiment it prints, for that experiment:
  - "page usable" in headless Chromium, as above;
  - the bytes a live page fetches for one change (a result written to a
    RUNNING trial of the copy), the version polls left out: the median of 3;
  - the server's resident memory (VmRSS) after the page and after the whole
    trial list was asked for, against its documented answer cache bound;
  - `tunerun report` of it: wall time, peak RSS (/usr/bin/time -v), the
    file's size, and "report usable" in Chromium from file://.

Usage: /usr/bin/python3 benchmarks/dashboard_load.py --tunerun build/tunerun
       [--trials 10000 --iterations 100] [--keep DIR]
       [--experiment DIR/runs/scale]
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


# The page is usable when the trial table, the learning curves and the
# parallel coordinates are drawn: [curves drawn, parallel-coordinate lines].
DRAWN = ("const n = (id) => { const c = window.Chart && Chart.getChart(document.getElementById(id));"
         " return c ? c.data.datasets.filter((d) => d.trial).length : 0; };"
         " const p = document.getElementById('parallel');"
         " return document.querySelectorAll('#trials tbody tr').length > 0 && n('curves') > 0"
         " && p && p.dataset.lines ? [n('curves'), p.dataset.lines] : null;")


def make_driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,2600", "--allow-file-access-from-files"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def timed_load(driver, url, timeout=120):
    """Seconds from navigation until DRAWN holds, and what it returned; (None, None) past timeout."""
    from selenium.webdriver.support.ui import WebDriverWait
    start = time.perf_counter()
    driver.get(url)
    try:
        shown = WebDriverWait(driver, timeout, poll_frequency=0.02).until(lambda d: d.execute_script(DRAWN))
    except Exception:  # a timeout, or a tab that crashed on a file too large
        return None, None
    return time.perf_counter() - start, shown


def page_usable(url):
    driver = make_driver()
    try:
        driver.get(url.split("#")[0])  # warm the browser itself (process start, Chart.js parse)
        return timed_load(driver, url)
    finally:
        driver.quit()


def copy_experiment(source, runs):
    """experiment.db of `source` copied (its write-ahead log checkpointed in the copy) under runs/NAME."""
    name = os.path.basename(os.path.normpath(source))
    exp = os.path.join(runs, name)
    os.makedirs(exp)
    src = sqlite3.connect(f"file:{source}/experiment.db?mode=ro", uri=True)
    dst = sqlite3.connect(os.path.join(exp, "experiment.db"))
    src.backup(dst)
    src.close()
    dst.execute("PRAGMA journal_mode=WAL")
    dst.close()
    return name, exp


def add_result(db):
    """One result more for a RUNNING trial, as the store writes one; the new count of results."""
    con = sqlite3.connect(db, timeout=30)
    metric = con.execute("SELECT metric FROM experiment").fetchone()[0]
    trial, k = con.execute("SELECT t.trial_id, IFNULL(l.training_iteration, 0) FROM trials AS t"
                           " LEFT JOIN trial_last_result AS l USING (trial_id) WHERE t.status = 'RUNNING'"
                           " ORDER BY t.trial_index LIMIT 1").fetchone()
    value = 0.5 + random.random() * 0.1
    with con:
        con.execute("INSERT INTO results (trial_id, training_iteration, timestamp, time_this_iter_s,"
                    " time_total_s, metrics) VALUES (?, ?, ?, 0.5, ?, json_object(?, ?))",
                    (trial, k + 1, time.time(), (k + 1) * 0.5, metric, value))
        con.execute("INSERT INTO trial_last_result (trial_id, training_iteration, metric_value, feasible,"
                    " num_results) VALUES (?, ?, ?, 1, 1) ON CONFLICT (trial_id) DO UPDATE SET"
                    " training_iteration = excluded.training_iteration, metric_value ="
                    " excluded.metric_value, num_results = num_results + 1", (trial, k + 1, value))
        con.execute("UPDATE trials SET last_iteration = ? WHERE trial_id = ?", (k + 1, trial))
    n = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    con.close()
    return n


def live_update_bytes(driver, db):
    """Bytes the page fetched (transferSize, the version polls left out) until it shows one new result."""
    from selenium.webdriver.support.ui import WebDriverWait
    driver.execute_script("performance.setResourceTimingBufferSize(100000); performance.clearResourceTimings();")
    count = add_result(db)
    WebDriverWait(driver, 120, poll_frequency=0.02).until(
        lambda d: d.execute_script("const e = document.getElementById('num-results');"
                                   " return e && Number(e.textContent);") >= count)
    time.sleep(1.5)  # the answers the view asks for after drawing (importance...)
    return driver.execute_script(
        "return performance.getEntriesByType('resource').filter((e) => !e.name.includes('/version'))"
        ".reduce((sum, e) => sum + e.transferSize, 0);")


def rss_kb(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def measure_experiment(args):
    runs = args.keep or tempfile.mkdtemp(prefix="tunerun_dashboard_bench_")
    os.makedirs(runs, exist_ok=True)
    start = time.perf_counter()
    name, exp = copy_experiment(args.experiment, runs)
    db = os.path.join(exp, "experiment.db")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    trials, results = con.execute("SELECT (SELECT COUNT(*) FROM trials), (SELECT COUNT(*) FROM results)").fetchone()
    con.close()
    print(f"copied {args.experiment} to {exp}: {trials} trials, {results} results in"
          f" {time.perf_counter() - start:.1f} s")
    server = subprocess.Popen([args.tunerun, "dashboard", runs, "--port", "0"], stdout=subprocess.PIPE, text=True)
    driver = make_driver()
    try:
        line = ""
        while "serving" not in line:
            line = server.stdout.readline()
            if not line:
                sys.exit("tunerun dashboard exited")
        url = re.search(r"(http://\S+)", line).group(1)
        idle = rss_kb(server.pid)
        driver.get(url)  # warm the browser itself (process start, Chart.js parse)
        for label in ("cold", "warm"):
            usable, shown = timed_load(driver, f"{url}#/exp/{name}")
            print(f"page usable in Chromium, {label} (table, {shown and shown[0]} curves,"
                  f" {shown and shown[1]} parallel-coordinate lines drawn): "
                  + (f"{usable * 1000:.0f} ms" if usable else "not within 120 s"))
            driver.get("about:blank")
        timed_load(driver, f"{url}#/exp/{name}")
        sizes = sorted(live_update_bytes(driver, db) for _ in range(3))
        print(f"bytes fetched for one new result on the live page (3 times): {sizes} (median {sizes[1]:,})")
        page_rss = rss_kb(server.pid)
        get(int(re.search(r":(\d+)/", url).group(1)), f"/api/exp/{name}/trials")
        whole_rss = rss_kb(server.pid)
        print(f"server VmRSS: {idle / 1024:.0f} MB idle, {page_rss / 1024:.0f} MB after the page,"
              f" {whole_rss / 1024:.0f} MB after the whole trial list (VmHWM {rss_kb(server.pid, 'VmHWM') / 1024:.0f}"
              " MB); the answer cache is documented at 64 MiB")
    finally:
        server.terminate()
        server.wait()

    out = os.path.join(runs, "report.html")
    timing = subprocess.run(["/usr/bin/time", "-v", args.tunerun, "report", exp, "-o", out],
                            capture_output=True, text=True)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", timing.stderr).group(1)
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing.stderr).group(1))
    if timing.returncode != 0:
        print(f"tunerun report failed ({timing.returncode}): {timing.stdout}{timing.stderr[-2000:]}")
    else:
        print(f"tunerun report: wall {wall}, peak RSS {peak / 1024:.0f} MB, file {os.path.getsize(out) / 1e6:.1f} MB")
        try:
            usable, shown = timed_load(driver, "file://" + out)
            print("report usable in Chromium from file:// "
                  + (f"(table, {shown[0]} curves, {shown[1]} parallel-coordinate lines drawn): {usable * 1000:.0f} ms"
                     if usable else "not within 120 s"))
        finally:
            driver.quit()
    if not args.keep:
        shutil.rmtree(runs, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tunerun", required=True)
    parser.add_argument("--trials", type=int, default=10000)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--keep", help="build the experiment here and keep it")
    parser.add_argument("--experiment", help="measure a copy of this experiment folder instead")
    args = parser.parse_args()
    if args.experiment:
        return measure_experiment(args)
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
        if usable is None:
            print("page usable in Chromium: not within 120 s")
        else:
            print(f"page usable in Chromium (table, {shown[0]} curves, {shown[1]} parallel-coordinate lines"
                  f" drawn): {usable * 1000:.0f} ms, {usable / anchor:.3f} of the anchor")
    finally:
        server.terminate()
        server.wait()
        if not args.keep:
            shutil.rmtree(runs, ignore_errors=True)


if __name__ == "__main__":
    main()
