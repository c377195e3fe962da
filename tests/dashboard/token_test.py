"""The dashboard's token never shows on a command line.

`tunerun dashboard` takes it from TUNERUN_DASHBOARD_TOKEN or from a file only
its owner can read, and hands it to the server program in its environment:
the server's /proc/PID/cmdline, which every user can read, never holds it.
Usage: token_test.py --tunerun build/tunerun
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

ARGS = None


def start(args, env):
    server = subprocess.Popen([ARGS.tunerun, "dashboard", *args, "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = ""
    while "serving" not in line:
        line = server.stdout.readline()
        if not line:
            raise AssertionError(f"tunerun dashboard exited: {server.stderr.read()}")
    return server, re.search(r"http://([^/\s]+)/", line).group(1)


def status(host, headers):
    request = urllib.request.Request(f"http://{host}/api/experiments", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as e:
        return e.code


class TokenTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="tunerun_token_")
        self.runs = os.path.join(self.tmp.name, "runs")
        os.makedirs(self.runs)
        self.env = {k: v for k, v in os.environ.items() if k != "TUNERUN_DASHBOARD_TOKEN"}

    def tearDown(self):
        self.tmp.cleanup()

    def serve_and_check(self, args, env, token):
        server, host = start(args, env)
        try:
            with open(f"/proc/{server.pid}/cmdline", "rb") as f:
                cmdline = f.read().decode(errors="replace")
            self.assertIn("tunerun-dashboard", cmdline)  # the server program itself
            self.assertNotIn(token, cmdline)
            self.assertEqual(status(host, {}), 403)
            self.assertEqual(status(host, {"Authorization": f"token {token}"}), 200)
        finally:
            server.terminate()
            server.wait(timeout=10)

    def test_token_from_the_environment(self):
        env = dict(self.env, TUNERUN_DASHBOARD_TOKEN="env-s3cret")
        self.serve_and_check([self.runs], env, "env-s3cret")

    def test_token_from_a_private_file(self):
        path = os.path.join(self.tmp.name, "token")
        with open(path, "w") as f:
            f.write("file-s3cret\n")
        os.chmod(path, 0o600)
        self.serve_and_check([self.runs, "--token-file", path], self.env, "file-s3cret")

    def test_a_token_given_on_the_command_line_wins_over_the_environment(self):
        path = os.path.join(self.tmp.name, "token")
        with open(path, "w") as f:
            f.write("file-s3cret\n")
        os.chmod(path, 0o600)
        env = dict(self.env, TUNERUN_DASHBOARD_TOKEN="env-s3cret")
        self.serve_and_check([self.runs, "--token-file", path], env, "file-s3cret")

    def test_both_token_flags_are_refused(self):
        path = os.path.join(self.tmp.name, "token")
        with open(path, "w") as f:
            f.write("file-s3cret\n")
        os.chmod(path, 0o600)
        run = subprocess.run([ARGS.tunerun, "dashboard", self.runs, "--token-file", path,
                              "--token", "argv-s3cret"],
                             capture_output=True, text=True, env=self.env, timeout=30)
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("--token or --token-file, not both", run.stderr)

    def test_a_token_file_others_can_read_is_refused(self):
        path = os.path.join(self.tmp.name, "token")
        with open(path, "w") as f:
            f.write("s3cret\n")
        os.chmod(path, 0o644)
        run = subprocess.run([ARGS.tunerun, "dashboard", self.runs, "--token-file", path],
                             capture_output=True, text=True, env=self.env, timeout=30)
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("chmod 600", run.stderr)
        self.assertIn("--token-file", run.stderr)

    def test_a_token_on_the_command_line_warns_and_stays_off_the_servers(self):
        server = subprocess.Popen([ARGS.tunerun, "dashboard", self.runs, "--port", "0",
                                   "--token", "argv-s3cret"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=self.env)
        try:
            line = ""
            while "serving" not in line:
                line = server.stdout.readline()
                self.assertTrue(line, "tunerun dashboard exited before serving")
            with open(f"/proc/{server.pid}/cmdline", "rb") as f:
                self.assertNotIn(b"argv-s3cret", f.read())
        finally:
            server.terminate()
            server.wait(timeout=10)
        self.assertIn("readable by every user", server.stderr.read())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tunerun", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
