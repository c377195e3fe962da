#!/usr/bin/python3
"""The dashboard and the report in a real browser: headless Chromium driven
over WebDriver (Debian's chromium, chromium-driver and python3-selenium).

Runs the real `tunerun` CLI: a finished ASHA sweep and a PBT sweep that keeps
running while the test watches the page; then `tunerun dashboard` on both and
`tunerun report` of each, opened from file://. Then one sweep per scheduler
(FIFO, asynchronous HyperBand, HyperBand, HyperBand for BOHB, median
stopping, PB2 and, with --pythonpath, a scheduler written in Python): each
one's API answers, report and page. Then a synthetic 2,500-trial experiment:
the charts' sample, the table paged, sorted and filtered by the server, the
bytes of a live change, and its report. Screenshots go to --out.

Usage: browser_test.py --tunerun build/tunerun --out build/dashboard_screenshots
                       [--pythonpath build/bindings]
A missing Chromium, chromedriver or Selenium fails the test: CI installs them
with scripts/install_deps.sh.
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as e:  # fail loudly: a skipped browser test hides a broken page
    sys.exit(f"browser_test: python3-selenium is missing ({e}); run scripts/install_deps.sh")

ARGS = None
ASHA_TOML = """
name = "asha"
metric = "accuracy"
mode = "max"
num_samples = 12
max_concurrent_trials = 2
seed = 3
[trainable]
builtin = "learning_curve"
[param_space]
ceiling = { uniform = [0.6, 0.95] }
speed = { loguniform = [0.05, 0.5] }
iterations = 9
[scheduler]
type = "asha"
max_t = 9
grace_period = 1
reduction_factor = 3
"""
# Slow trials (0.3 s an iteration) so the sweep is still running while the
# page is watched; PBT pauses every 4 iterations and exploits the best.
PBT_TOML = """
name = "pbt"
metric = "accuracy"
mode = "max"
num_samples = 4
max_concurrent_trials = 4
seed = 5
[trainable]
builtin = "learning_curve"
[param_space]
ceiling = 0.9
speed = { grid_search = [0.02, 0.05, 0.1, 0.3] }
iterations = 400
checkpoint_every = 2
sleep_s = 0.3
[scheduler]
type = "pbt"
time_attr = "training_iteration"
perturbation_interval = 4
hyperparam_mutations = { speed = [0.02, 0.05, 0.1, 0.2, 0.3] }
seed = 7
"""


def query(db, sql):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def start_dashboard(runs):
    """`tunerun dashboard runs --port 0`: the process and the URL it serves."""
    server = subprocess.Popen([ARGS.tunerun, "dashboard", runs, "--port", "0"],
                              stdout=subprocess.PIPE, text=True)
    line = ""
    while "serving" not in line:
        line = server.stdout.readline()
        assert line, "tunerun dashboard exited before serving"
    return server, re.search(r"(http://\S+)", line).group(1)


def make_driver():
    for tool in ("chromium", "chromedriver"):
        if not shutil.which(tool):
            sys.exit(f"browser_test: {tool} is missing; run scripts/install_deps.sh")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,2600", "--allow-file-access-from-files"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


class DashboardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tunerun_browser_")
        cls.runs = os.path.join(cls.tmp, "runs")
        os.makedirs(ARGS.out, exist_ok=True)
        for name, text in (("asha", ASHA_TOML), ("pbt", PBT_TOML)):
            with open(os.path.join(cls.tmp, name + ".toml"), "w") as f:
                f.write(f'storage_path = "{cls.runs}"\n' + text)
        run = subprocess.run([ARGS.tunerun, "run", "-q", os.path.join(cls.tmp, "asha.toml")],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
        cls.pbt = subprocess.Popen([ARGS.tunerun, "run", "-q", os.path.join(cls.tmp, "pbt.toml")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.pbt_db = os.path.join(cls.runs, "pbt", "experiment.db")
        deadline = time.time() + 120
        while True:  # until PBT has reported and exploited
            try:
                if query(cls.pbt_db, "SELECT COUNT(*) FROM exploits")[0][0] > 0:
                    break
            except sqlite3.Error:
                pass
            assert time.time() < deadline, "the PBT sweep never exploited within 120 s"
            time.sleep(0.5)
        cls.server, cls.url = start_dashboard(cls.runs)
        cls.driver = make_driver()

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        for p in (cls.server, cls.pbt):
            p.terminate()
            p.wait(timeout=60)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def wait(self, condition, timeout=20):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda d: condition())
        except Exception:
            self.shot("failed_" + self.id().split(".")[-1])
            logs = self.driver.get_log("browser")
            raise AssertionError(f"timed out at {self.driver.current_url}; browser log: {logs}")

    def js(self, script):
        return self.driver.execute_script(script)

    def parallel_lines(self):
        return int(self.js("const c = document.getElementById('parallel'); return c ? c.dataset.lines || -1 : -1;"))

    def datasets(self, canvas):
        return self.js(f"const c = Chart.getChart(document.getElementById('{canvas}'));"
                       " return c ? c.data.datasets.filter((d) => d.trial).length : -1;")

    def text(self, element_id):
        """An element's text, read in one script: a live page redraws between two WebDriver calls."""
        return self.js(f"const e = document.getElementById('{element_id}'); return e ? e.textContent : '';")

    def count(self, selector):
        return self.js(f"return document.querySelectorAll('{selector}').length;")

    def console_errors(self):
        return [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]

    def shot(self, name):
        self.driver.save_screenshot(os.path.join(ARGS.out, name + ".png"))

    def check_experiment_page(self, name, db, prefix):
        trials = query(db, "SELECT trial_id FROM trials ORDER BY trial_index")
        n = len(trials)
        self.wait(lambda: self.count("#trials tbody tr") == n)
        self.wait(lambda: self.datasets("curves") == n and self.parallel_lines() == n)
        ids = self.js("return [...document.querySelectorAll('#trials tbody tr')].map(r => r.dataset.trial);")
        self.assertEqual(sorted(ids), sorted(t[0] for t in trials))
        self.shot(f"{prefix}_{name}_experiment")
        # A running sweep redraws the table under the cursor, at every result:
        # on a loaded machine a WebDriver round trip can take longer than that.
        deadline = time.time() + 30
        while True:
            try:
                row = self.driver.find_elements(By.CSS_SELECTOR, "#trials tbody tr")[1]
                trial_id = row.get_attribute("data-trial")
                row.click()
                break
            except StaleElementReferenceException:
                if time.time() > deadline:
                    self.fail("the trial table kept changing under every click for 30 s")
                time.sleep(0.05)
        self.wait(lambda: "/trial/" in self.driver.current_url)
        self.wait(lambda: self.driver.find_elements(By.ID, "trial-config"))
        self.wait(lambda: self.count("#trial-results tbody tr") > 0)
        self.assertIn(trial_id, self.js("return document.querySelector('h2').textContent;"))
        self.shot(f"{prefix}_{name}_trial")
        self.assertEqual(self.console_errors(), [])

    def test_1_experiments_list(self):
        self.driver.get(self.url)
        self.wait(lambda: self.count("#experiments tbody tr") == 2)
        text = self.text("experiments")
        self.assertIn("asha", text)
        self.assertIn("RUNNING", text)
        self.shot("live_experiments")
        self.assertEqual(self.console_errors(), [])

    def test_2_finished_asha(self):
        self.driver.get(self.url + "#/exp/asha")
        db = os.path.join(self.runs, "asha", "experiment.db")
        self.check_experiment_page("asha", db, "live")
        self.driver.get(self.url + "#/exp/asha")
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#asha-table tbody tr"))
        stopped = query(db, "SELECT COUNT(*) FROM trials WHERE status_reason LIKE 'stopped by%'")[0][0]
        self.assertGreater(stopped, 0)
        self.wait(lambda: "stopped by scheduler AsyncHyperBand at rung" in self.text("trials"))

    def test_3_running_pbt_updates_live(self):
        self.assertIsNone(self.pbt.poll(), "the PBT sweep should still be running")
        self.driver.get(self.url + "#/exp/pbt")
        self.wait(lambda: self.text("num-results").isdigit())
        self.wait(lambda: self.driver.find_elements(By.ID, "pbt-lineage"))
        self.shot("live_pbt_experiment")
        # Three times: a result the page does not show yet reaches the database,
        # then the page, without a reload. The delays are printed, never asserted.
        delays = []
        for _ in range(3):
            shown = int(self.text("num-results"))
            count = shown
            deadline = time.time() + 30
            while count <= shown:
                self.assertLess(time.time(), deadline, "the PBT sweep reported nothing new for 30 s")
                time.sleep(0.02)
                count = query(self.pbt_db, "SELECT COUNT(*) FROM results")[0][0]
            written = time.time()
            self.wait(lambda: int(self.text("num-results")) >= count, timeout=10)
            delays.append(time.time() - written)
        print(f"new result on the page after {', '.join(f'{d:.2f}' for d in delays)} s", file=sys.stderr)
        self.check_experiment_page("pbt", self.pbt_db, "live")

    def test_4_reports_from_file(self):
        for name in ("asha", "pbt"):
            out = os.path.join(ARGS.out, f"{name}_report.html")
            run = subprocess.run([ARGS.tunerun, "report", os.path.join(self.runs, name), "-o", out],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.driver.get("file://" + out)
            self.wait(lambda: "#/exp/" in self.driver.current_url)
            # The report is a snapshot: it holds the trials as they were when it was written.
            data_trials = self.js(f"return window.TUNERUN_REPORT['summaries/{name}']"
                                  ".rows.map(t => t[0])")
            db = os.path.join(self.runs, name, "experiment.db")
            self.assertEqual(sorted(data_trials), sorted(t[0] for t in query(db, "SELECT trial_id FROM trials")))
            self.check_experiment_page(name, db, "report")

    def test_5_broken_database_shows_an_error(self):
        broken = os.path.join(self.runs, "broken")
        os.makedirs(broken, exist_ok=True)
        with open(os.path.join(broken, "experiment.db"), "w") as f:
            f.write("not a database " * 20)
        self.driver.get(self.url + "#/exp/broken")
        self.wait(lambda: self.driver.find_element(By.ID, "error").is_displayed())
        self.assertIn("experiment.db", self.driver.find_element(By.ID, "error").text)
        self.shot("live_broken")
        self.driver.get(self.url + "#/")
        self.wait(lambda: "broken" in self.text("experiments"))
        self.assertIsNone(self.server.poll(), "the server must survive a broken database")
        shutil.rmtree(broken)


LEARNING_CURVE = """
num_samples = 9
max_concurrent_trials = 3
seed = 4
[trainable]
builtin = "learning_curve"
[param_space]
ceiling = { uniform = [0.6, 0.95] }
speed = { loguniform = [0.05, 0.5] }
act = { choice = ["relu", "tanh", "gelu"] }
iterations = 9
checkpoint_every = 1
"""
# Every scheduler the project has, on small sweeps (FIFO: the quick-start
# quadratic, whose trials report once).
SCHEDULER_SWEEPS = {
    "fifo": """metric = "loss"
mode = "min"
max_concurrent_trials = 2
[trainable]
builtin = "quadratic"
[param_space]
x = { grid_search = [1, 2, 3, 4, 5] }
y = { grid_search = [-3, -1, 1] }
""",
    "async_hyperband": 'metric = "accuracy"\nmode = "max"\n' + LEARNING_CURVE + """
[scheduler]
type = "hyperband"
asynchronous = true
max_t = 9
reduction_factor = 3
""",
    "hyperband": 'metric = "accuracy"\nmode = "max"\n' + LEARNING_CURVE + """
[scheduler]
type = "hyperband"
max_t = 9
reduction_factor = 3
""",
    "hb_bohb": 'metric = "accuracy"\nmode = "max"\n' + LEARNING_CURVE + """
[search]
algorithm = "bohb"
[scheduler]
type = "hyperband"
for_bohb = true
max_t = 9
reduction_factor = 3
""",
    "median": 'metric = "accuracy"\nmode = "max"\n' + LEARNING_CURVE + """
[scheduler]
type = "median"
grace_period = 2
min_samples_required = 2
""",
    "pb2": 'metric = "accuracy"\nmode = "max"\n' + LEARNING_CURVE.replace(
        'speed = { loguniform = [0.05, 0.5] }', 'speed = { uniform = [0.05, 0.5] }') + """
[scheduler]
type = "pb2"
time_attr = "training_iteration"
perturbation_interval = 3
hyperparam_bounds = { speed = [0.05, 0.5] }
seed = 2
""",
}
# Several objectives: error = x^2 and cost = (x-1)^2 (x in [0, 1] is the
# front, x in (1, 2] dominated), x - 2 <= 0 the constraint (x > 2 infeasible);
# a third objective, x itself, for the parallel coordinates of three.
OBJECTIVES_COMMAND = ('command = ["/usr/bin/python3", "-c", "import json, sys; x = float(sys.argv[1]); '
                      "print('@tunerun ' + json.dumps(dict(error=x * x, cost=(x - 1) ** 2, "
                      'size=x, constraints=x - 2)))", "{x}"]')
for _name, _metrics in (("two_objectives", '["error", "cost"]'),
                        ("three_objectives", '["error", "cost", "size"]')):
    SCHEDULER_SWEEPS[_name] = f"""metric = {_metrics}
mode = "min"
[trainable]
{OBJECTIVES_COMMAND}
[param_space]
x = {{ grid_search = [0, 0.25, 0.5, 1, 1.5, 1.8, 2.4, 2.9] }}
"""
# Every trial fails after one result: nothing of it is a best.
SCHEDULER_SWEEPS["all_error"] = """metric = "loss"
mode = "min"
[trainable]
command = ["/usr/bin/python3", "-c", "import sys; print('@tunerun {{\\"loss\\": ' + sys.argv[1] + '}}', flush=True); sys.exit(3)", "{x}"]
[param_space]
x = { grid_search = [1, 2, 3] }
"""
SCHEDULER_SWEEPS["tpe"] = 'metric = "accuracy"\nmode = "max"\n' + LEARNING_CURVE + """
[search]
algorithm = "tpe"
"""
PYTHON_SCHEDULER = """
import sys
from tunerun import train, tune
from tunerun.tune.schedulers import TrialScheduler
import trainables

class StopAbove(TrialScheduler):
    def on_trial_result(self, tune_controller, trial, result):
        if result["training_iteration"] == 2 and result["loss"] > 2.5:
            return TrialScheduler.STOP
        return TrialScheduler.CONTINUE

tune.Tuner(trainables.stepper,
           param_space={"x": tune.grid_search([1, 2, 3, 4]), "steps": 4},
           tune_config=tune.TuneConfig(metric="loss", mode="min", scheduler=StopAbove()),
           run_config=train.RunConfig(name="python_scheduler", storage_path=sys.argv[1],
                                      verbose=0)).fit()
"""


class SchedulerPagesTest(DashboardTest):
    """Each scheduler's experiment: its API answers and report, and its page
    with every trial on the table, the curves, the parallel coordinates and
    every slice plot (a point per trial with the metric)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tunerun_schedulers_")
        cls.runs = os.path.join(cls.tmp, "runs")
        cls.names = []
        os.makedirs(ARGS.out, exist_ok=True)
        for name, text in SCHEDULER_SWEEPS.items():
            path = os.path.join(cls.tmp, name + ".toml")
            with open(path, "w") as f:
                f.write(f'name = "{name}"\nstorage_path = "{cls.runs}"\n' + text)
            run = subprocess.run([ARGS.tunerun, "run", "-q", path], capture_output=True,
                                 text=True, timeout=300)
            # A sweep whose every trial failed may say so in its exit status.
            assert run.returncode == 0 or name == "all_error", name + ": " + run.stdout + run.stderr
            cls.names.append(name)
        if ARGS.pythonpath:
            script = os.path.join(cls.tmp, "python_scheduler.py")
            with open(script, "w") as f:
                f.write(PYTHON_SCHEDULER)
            python_tests = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [os.path.abspath(ARGS.pythonpath), os.path.abspath(python_tests)]))
            run = subprocess.run([sys.executable, script, cls.runs], capture_output=True,
                                 text=True, timeout=300, env=env)
            assert run.returncode == 0, run.stdout + run.stderr
            cls.names.append("python_scheduler")
        else:
            print("browser_test: no --pythonpath, the Python scheduler is not tried", file=sys.stderr)
        cls.server, cls.url = start_dashboard(cls.runs)
        cls.driver = make_driver()
        cls.driver.set_window_size(1400, 4600)  # whole pages: these screenshots go to docs/

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.terminate()
        cls.server.wait(timeout=60)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def slice_points(self):
        return self.js("return [...document.querySelectorAll('#slices canvas')]"
                       ".map((c) => Number(c.dataset.points));")

    def check_page(self, name, prefix):
        db = os.path.join(self.runs, name, "experiment.db")
        n = query(db, "SELECT COUNT(*) FROM trials")[0][0]
        metric = query(db, "SELECT metric FROM experiment")[0][0]
        with_metric = query(db, "SELECT COUNT(*) FROM last_results WHERE metric_value IS NOT NULL")[0][0]
        self.wait(lambda: self.count("#trials tbody tr") == n)
        self.wait(lambda: self.datasets("curves") == n and self.parallel_lines() == n)
        # Every parameter has its slice plot, with a point for each trial that has the metric.
        self.wait(lambda: len(self.slice_points()) > 0 and
                  all(p == with_metric for p in self.slice_points()))
        self.assertFalse(self.driver.find_element(By.ID, "error").is_displayed())
        self.shot(f"{prefix}_{name}")
        self.assertEqual(self.console_errors(), [], name)
        return metric

    def test_1_every_scheduler_answers_and_draws(self):
        for name in self.names:
            with self.subTest(name):
                for what in ("summary", "trials", "scheduler", "curves", "importance"):
                    with urllib.request.urlopen(f"{self.url}api/exp/{name}/{what}") as res:
                        self.assertEqual(res.status, 200, f"{name}/{what}")
                self.driver.get(self.url + "#/exp/" + name)
                self.check_page(name, "scheduler")

    def test_2_every_scheduler_reports(self):
        for name in self.names:
            with self.subTest(name):
                out = os.path.join(ARGS.out, f"{name}_report.html")
                run = subprocess.run([ARGS.tunerun, "report", os.path.join(self.runs, name),
                                      "-o", out], capture_output=True, text=True, timeout=120)
                self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
                self.driver.get("file://" + out)
                self.wait(lambda: "#/exp/" in self.driver.current_url)
                self.check_page(name, "report")

    def test_3_single_results_are_points_and_reasons_are_the_schedulers(self):
        self.driver.get(self.url + "#/exp/fifo")
        self.wait(lambda: self.datasets("curves") == 15)
        radii = self.js("return Chart.getChart(document.getElementById('curves')).data.datasets"
                        ".filter((d) => d.trial).map((d) => d.pointRadius);")
        self.assertTrue(all(r > 0 for r in radii), radii)  # one result each: drawn as points
        db = os.path.join(self.runs, "hyperband", "experiment.db")
        cut = query(db, "SELECT COUNT(*) FROM trials WHERE status_reason LIKE '%ranked%'")[0][0]
        self.assertGreater(cut, 0)
        self.driver.get(self.url + "#/exp/hyperband")
        self.wait(lambda: "cut here" in self.text("hyperband-history"))
        self.wait(lambda: "ranked" in self.text("trials"))
        self.driver.get(self.url + "#/exp/async_hyperband")
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#asha-table tbody tr"))
        self.assertIn("stopped there", self.text("asha-table"))

    def test_5_the_pareto_front(self):
        for name in ("two_objectives", "three_objectives"):
            with self.subTest(name):
                db = os.path.join(self.runs, name, "experiment.db")
                front = query(db, "SELECT COUNT(*) FROM pareto_front WHERE rank = 0")[0][0]
                dominated = query(db, "SELECT COUNT(*) FROM pareto_front WHERE rank > 0")[0][0]
                infeasible = query(db, "SELECT COUNT(DISTINCT trial_id) FROM objective_values"
                                       " WHERE NOT feasible")[0][0]
                self.assertTrue(front > 0 and dominated > 0 and infeasible > 0,
                                (front, dominated, infeasible))
                self.driver.get(self.url + "#/exp/" + name)
                counts = ("const c = document.getElementById('front');"
                          " return c ? [c.dataset.front, c.dataset.dominated, c.dataset.infeasible]"
                          ".map(Number) : [];")
                self.wait(lambda: self.js(counts) == [front, dominated, infeasible])
                self.assertTrue(self.driver.find_element(By.ID, "front-section").is_displayed())
                # The hypervolume of the feasible trials, as computed here from the database.
                rows = query(db, "SELECT trial_id, value FROM objective_values WHERE feasible"
                                 " ORDER BY trial_index, position")
                points = {}
                for t, v in rows:
                    points.setdefault(t, []).append(v)
                want = hypervolume(list(points.values()))
                self.wait(lambda: self.js("return document.getElementById('hypervolume').dataset.final;") != "")
                final = float(self.js("return document.getElementById('hypervolume').dataset.final;"))
                self.assertAlmostEqual(final, want, places=9)
                self.assertGreater(want, 0)
                self.shot(f"front_{name}")
                self.assertEqual(self.console_errors(), [], name)
        # One objective: no front section.
        self.driver.get(self.url + "#/exp/hyperband")
        self.wait(lambda: self.count("#trials tbody tr") > 0)
        self.assertFalse(self.driver.find_element(By.ID, "front-section").is_displayed())

    def test_4_contour_distribution_brush_and_comparison(self):
        db = os.path.join(self.runs, "hyperband", "experiment.db")
        n = query(db, "SELECT COUNT(*) FROM trials")[0][0]
        with_metric = query(db, "SELECT COUNT(*) FROM last_results WHERE metric_value IS NOT NULL")[0][0]
        self.driver.get(self.url + "#/exp/hyperband")
        self.wait(lambda: self.count("#trials tbody tr") == n)
        points = "return Number(document.getElementById('{}').dataset.points);"
        self.wait(lambda: self.js(points.format("contour")) == with_metric)
        self.wait(lambda: self.js(points.format("edf")) == with_metric)
        # Drag along the metric's axis (the last one) over its upper half.
        canvas = self.driver.find_element(By.ID, "parallel")
        w, h = canvas.size["width"], canvas.size["height"]
        ActionChains(self.driver).move_to_element_with_offset(canvas, w // 2 - 60, -h // 2 + 12) \
            .click_and_hold().move_by_offset(0, h // 2 - 30).release().perform()
        inside = self.js("return document.getElementById('parallel').brushed();")
        self.assertTrue(inside is not None and 0 < len(inside) < n, inside)
        self.wait(lambda: self.count("#trials tbody tr") == len(inside))
        self.shot("brushed_hyperband")
        # Two ticked trials, compared.
        boxes = self.driver.find_elements(By.CSS_SELECTOR, "#trials tbody input[type=checkbox]")
        boxes[0].click()
        boxes[1].click()
        self.driver.find_element(By.CSS_SELECTOR, "#compare a").click()
        self.wait(lambda: "/compare/" in self.driver.current_url)
        self.wait(lambda: self.count("#compare-table thead th") == 3)
        self.wait(lambda: self.datasets("compare-curves") == 2)
        self.shot("compare_hyperband")
        self.assertEqual(self.console_errors(), [])

    def api(self, path):
        with urllib.request.urlopen(f"{self.url}api/{path}") as res:
            return json.load(res)

    def test_6_the_page_tells_the_truth(self):
        # Several objectives: each in the header, the list and the table, with its own best.
        self.driver.get(self.url + "#/exp/two_objectives")
        self.wait(lambda: "cost (min)" in self.text("objectives"))
        self.assertEqual(self.text("objectives"), "error (min), cost (min)")
        self.wait(lambda: self.count("#objective-bests li") == 2)
        heads = self.js("return [...document.querySelectorAll('#trials thead th')].map(h => h.textContent);")
        for column in ("error", "cost", "constraints", "feasible"):
            self.assertIn(column, heads)
        infeasible = query(os.path.join(self.runs, "two_objectives", "experiment.db"),
                           "SELECT COUNT(*) FROM last_results WHERE NOT feasible")[0][0]
        feasible_col = heads.index("feasible")
        cells = self.js(f"return [...document.querySelectorAll('#trials tbody tr')]"
                        f".map(r => r.children[{feasible_col}].textContent);")
        self.assertEqual(cells.count("no"), infeasible)
        # One chooser drives every chart: the history shows the second objective.
        Select = __import__("selenium.webdriver.support.ui", fromlist=["Select"]).Select
        Select(self.driver.find_element(By.ID, "metric")).select_by_value("cost")
        self.wait(lambda: self.js("const c = Chart.getChart(document.getElementById('history'));"
                                  " return c && c.options.scales.y.title.text;") == "cost")
        self.wait(lambda: self.js("return Chart.getChart(document.getElementById('slice-0'))"
                                  ".options.scales.y.title.text;") == "cost")
        self.shot("truth_two_objectives")
        self.driver.get(self.url + "#/")
        self.wait(lambda: "cost (min)" in self.text("experiments"))
        row = self.js("return document.querySelector('tr[data-experiment=two_objectives] td.objectives')"
                      ".textContent;")
        self.assertIn("error (min) 0", row)
        self.assertIn("cost (min) 0", row)
        # The 3-objective front's axes carry values.
        self.driver.get(self.url + "#/exp/three_objectives")
        self.wait(lambda: self.js("const c = document.getElementById('front');"
                                  " return c && c.dataset.axes ? JSON.parse(c.dataset.axes).length : 0;") == 3)
        labels = self.js("return Chart.getChart(document.getElementById('front')).data.labels;")
        self.assertTrue(all(any(part.startswith("best ") for part in l) for l in labels), labels)
        # Searchers and schedulers named.
        for name, searcher, scheduler in (("tpe", "TPE", "FIFO"), ("hb_bohb", "BOHB", "HyperBand for BOHB"),
                                          ("async_hyperband", "random search", "async HyperBand (ASHA)"),
                                          ("median", "random search", "median stopping")):
            self.driver.get(self.url + "#/exp/" + name)
            self.wait(lambda: self.text("searcher") == searcher)
            self.assertEqual(self.text("scheduler-name"), scheduler, name)
        self.wait(lambda: self.driver.find_elements(By.ID, "median-view"))
        # ASHA's top rung counts the trials that reached it.
        self.driver.get(self.url + "#/exp/async_hyperband")
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#asha-table tbody tr"))
        top = self.js("const rows = [...document.querySelectorAll('#asha-table tbody tr')];"
                      " return [...rows[rows.length - 1].children].map(c => c.textContent);")
        reached = query(os.path.join(self.runs, "async_hyperband", "experiment.db"),
                        "SELECT COUNT(*) FROM trial_last_result WHERE training_iteration >= 9")[0][0]
        self.assertEqual((top[3], top[4]), (str(reached), "none: trials end here"))
        # PB2's mutations are from the donor's config at the time.
        db = os.path.join(self.runs, "pb2", "experiment.db")
        rows = query(db, "SELECT trial_id, donor_id, old_config, new_config FROM exploits ORDER BY id")
        self.assertGreater(len(rows), 0, "the PB2 sweep never exploited: no mutation to check")
        configs = {t: json.loads(c) for t, c in query(db, "SELECT trial_id, config FROM trials")}
        firsts = {}
        for t, d, old, new in rows:
            firsts.setdefault(t, json.loads(old))
        now = dict(firsts)
        mutations = self.api("exp/pb2/scheduler")["exploits"]
        self.assertEqual(len(mutations), len(rows))
        for (t, d, old, new), shown in zip(rows, mutations):
            donor = now.get(d, configs[d])
            for key, (before, after) in shown["mutation"].items():
                self.assertEqual(before, donor.get(key), (t, d, key))
            now[t] = json.loads(new)
        # Failed trials: never best, drawn apart.
        db = os.path.join(self.runs, "all_error", "experiment.db")
        n = query(db, "SELECT COUNT(*) FROM trials WHERE status = 'ERROR'")[0][0]
        self.assertEqual(n, 3)
        self.driver.get(self.url + "#/exp/all_error")
        self.wait(lambda: self.count("#trials tbody tr") == n)
        self.wait(lambda: self.js("return document.getElementById('history').dataset.failed;") == str(n))
        self.assertEqual(self.js("return document.getElementById('history').dataset.best;"), "")
        self.assertEqual(self.js("return document.getElementById('edf').dataset.points;"), "0")
        drawn = self.js("return Chart.getChart(document.getElementById('curves')).data.datasets"
                        ".filter(d => d.trial).map(d => [d.failed, d.borderWidth]);")
        self.assertEqual(drawn, [[True, 1.2]] * n)
        self.assertIn("no best trial", self.text("overview"))
        self.shot("truth_all_error")
        # A trial with one result: its charts are points.
        self.driver.get(self.url + "#/exp/fifo/trial/fifo_00000")
        self.wait(lambda: self.js("const c = Chart.getChart(document.getElementById('trial-metric-0'));"
                                  " return c ? c.data.datasets[0].pointRadius : -1;") > 0)
        # The timeline has a bar per trial; the rank plot ranks those that did not fail.
        self.driver.get(self.url + "#/exp/hyperband")
        n = query(os.path.join(self.runs, "hyperband", "experiment.db"), "SELECT COUNT(*) FROM trials")[0][0]
        self.wait(lambda: sum(json.loads(self.js(
            "const c = document.getElementById('timeline'); return c && c.dataset.bars || '{}';"))
            .values()) == n)
        self.wait(lambda: self.js("const r = document.getElementById('rank');"
                                  " return r && r.parentNode.dataset.points;") == str(n))
        # Importance: the forest's mean decrease in impurity and fANOVA, as the API answers.
        imp = self.api("exp/hyperband/importance?metric=accuracy")
        self.assertEqual(len(imp["fanova"]), len(imp["params"]))
        self.assertAlmostEqual(sum(p["importance"] for p in imp["fanova"]), 1.0, places=6)
        self.wait(lambda: self.js("const c = Chart.getChart(document.getElementById('importance'));"
                                  " return c ? c.data.datasets.map(d => d.label) : [];")
                  == ["mean decrease in impurity", "fANOVA"])
        drawn = self.js("const c = Chart.getChart(document.getElementById('importance'));"
                        " return Object.fromEntries(c.data.labels.map((l, i) => [l, c.data.datasets[1].data[i]]));")
        self.assertEqual(drawn, {p["name"]: p["importance"] for p in imp["fanova"]})
        # HyperBand pauses trials at its milestones: each pause is drawn over its trial's bar.
        pauses = query(os.path.join(self.runs, "hyperband", "experiment.db"),
                       "SELECT COUNT(*) FROM trial_events WHERE to_status = 'PAUSED'"
                       " AND from_status IS NOT 'PAUSED'")[0][0]
        self.assertGreater(pauses, 0)
        self.wait(lambda: self.js("return document.getElementById('timeline').dataset.pauses;") == str(pauses))
        for element in ("timeline-holder", "rank-holder"):
            self.driver.find_element(By.ID, element).screenshot(os.path.join(ARGS.out, element + ".png"))
        self.assertEqual(self.console_errors(), [])

    # The parent's tests need its own sweeps.
    test_1_experiments_list = test_2_finished_asha = test_3_running_pbt_updates_live = None
    test_4_reports_from_file = test_5_broken_database_shows_an_error = None


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def hypervolume(points):
    """The volume the points (all objectives minimised) dominate up to the
    page's reference point: each objective's worst value plus a tenth of its
    range; by inclusion-exclusion over the boxes (a handful of points)."""
    import itertools
    d = len(points[0])
    ref = []
    for k in range(d):
        lo, hi = min(p[k] for p in points), max(p[k] for p in points)
        ref.append(hi + 0.1 * ((hi - lo) or abs(hi) or 1))
    total = 0.0
    for size in range(1, len(points) + 1):
        for subset in itertools.combinations(points, size):
            corner = [max(p[k] for p in subset) for k in range(d)]
            volume = 1.0
            for k in range(d):
                volume *= max(0.0, ref[k] - corner[k])
            total += (-1) ** (size + 1) * volume
    return total


def make_large_experiment(path, trials, iterations, running):
    """A synthetic experiment.db (the real schema, written with SQL): `trials`
    trials maximising accuracy, the last `running` of them RUNNING."""
    os.makedirs(path)
    con = sqlite3.connect(os.path.join(path, "experiment.db"))
    con.execute("PRAGMA journal_mode=WAL")
    with open(os.path.join(ROOT, "storage", "schema.sql")) as f:
        con.executescript(f.read())
    sweep = {"sweep": {"param_space": {"lr": {"loguniform": [1e-4, 1e-1]}, "ceiling": {"uniform": [0.6, 0.95]}},
                       "scheduler": {"type": "fifo"}}}
    con.execute("BEGIN")
    con.execute("INSERT INTO experiment VALUES (1, 'large', 'accuracy', 'max', json(?), 1000, 'RUNNING', 9000)",
                (json.dumps(sweep),))
    import random
    rng = random.Random(1)
    rows = [(f"large_{i:05d}", i, 10 ** rng.uniform(-4, -1), rng.uniform(0.6, 0.95),
             "RUNNING" if i >= trials - running else "TERMINATED") for i in range(trials)]
    con.executemany(
        "INSERT INTO trials (trial_id, trial_index, config, status, status_reason, trial_dir, created_at,"
        " started_at, finished_at, last_iteration) VALUES (?1, ?2, json_object('lr', ?3, 'ceiling', ?4), ?5,"
        " 'done', '', 1000 + ?2, 1000 + ?2, CASE WHEN ?5 = 'RUNNING' THEN NULL ELSE 2000 + ?2 END, "
        + str(iterations) + ")", rows)
    con.execute("INSERT INTO trial_events (trial_id, at, from_status, to_status, reason)"
                " SELECT trial_id, created_at, NULL, 'PENDING', 'created' FROM trials")
    con.execute(f"""
        WITH RECURSIVE it(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM it WHERE k < {iterations}),
        t AS (SELECT trial_id, trial_index, json_extract(config, '$.ceiling') AS c,
                     json_extract(config, '$.lr') * 100 AS s FROM trials)
        INSERT INTO results (trial_id, training_iteration, timestamp, time_this_iter_s, time_total_s, metrics)
        SELECT trial_id, k, 1000 + trial_index + k * 0.1, 0.1, k * 0.1,
               json_object('accuracy', c * (1 - 1.0 / (1 + k * s)))
        FROM t, it ORDER BY trial_index, k""")
    con.execute("COMMIT")
    with open(os.path.join(ROOT, "storage", "schema.sql")) as f:  # fills trial_last_result
        con.executescript(f.read())
    con.close()


class LargeExperimentTest(DashboardTest):
    """2,500 trials, more than the charts draw: the charts draw a sample, the
    table pages, sorts and filters through the server, a live page fetches
    only what changed, and the report holds every trial's summary."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tunerun_large_")
        cls.runs = os.path.join(cls.tmp, "runs")
        cls.db = os.path.join(cls.runs, "large", "experiment.db")
        make_large_experiment(os.path.join(cls.runs, "large"), 2500, 10, 20)
        cls.server, cls.url = start_dashboard(cls.runs)
        cls.driver = make_driver()

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.terminate()
        cls.server.wait(timeout=60)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def api(self, path):
        with urllib.request.urlopen(f"{self.url}api/{path}") as res:
            return json.load(res)

    def pager(self):
        return self.js("const p = document.querySelector('.pager'); return p ? p.textContent : '';")

    def first_row(self):
        return self.js("const r = document.querySelector('#trials tbody tr'); return r && r.dataset.trial;")

    def test_1_sample_paged_table_and_live_changes(self):
        sample = self.api("exp/large/sample")
        self.assertEqual(sample["total"], 2500)
        drawn = len(sample["trials"])
        self.assertLess(drawn, 2500)
        self.driver.get(self.url + "#/exp/large")
        self.wait(lambda: self.parallel_lines() == drawn)
        self.assertIn(f"draw {drawn} of the 2500 trials", self.text("sample-note"))
        self.wait(lambda: self.count("#trials tbody tr") == 100)
        self.assertIn("2500 of 2500 trials", self.pager())
        # Sorted by the server over every trial: twice on accuracy is highest first.
        best = query(self.db, "SELECT trial_id FROM last_results ORDER BY metric_value DESC LIMIT 1")[0][0]
        worst = query(self.db, "SELECT trial_id FROM last_results ORDER BY metric_value LIMIT 1")[0][0]
        header = [h for h in self.driver.find_elements(By.CSS_SELECTOR, "#trials thead th")
                  if h.text == "accuracy"][0]
        header.click()
        self.wait(lambda: self.first_row() == worst)
        self.driver.find_elements(By.XPATH, "//table[@id='trials']//th[text()='accuracy']")[0].click()
        self.wait(lambda: self.first_row() == best)
        # Filtered by the server: the 10 ids holding "large_0123".
        self.driver.find_element(By.ID, "filter").send_keys("large_0123")
        self.wait(lambda: "10 of 2500 trials" in self.pager())
        self.assertEqual(self.count("#trials tbody tr"), 10)
        self.shot("large_experiment")
        # One new result: the page shows it, fetching only what changed.
        self.js("performance.setResourceTimingBufferSize(10000); performance.clearResourceTimings();")
        trial, k = query(self.db, "SELECT t.trial_id, l.training_iteration FROM trials AS t JOIN"
                                  " trial_last_result AS l USING (trial_id) WHERE t.status = 'RUNNING'"
                                  " ORDER BY t.trial_index DESC LIMIT 1")[0]
        con = sqlite3.connect(self.db, timeout=10)
        with con:
            con.execute("INSERT INTO results (trial_id, training_iteration, timestamp, time_total_s, metrics)"
                        " VALUES (?, ?, 3000, 1, json_object('accuracy', 0.5))", (trial, k + 1))
            con.execute("UPDATE trial_last_result SET training_iteration = ?, metric_value = 0.5,"
                        " num_results = num_results + 1 WHERE trial_id = ?", (k + 1, trial))
        con.close()
        results = query(self.db, "SELECT COUNT(*) FROM results")[0][0]
        self.wait(lambda: self.text("num-results") == str(results))
        time.sleep(1)
        fetched = self.js("return performance.getEntriesByType('resource')"
                          ".filter((e) => !e.name.includes('/version')).map((e) => [e.name, e.transferSize]);")
        total = sum(size for _, size in fetched)
        whole = len(json.dumps(sample))
        print(f"one new result: {total} bytes fetched, the charts' whole sample is {whole}", file=sys.stderr)
        self.assertLess(total, whole / 10, fetched)
        self.assertTrue(any("since=" in name for name, _ in fetched), fetched)
        self.assertEqual(self.console_errors(), [])

    def test_2_report_holds_every_summary(self):
        out = os.path.join(ARGS.out, "large_report.html")
        run = subprocess.run([ARGS.tunerun, "report", os.path.join(self.runs, "large"), "-o", out],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.driver.get("file://" + out)
        self.wait(lambda: self.count("#trials tbody tr") == 100)
        self.assertIn("of 2500 trials", self.pager())
        self.assertIn("from the charts all but about 2000 trials", self.text("report-note"))
        # Every trial is in the table: filtered in the page, the last one is found.
        self.driver.find_element(By.ID, "filter").send_keys("large_02499")
        self.wait(lambda: self.count("#trials tbody tr") == 1)
        self.assertEqual(self.first_row(), "large_02499")
        self.assertEqual(self.console_errors(), [])

    test_1_experiments_list = test_2_finished_asha = test_3_running_pbt_updates_live = None
    test_4_reports_from_file = test_5_broken_database_shows_an_error = None


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tunerun", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pythonpath", help="build/bindings: also try a Python scheduler")
    ARGS, rest = parser.parse_known_args()
    ARGS.out = os.path.abspath(ARGS.out)
    unittest.main(argv=[sys.argv[0], "-v"] + rest)
